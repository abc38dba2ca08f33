// Package openai is the llm.Provider for OpenAI and every server that speaks
// its Chat Completions protocol: OpenRouter, PayPerQ, LM Studio, vLLM,
// llama.cpp and gateways. (Gemini and Ollama have native adapters in
// session/llm/gemini and session/llm/ollama.) It uses
// the official SDK (github.com/openai/openai-go/v3) with its retries and
// environment defaults switched off, so the retry policy and the keys sent
// are ours (see session/llm/internal/call).
//
// OpenAI models served only through the Responses API (see UsesResponses)
// are streamed through it; everything else uses Chat Completions.
package openai

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/internal/call"
)

// Flavor is the dialect of an OpenAI-style server; it selects the option
// mapping and which reasoning fields to expect.
type Flavor int

// Flavors.
const (
	FlavorOpenAI     Flavor = iota // api.openai.com
	FlavorOpenRouter               // openrouter.ai
	FlavorCompatible               // any other compatible server
	FlavorPayPerQ                  // api.ppq.ai
)

// Default endpoints.
const (
	DefaultBaseURL    = "https://api.openai.com/v1"
	OpenRouterBaseURL = "https://openrouter.ai/api/v1"
	PayPerQBaseURL    = "https://api.ppq.ai/v1"
)

// PublicCatalog reports whether the flavor's models endpoint is public
// (OpenRouter's /api/v1/models, PayPerQ's /v1/models): it is asked without
// the key, so the list works before one is set and never spends it.
func PublicCatalog(f Flavor) bool { return f == FlavorOpenRouter || f == FlavorPayPerQ }

// Config configures one provider.
type Config struct {
	// Name is the provider's name in model ids and messages ("openai",
	// "lmstudio").
	Name   string
	Flavor Flavor
	// BaseURL is the API root, e.g. https://api.openai.com/v1. Empty means
	// DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token when non-empty. Never logged.
	APIKey string
	// RequireKey makes Stream fail fast with ErrMissingKey when APIKey is
	// empty, instead of sending a request bound to be refused.
	RequireKey bool
	// KeyHint says where the key comes from, for messages: e.g.
	// "OPENAI_API_KEY or providers.openai.api_key_env in ~/.infer/config.yaml".
	KeyHint string
	// HTTPClient carries the requests; nil means a client without timeout
	// (streams are long; cancellation comes from the context).
	HTTPClient *http.Client
	// Policy bounds retries; the zero value is the default policy.
	Policy call.Policy
	// IdleTimeout gives up a request when the server sends nothing (no
	// headers, no byte of the stream) for this long: zero means
	// call.DefaultIdleTimeout, negative never gives up.
	IdleTimeout time.Duration
}

// Provider streams completions from one OpenAI-style server. It is safe for
// concurrent use.
type Provider struct {
	cfg       Config
	ep        call.Endpoint
	enc       *chatEncoder
	chat      sdk.ChatCompletionService
	responses responses.ResponseService
	models    sdk.ModelService
}

var _ llm.Provider = (*Provider)(nil)

// New returns a provider for cfg.
func New(cfg Config) *Provider {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.Name == "" {
		cfg.Name = "openai"
	}
	opts := clientOptions(cfg)
	return &Provider{
		cfg:       cfg,
		ep:        call.NewEndpoint(cfg.Name, cfg.BaseURL, cfg.KeyHint, cfg.APIKey),
		enc:       newChatEncoder(cfg.Flavor),
		chat:      sdk.NewChatCompletionService(opts...),
		responses: responses.NewResponseService(opts...),
		models:    sdk.NewModelService(opts...),
	}
}

// clientOptions builds the SDK options explicitly. The services are built
// without sdk.NewClient because NewClient reads OPENAI_API_KEY and friends
// from the environment, which would send the OpenAI key to every compatible
// server that was configured without one.
func clientOptions(cfg Config) []option.RequestOption {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithMiddleware(call.Capture),
		option.WithMiddleware(call.Idle(idleTimeout(cfg.IdleTimeout))),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return opts
}

// idleTimeout applies Config.IdleTimeout's zero and negative meanings.
func idleTimeout(d time.Duration) time.Duration {
	if d == 0 {
		return call.DefaultIdleTimeout
	}
	return d
}

// Rejections lists what model rejected this session (a parameter left out
// or sent in another form from then on), for the model's details.
func (p *Provider) Rejections(model string) []string { return p.ep.Rejections(model) }

// Stream implements llm.Provider.
func (p *Provider) Stream(ctx context.Context, req llm.Request, emit func(llm.Delta)) (llm.Completion, error) {
	if err := p.check(req); err != nil {
		return llm.Completion{}, err
	}
	t := p.ep.StreamTarget(req)
	if UsesResponses(p.cfg.Flavor, req.Model) {
		input, err := responsesInput(req)
		if err != nil {
			return llm.Completion{}, p.badRequest(req.Model, err)
		}
		tools, err := responsesTools(req.Tools)
		if err != nil {
			return llm.Completion{}, p.badRequest(req.Model, err)
		}
		return p.cfg.Policy.Run(ctx, t, func(ctx context.Context, adj call.Adjust) (call.Result, error) {
			return p.responsesOnce(ctx, req, input, tools, adj, emit)
		})
	}
	body, err := p.enc.prepare(req)
	if err != nil {
		return llm.Completion{}, p.badRequest(req.Model, err)
	}
	return p.cfg.Policy.Run(ctx, t, func(ctx context.Context, adj call.Adjust) (call.Result, error) {
		return p.chatOnce(ctx, req, &body, adj, emit)
	})
}

func (p *Provider) check(req llm.Request) error {
	if p.cfg.RequireKey && p.cfg.APIKey == "" {
		hint := p.cfg.KeyHint
		if hint == "" {
			hint = "an API key in the provider's configuration"
		}
		return &llm.Error{Kind: llm.ErrMissingKey, Provider: p.cfg.Name, Model: req.Model, Message: "no API key: set " + hint}
	}
	if strings.TrimSpace(req.Model) == "" {
		return &llm.Error{Kind: llm.ErrBadRequest, Provider: p.cfg.Name, Message: "no model given: use an id such as " + p.cfg.Name + "/<model>"}
	}
	if req.Temperature != nil {
		if err := llm.ValidateTemperature(*req.Temperature); err != nil {
			return p.badRequest(req.Model, err)
		}
	}
	return nil
}

func (p *Provider) badRequest(model string, err error) error {
	return &llm.Error{Kind: llm.ErrBadRequest, Provider: p.cfg.Name, Model: model, Message: err.Error(), Err: err}
}

// ListModels returns the model ids the server's models endpoint lists,
// sorted, without models that cannot chat (embeddings, speech, images).
func (p *Provider) ListModels(ctx context.Context) ([]string, error) {
	var opts []option.RequestOption
	if PublicCatalog(p.cfg.Flavor) {
		opts = append(opts, option.WithHeaderDel("Authorization"))
	}
	page, err := p.models.List(ctx, opts...)
	if err != nil {
		return nil, p.ep.Target("").Classify(err, 0)
	}
	var ids []string
	seen := map[string]bool{}
	for _, m := range page.Data {
		id := m.ID
		if id == "" || seen[id] || !chatCapable(id) {
			continue
		}
		seen[id] = true
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, nil
}

// chatCapable filters out the non-chat models that models endpoints list
// alongside chat models.
func chatCapable(id string) bool {
	m := strings.ToLower(id)
	for _, s := range []string{"embed", "whisper", "tts", "dall-e", "davinci", "babbage", "moderation",
		"transcribe", "realtime", "audio", "imagen", "image", "veo-", "aqa", "sora", "rerank"} {
		if strings.Contains(m, s) {
			return false
		}
	}
	return true
}
