// Package gemini is the llm.Provider for Google's Gemini API, spoken
// natively through the official SDK (google.golang.org/genai) rather than
// through Google's OpenAI-compatible endpoint, which can carry neither the
// thought signatures a function-call turn must send back nor the
// model-specific thinking levels.
//
// It streams text, thought summaries and function calls from
// streamGenerateContent, keeps the model's parts exactly as they came
// (signatures and parts infer does not interpret included) in the
// completion's ProviderData so the next request replays them unchanged, and
// sends every request through infer's retry policy (session/llm/internal/
// call) with the SDK's own retries left off.
package gemini

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/internal/call"
)

// DefaultBaseURL is the Gemini API root; the SDK adds the API version.
const DefaultBaseURL = "https://generativelanguage.googleapis.com/"

// DefaultModel is the model the spec names as Gemini's default.
const DefaultModel = "gemini-3.8-flash"

// Config configures the provider.
type Config struct {
	// Name is the provider's name in model ids and messages.
	Name string
	// BaseURL is the API root; empty means DefaultBaseURL. A root given
	// with the compatible endpoint's path (…/v1beta/openai/) or an API
	// version is cut back to the root, so an older configuration works.
	BaseURL string
	// APIKey goes in the x-goog-api-key header. Never logged.
	APIKey string
	// KeyHint says where the key comes from, for messages.
	KeyHint string
	// HTTPClient carries the requests; nil means a client without timeout.
	HTTPClient *http.Client
	// Policy bounds retries; the zero value is the default policy.
	Policy call.Policy
	// IdleTimeout gives up a request when the server sends nothing for
	// this long: zero means call.DefaultIdleTimeout, negative never.
	IdleTimeout time.Duration
}

// Provider streams completions from the Gemini API. It is safe for
// concurrent use.
type Provider struct {
	cfg        Config
	ep         call.Endpoint
	apiVersion string
	client     *genai.Client
	initErr    error
}

var (
	_ llm.Provider    = (*Provider)(nil)
	_ llm.WebSearcher = (*Provider)(nil)
)

// New returns a provider for cfg. A missing key is reported by Stream.
func New(cfg Config) *Provider {
	if cfg.Name == "" {
		cfg.Name = "gemini"
	}
	base, version := splitBaseURL(cfg.BaseURL)
	cfg.BaseURL = base
	p := &Provider{cfg: cfg, apiVersion: version, ep: call.NewEndpoint(cfg.Name, cfg.BaseURL, cfg.KeyHint, cfg.APIKey)}
	if cfg.APIKey == "" {
		return p
	}
	hc := &http.Client{}
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		hc = &c
	}
	idle := cfg.IdleTimeout
	if idle == 0 {
		idle = call.DefaultIdleTimeout
	}
	hc.Transport = call.Transport(hc.Transport, idle)
	// Everything explicit: the SDK otherwise reads GEMINI_API_KEY,
	// GOOGLE_API_KEY, GOOGLE_GEMINI_BASE_URL and the Vertex switches from
	// the environment, whatever infer's configuration says.
	p.client, p.initErr = genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      cfg.APIKey,
		Backend:     genai.BackendGeminiAPI,
		HTTPClient:  hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: base, APIVersion: version},
	})
	return p
}

// splitBaseURL returns the API root and version for a configured base URL:
// "" → DefaultBaseURL and v1beta; ".../v1beta/openai/" → "...", v1beta.
func splitBaseURL(raw string) (base, version string) {
	base = strings.TrimSpace(raw)
	if base == "" {
		return DefaultBaseURL, "v1beta"
	}
	base = strings.TrimRight(base, "/")
	base = strings.TrimSuffix(base, "/openai")
	version = "v1beta"
	for _, v := range []string{"v1beta", "v1alpha", "v1"} {
		if strings.HasSuffix(base, "/"+v) {
			base, version = strings.TrimSuffix(base, "/"+v), v
			break
		}
	}
	return base + "/", version
}

func (p *Provider) fail(kind llm.ErrorKind, model, msg string) error {
	return &llm.Error{Kind: kind, Provider: p.cfg.Name, Model: model, Message: msg}
}

// ready reports a provider that cannot send: no key, or an SDK that
// refused its configuration.
func (p *Provider) ready(model string) error {
	if p.cfg.APIKey == "" {
		hint := p.cfg.KeyHint
		if hint == "" {
			hint = "GEMINI_API_KEY"
		}
		return p.fail(llm.ErrMissingKey, model, "no API key: set "+hint)
	}
	if p.initErr != nil {
		return p.fail(llm.ErrOther, model, "the Gemini client could not be set up: "+p.initErr.Error())
	}
	return nil
}

// Rejections lists what model rejected this session (a parameter left out
// or sent in another form from then on), for the model's details.
func (p *Provider) Rejections(model string) []string { return p.ep.Rejections(model) }

// Stream implements llm.Provider.
func (p *Provider) Stream(ctx context.Context, req llm.Request, emit func(llm.Delta)) (llm.Completion, error) {
	if err := p.ready(req.Model); err != nil {
		return llm.Completion{}, err
	}
	if strings.TrimSpace(req.Model) == "" {
		return llm.Completion{}, p.fail(llm.ErrBadRequest, "", "no model given: use an id such as "+p.cfg.Name+"/"+DefaultModel)
	}
	if req.Temperature != nil {
		if err := llm.ValidateTemperature(*req.Temperature); err != nil {
			return llm.Completion{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: p.cfg.Name, Model: req.Model, Message: err.Error(), Err: err}
		}
	}
	if i := unsignedTurn(req); i >= 0 && needsSignatures(req.Model) {
		return llm.Completion{}, p.fail(llm.ErrBadRequest, req.Model, fmt.Sprintf(
			"message %d of this conversation is a tool call recorded without the thought signatures Gemini requires "+
				"(the conversation was saved by an older infer, or the call came from another model); Gemini would refuse it. "+
				"Answer with a new message so the tool loop starts afresh, switch this conversation to another model, or start a new conversation", i+1))
	}
	contents, system, err := convert(req)
	if err != nil {
		return llm.Completion{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: p.cfg.Name, Model: req.Model, Message: err.Error(), Err: err}
	}
	tools, err := functionTools(req.Tools)
	if err != nil {
		return llm.Completion{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: p.cfg.Name, Model: req.Model, Message: err.Error(), Err: err}
	}
	var blocked string
	comp, err := p.cfg.Policy.Run(ctx, p.ep.StreamTarget(req), func(ctx context.Context, adj call.Adjust) (call.Result, error) {
		return p.once(ctx, req, contents, system, tools, adj, emit, &blocked)
	})
	if blocked != "" {
		return comp, p.fail(llm.ErrBadRequest, req.Model, "Gemini refused to answer ("+blocked+"): rephrase the request or try another model")
	}
	return comp, explainSignature(err)
}

// config builds one request's generation config under adj.
func config(req llm.Request, system *genai.Content, tools []*genai.Tool, adj call.Adjust) (*genai.GenerateContentConfig, call.Sent) {
	cfg := &genai.GenerateContentConfig{SystemInstruction: system, Tools: tools}
	var sent call.Sent
	tc := ThinkingFor(req.Model, req.Effort)
	switch {
	case adj.DropEffort:
		tc = nil
	case adj.Effort != "" && tc != nil:
		tc = replaceLevel(adj.Effort, tc.IncludeThoughts)
	}
	if tc != nil {
		cfg.ThinkingConfig = tc
		sent.Effort = label(tc)
	}
	if req.Temperature != nil && !adj.DropTemperature {
		t := float32(*req.Temperature)
		cfg.Temperature = &t
		sent.Temperature = true
	}
	return cfg, sent
}

func (p *Provider) once(ctx context.Context, req llm.Request, contents []*genai.Content, system *genai.Content,
	tools []*genai.Tool, adj call.Adjust, emit func(llm.Delta), blocked *string) (call.Result, error) {
	cfg, sent := config(req, system, tools, adj)
	acc := accumulator{emit: emit}
	res := call.Result{Sent: sent, Supported: supported(req.Model)}
	for chunk, err := range p.client.Models.GenerateContentStream(ctx, req.Model, contents, cfg) {
		if err != nil {
			res.Completion, res.Emitted = acc.completion(), acc.emitted
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			return res, streamFailure(err, acc.chunks > 0, acc.emitted)
		}
		acc.add(chunk)
	}
	res.Completion, res.Emitted = acc.completion(), acc.emitted
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if acc.blocked != "" {
		*blocked = acc.blocked
		return res, errBlocked
	}
	if acc.finish == "" {
		return res, &call.StreamError{Reason: "the stream ended before the answer finished"}
	}
	return res, nil
}

// errBlocked ends an attempt whose answer Gemini withheld; Stream reports
// why.
var errBlocked = errors.New("the answer was withheld")

// streamFailure classifies an error the SDK's stream gave. Errors before
// the body (HTTP status) arrive as *call.HTTPError through the middleware;
// an error event in the stream arrives as genai.APIError and, when nothing
// was shown yet, is retried like the status it carries.
func streamFailure(err error, started, emitted bool) error {
	var he *call.HTTPError
	if errors.As(err, &he) {
		return he
	}
	var ie *call.IdleError
	if errors.As(err, &ie) {
		return ie
	}
	var ae genai.APIError
	if errors.As(err, &ae) {
		if !emitted && ae.Code >= 400 {
			return &call.HTTPError{Status: ae.Code, Message: ae.Message}
		}
		return &call.StreamError{Reason: "the server reported an error mid-stream", Err: errors.New(ae.Message)}
	}
	// A network error before any chunk is a server that could not be
	// reached (or dropped the connection before answering); after one, the
	// stream broke.
	var ne net.Error
	if !started && errors.As(err, &ne) {
		return err
	}
	return &call.StreamError{Reason: "the stream failed", Err: err}
}

// explainSignature turns Gemini's refusal of a turn without signatures
// into what the person can do, in case one slipped past unsignedTurn.
func explainSignature(err error) error {
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.ErrBadRequest {
		return err
	}
	low := strings.ToLower(le.Message)
	if strings.Contains(low, "thought_signature") || strings.Contains(low, "thought signature") {
		le.Message += "; the conversation's tool calls lost their thought signatures: answer with a new message, switch to another model, or start a new conversation"
	}
	return err
}

// ListModels lists the models that generate content, the default first.
func (p *Provider) ListModels(ctx context.Context) ([]string, error) {
	if err := p.ready(""); err != nil {
		return nil, err
	}
	var ids []string
	for m, err := range p.client.Models.All(ctx) {
		if err != nil {
			return nil, p.ep.Target("").Classify(unwrapRequest(err), 0)
		}
		if !generates(m.SupportedActions) || !chatModel(m.Name) {
			continue
		}
		if id := strings.TrimPrefix(m.Name, "models/"); id != "" {
			ids = append(ids, id)
		}
		if len(ids) > 5000 {
			break // a runaway pager; what we have is plenty
		}
	}
	sort.SliceStable(ids, func(i, j int) bool {
		if (ids[i] == DefaultModel) != (ids[j] == DefaultModel) {
			return ids[i] == DefaultModel
		}
		return ids[i] < ids[j]
	})
	return ids, nil
}

// unwrapRequest reaches the *call.HTTPError or dial error under the SDK's
// wrapping.
func unwrapRequest(err error) error {
	var he *call.HTTPError
	if errors.As(err, &he) {
		return he
	}
	return err
}

// chatModel leaves out the models that answer generateContent but do not
// chat: speech, images, video, embeddings, transcription, live audio.
func chatModel(name string) bool {
	low := strings.ToLower(name)
	for _, s := range []string{"embed", "tts", "imagen", "image", "veo", "aqa", "transcribe", "native-audio", "-live"} {
		if strings.Contains(low, s) {
			return false
		}
	}
	return true
}

func generates(actions []string) bool {
	if len(actions) == 0 {
		return true // not said: list it rather than hide it
	}
	for _, a := range actions {
		if a == "generateContent" || a == "streamGenerateContent" {
			return true
		}
	}
	return false
}

// WebSearch implements llm.WebSearcher with Google Search grounding: one
// request with the googleSearch tool, answered with the pages it used.
func (p *Provider) WebSearch(ctx context.Context, model, query string) (llm.SearchResult, error) {
	if model == "" {
		model = DefaultModel
	}
	if err := p.ready(model); err != nil {
		return llm.SearchResult{}, err
	}
	if strings.TrimSpace(query) == "" {
		return llm.SearchResult{}, p.fail(llm.ErrBadRequest, model, "the web search has no query")
	}
	contents := []*genai.Content{genai.NewContentFromText("Search the web for: "+query+"\nAnswer with what the results say, briefly.", genai.RoleUser)}
	cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}}}
	var out llm.SearchResult
	_, err := p.cfg.Policy.Run(ctx, p.ep.Target(model), func(ctx context.Context, adj call.Adjust) (call.Result, error) {
		resp, err := p.client.Models.GenerateContent(ctx, model, contents, cfg)
		if err != nil {
			return call.Result{}, unwrapRequest(err)
		}
		out = searchResult(resp)
		return call.Result{}, nil
	})
	return out, err
}

func searchResult(resp *genai.GenerateContentResponse) llm.SearchResult {
	var r llm.SearchResult
	if resp == nil || len(resp.Candidates) == 0 || resp.Candidates[0] == nil {
		return r
	}
	c := resp.Candidates[0]
	if c.Content != nil {
		var b strings.Builder
		for _, part := range c.Content.Parts {
			if part != nil && !part.Thought {
				b.WriteString(part.Text)
			}
		}
		r.Text = b.String()
	}
	if g := c.GroundingMetadata; g != nil {
		seen := map[string]bool{}
		for _, ch := range g.GroundingChunks {
			if ch == nil || ch.Web == nil || ch.Web.URI == "" || seen[ch.Web.URI] {
				continue
			}
			seen[ch.Web.URI] = true
			r.Sources = append(r.Sources, llm.SearchSource{Title: ch.Web.Title, URL: ch.Web.URI})
		}
	}
	return r
}
