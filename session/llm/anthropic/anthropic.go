// Package anthropic is the llm.Provider for Anthropic's Messages API,
// through the official SDK (github.com/anthropics/anthropic-sdk-go/v2) with
// its retries and environment defaults switched off, so the retry policy
// and the key sent are ours (see session/llm/internal/call).
//
// It streams text, thinking and tool_use blocks, sends tool results (with
// their images) as tool_result blocks, and keeps signed thinking blocks in
// the completion's ProviderData so a tool loop with thinking can continue.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/internal/call"
)

// DefaultBaseURL is Anthropic's API root.
const DefaultBaseURL = "https://api.anthropic.com"

// Config configures the provider.
type Config struct {
	// Name is the provider's name in model ids and messages.
	Name string
	// BaseURL is the API root; empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent in the x-api-key header, as Anthropic's API reference
	// documents (not as the bearer token the SDK's WithAPIKey sends, which
	// gateways that follow the reference refuse). Never logged.
	APIKey string
	// RequireKey makes Stream fail fast with ErrMissingKey when APIKey is
	// empty.
	RequireKey bool
	// KeyHint says where the key comes from, for messages: e.g.
	// "ANTHROPIC_API_KEY or providers.anthropic.api_key_env in ~/.infer/config.yaml".
	KeyHint string
	// HTTPClient carries the requests; nil means a client without timeout.
	HTTPClient *http.Client
	// Policy bounds retries; the zero value is the default policy.
	Policy call.Policy
	// IdleTimeout gives up a request when the server sends nothing (no
	// headers, no byte of the stream) for this long: zero means
	// call.DefaultIdleTimeout, negative never gives up.
	IdleTimeout time.Duration
}

// Provider streams completions from the Messages API. It is safe for
// concurrent use.
type Provider struct {
	cfg    Config
	client sdk.Client
	ep     call.Endpoint
}

var _ llm.Provider = (*Provider)(nil)

// New returns a provider for cfg.
func New(cfg Config) *Provider {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.Name == "" {
		cfg.Name = "anthropic"
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	idle := cfg.IdleTimeout
	if idle == 0 {
		idle = call.DefaultIdleTimeout
	}
	// WithoutEnvironmentDefaults: the SDK would otherwise read
	// ANTHROPIC_API_KEY, profiles and custom headers from the environment,
	// whatever the configuration says.
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
		option.WithMiddleware(call.Capture),
		option.WithMiddleware(call.Idle(idle)),
	}
	if cfg.APIKey != "" {
		// Not option.WithAPIKey: in this SDK version it sends
		// "Authorization: Bearer", while the API reference documents
		// x-api-key.
		opts = append(opts, option.WithHeader("x-api-key", cfg.APIKey))
	}
	return &Provider{cfg: cfg, client: sdk.NewClient(opts...), ep: call.NewEndpoint(cfg.Name, cfg.BaseURL, cfg.KeyHint, cfg.APIKey)}
}

// Rejections lists what model rejected this session (a parameter left out
// or sent in another form from then on), for the model's details.
func (p *Provider) Rejections(model string) []string { return p.ep.Rejections(model) }

// Stream implements llm.Provider.
func (p *Provider) Stream(ctx context.Context, req llm.Request, emit func(llm.Delta)) (llm.Completion, error) {
	if p.cfg.RequireKey && p.cfg.APIKey == "" {
		hint := p.cfg.KeyHint
		if hint == "" {
			hint = "an API key in the provider's configuration"
		}
		return llm.Completion{}, &llm.Error{Kind: llm.ErrMissingKey, Provider: p.cfg.Name, Model: req.Model, Message: "no API key: set " + hint}
	}
	if strings.TrimSpace(req.Model) == "" {
		return llm.Completion{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: p.cfg.Name, Message: "no model given: use an id such as " + p.cfg.Name + "/claude-sonnet-4-5"}
	}
	if req.Temperature != nil {
		if err := llm.ValidateTemperature(*req.Temperature); err != nil {
			return llm.Completion{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: p.cfg.Name, Model: req.Model, Message: err.Error(), Err: err}
		}
	}
	system, msgs := convert(req)
	toolParams, err := tools(req.Tools)
	if err != nil {
		return llm.Completion{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: p.cfg.Name, Model: req.Model, Message: err.Error(), Err: err}
	}
	return p.cfg.Policy.Run(ctx, p.ep.StreamTarget(req), func(ctx context.Context, adj call.Adjust) (call.Result, error) {
		return p.once(ctx, req, system, msgs, toolParams, adj, emit)
	})
}

// params builds one request under adj. The temperature, which this SDK
// version no longer has a typed field for, goes in as a request option.
func params(req llm.Request, system []sdk.TextBlockParam, msgs []sdk.MessageParam, toolParams []sdk.ToolUnionParam, adj call.Adjust) (sdk.MessageNewParams, []option.RequestOption, call.Sent) {
	th := ThinkingFor(req.Model, req.Effort)
	if adj.DropEffort {
		th = Thinking{}
	}
	maxTokens := defaultMaxTokens(req.Model)
	if adj.MaxTokens > 0 {
		maxTokens = adj.MaxTokens
		if th.BudgetTokens >= maxTokens {
			th.BudgetTokens = max(1024, maxTokens/2)
		}
	}
	pr := sdk.MessageNewParams{Model: sdk.Model(req.Model), MaxTokens: maxTokens, System: system, Messages: msgs, Tools: toolParams}
	sent := call.Sent{MaxTokens: maxTokens, Effort: th.label()}
	switch th.Type {
	case "disabled":
		d := sdk.NewThinkingConfigDisabledParam()
		pr.Thinking.OfDisabled = &d
	case "between_tools":
		b := sdk.NewThinkingConfigBetweenToolsParam()
		pr.Thinking.OfBetweenTools = &b
	case "adaptive":
		pr.Thinking.OfAdaptive = &sdk.ThinkingConfigAdaptiveParam{}
		pr.OutputConfig.Effort = sdk.OutputConfigEffort(th.Effort)
	case "enabled":
		pr.Thinking = sdk.ThinkingConfigParamOfEnabled(th.BudgetTokens)
	}
	var opts []option.RequestOption
	if t := TemperatureFor(req.Model, req.Temperature, th); t != nil && !adj.DropTemperature {
		opts = append(opts, option.WithJSONSet("temperature", *t))
		sent.Temperature = true
	}
	return pr, opts, sent
}

func (p *Provider) once(ctx context.Context, req llm.Request, system []sdk.TextBlockParam, msgs []sdk.MessageParam,
	toolParams []sdk.ToolUnionParam, adj call.Adjust, emit func(llm.Delta)) (call.Result, error) {
	pr, opts, sent := params(req, system, msgs, toolParams, adj)
	stream := p.client.Messages.NewStreaming(ctx, pr, opts...)
	defer stream.Close()
	if err := stream.Err(); err != nil {
		return call.Result{Sent: sent}, err
	}
	acc := accumulator{emit: emit, blocks: map[int64]*block{}}
	for stream.Next() {
		acc.add(stream.Current())
	}
	res := call.Result{Completion: acc.completion(), Sent: sent, Emitted: acc.emitted}
	if err := stream.Err(); err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		return res, streamFailure(err, acc.emitted)
	}
	if !acc.stopped {
		return res, &call.StreamError{Reason: "the stream ended before message_stop"}
	}
	return res, nil
}

// streamFailure classifies an error that ended a started stream. An error
// event that arrives before anything was shown (Anthropic reports
// overload this way) is retried like the HTTP status it stands for.
func streamFailure(err error, emitted bool) error {
	var aerr *sdk.Error
	if errors.As(err, &aerr) {
		var body struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal([]byte(aerr.RawJSON()), &body)
		msg := body.Error.Message
		if msg == "" {
			msg = body.Error.Type
		}
		if !emitted {
			switch body.Error.Type {
			case "overloaded_error":
				return &call.HTTPError{Status: 529, Message: msg}
			case "api_error":
				return &call.HTTPError{Status: 500, Message: msg}
			case "rate_limit_error":
				return &call.HTTPError{Status: 429, Message: msg}
			}
		}
		return &call.StreamError{Reason: "the server reported an error mid-stream", Err: errors.New(msg)}
	}
	return &call.StreamError{Reason: "the stream failed", Err: err}
}

// block is one content block being streamed.
type block struct {
	kind      string // text, thinking, redacted_thinking, tool_use, other
	thinking  strings.Builder
	signature string
	data      string
	call      int // position in calls, for tool_use
}

// accumulator assembles Messages API events and forwards deltas.
type accumulator struct {
	emit      func(llm.Delta)
	blocks    map[int64]*block
	order     []*block
	text      strings.Builder
	reasoning strings.Builder
	calls     []*pendingCall
	stop      string
	usage     llm.Usage
	emitted   bool
	stopped   bool
}

type pendingCall struct {
	id, name string
	args     strings.Builder
	start    string // the input sent with content_block_start
}

func (a *accumulator) send(d llm.Delta) {
	a.emitted = true
	a.emit(d)
}

func (a *accumulator) add(ev sdk.MessageStreamEventUnion) {
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		a.usage.InputTokens = int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens)
		a.usage.OutputTokens = int(u.OutputTokens)
	case "content_block_start":
		cb := ev.ContentBlock
		b := &block{kind: cb.Type}
		switch cb.Type {
		case "text":
			if cb.Text != "" {
				a.text.WriteString(cb.Text)
				a.send(llm.Delta{Kind: llm.TextDelta, Text: cb.Text})
			}
		case "thinking":
			if cb.Thinking != "" {
				a.thinkingText(b, cb.Thinking)
			}
			b.signature = cb.Signature
		case "redacted_thinking":
			b.data = cb.Data
		case "tool_use":
			b.call = len(a.calls)
			c := &pendingCall{id: cb.ID, name: cb.Name}
			if raw := cb.JSON.Input.Raw(); raw != "" && raw != "{}" && raw != "null" {
				c.start = raw
			}
			a.calls = append(a.calls, c)
			a.send(llm.Delta{Kind: llm.ToolCallDelta, ToolCall: llm.ToolCallFragment{Index: b.call, ID: c.id, Name: c.name}})
		default:
			b.kind = "other" // server tools and results: not ours to replay
		}
		a.blocks[ev.Index] = b
		a.order = append(a.order, b)
	case "content_block_delta":
		b := a.blocks[ev.Index]
		if b == nil {
			return
		}
		d := ev.Delta
		switch d.Type {
		case "text_delta":
			if d.Text != "" {
				a.text.WriteString(d.Text)
				a.send(llm.Delta{Kind: llm.TextDelta, Text: d.Text})
			}
		case "thinking_delta":
			if d.Thinking != "" {
				a.thinkingText(b, d.Thinking)
			}
		case "signature_delta":
			b.signature += d.Signature
		case "input_json_delta":
			if b.kind == "tool_use" && d.PartialJSON != "" {
				a.calls[b.call].args.WriteString(d.PartialJSON)
				a.send(llm.Delta{Kind: llm.ToolCallDelta, ToolCall: llm.ToolCallFragment{Index: b.call, Arguments: d.PartialJSON}})
			}
		}
	case "message_delta":
		if ev.Delta.StopReason != "" {
			a.stop = string(ev.Delta.StopReason)
		}
		if ev.Usage.OutputTokens > 0 {
			a.usage.OutputTokens = int(ev.Usage.OutputTokens)
		}
	case "message_stop":
		a.stopped = true
	}
}

func (a *accumulator) thinkingText(b *block, s string) {
	b.thinking.WriteString(s)
	a.reasoning.WriteString(s)
	a.send(llm.Delta{Kind: llm.ReasoningDelta, Text: s})
}

func (a *accumulator) completion() llm.Completion {
	c := llm.Completion{Text: a.text.String(), Reasoning: a.reasoning.String(), FinishReason: finishReason(a.stop), Usage: a.usage}
	var saved []savedBlock
	for _, b := range a.order {
		switch b.kind {
		case "text":
			saved = append(saved, savedBlock{Type: "text"})
		case "thinking":
			saved = append(saved, savedBlock{Type: "thinking", Thinking: b.thinking.String(), Signature: b.signature})
		case "redacted_thinking":
			saved = append(saved, savedBlock{Type: "redacted_thinking", Data: b.data})
		case "tool_use":
			saved = append(saved, savedBlock{Type: "tool_use", ID: a.calls[b.call].id})
		}
	}
	for _, pc := range a.calls {
		args := pc.args.String()
		if args == "" {
			args = pc.start
		}
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		c.ToolCalls = append(c.ToolCalls, llm.ToolCall{ID: pc.id, Name: pc.name, Arguments: args})
	}
	c.ProviderData = encodeBlocks(saved)
	return c
}

// finishReason uses the OpenAI-style words the rest of infer shares.
func finishReason(stop string) string {
	switch stop {
	case "end_turn", "stop_sequence":
		return "stop"
	case "tool_use":
		return "tool_calls"
	case "max_tokens":
		return "length"
	}
	return stop
}

// ListModels returns the ids the models endpoint lists, sorted.
func (p *Provider) ListModels(ctx context.Context) ([]string, error) {
	pager := p.client.Models.ListAutoPaging(ctx, sdk.ModelListParams{Limit: sdk.Int(1000)})
	var ids []string
	for pager.Next() {
		if id := pager.Current().ID; id != "" {
			ids = append(ids, id)
		}
		if len(ids) > 5000 {
			break // a runaway pager; what we have is plenty
		}
	}
	if err := pager.Err(); err != nil {
		return nil, p.ep.Target("").Classify(err, 0)
	}
	sort.Strings(ids)
	return ids, nil
}
