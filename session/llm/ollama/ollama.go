// Package ollama is the llm.Provider for Ollama's native API, local
// (http://localhost:11434) or Ollama Cloud (https://ollama.com with an
// account key): /api/chat streamed as JSON lines with tools, think set from
// the model's own /api/show controls, options.temperature, and the model
// list from /api/tags.
//
// It is a small client on net/http rather than Ollama's Go package
// (github.com/ollama/ollama/api): that package has no type for the
// thinking controls /api/show advertises, reads OLLAMA_HOST and signs
// requests with the key in ~/.ollama on its own, and would put the Ollama
// server's whole module graph in infer's go.sum. Requests go through infer's
// retry policy and error classes (session/llm/internal/call).
package ollama

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/internal/call"
)

// Addresses and defaults.
const (
	// DefaultBaseURL is a local Ollama.
	DefaultBaseURL = "http://localhost:11434"
	// CloudBaseURL is Ollama Cloud, reached directly with an account key.
	CloudBaseURL = "https://ollama.com"
	// DefaultCloudModel is the spec's default for Ollama Cloud.
	DefaultCloudModel = "deepseek-v4.1-flash:1017"
	// SearchURL is Ollama's hosted web search, for local and cloud alike.
	SearchURL = "https://ollama.com/api/web_search"
)

// Config configures the provider.
type Config struct {
	// Name is the provider's name in model ids and messages.
	Name string
	// BaseURL is the server root; empty means DefaultBaseURL. A root
	// given with /v1 or /api (the compatible endpoint's form) is cut back.
	BaseURL string
	// APIKey is sent as a bearer token (Ollama Cloud). Never logged.
	APIKey string
	// RequireKey makes Stream fail with ErrMissingKey without APIKey, so
	// the cloud provider never quietly becomes a local one.
	RequireKey bool
	// KeyHint says where the key comes from, for messages.
	KeyHint string
	// SearchKey is the ollama.com key WebSearch uses when APIKey is empty
	// (a local server with an account key for search only).
	SearchKey string
	// SearchURL overrides SearchURL (tests).
	SearchURL string
	// HTTPClient carries the requests; nil means a client without timeout.
	HTTPClient *http.Client
	// Policy bounds retries; the zero value is the default policy.
	Policy call.Policy
	// IdleTimeout gives up a request when the server sends nothing for
	// this long: zero means call.DefaultIdleTimeout, negative never.
	IdleTimeout time.Duration
	// ProbeTimeout bounds the /api/show probe (default 5s); a late answer
	// leaves the model's default thinking.
	ProbeTimeout time.Duration
}

// Provider streams completions from Ollama. It is safe for concurrent use.
type Provider struct {
	cfg    Config
	ep     call.Endpoint
	client *http.Client // with capture and idle watchdog
	plain  *http.Client // for the probe, whose failures are not errors
}

var (
	_ llm.Provider    = (*Provider)(nil)
	_ llm.WebSearcher = (*Provider)(nil)
)

// New returns a provider for cfg.
func New(cfg Config) *Provider {
	if cfg.Name == "" {
		cfg.Name = "ollama"
	}
	cfg.BaseURL = normaliseBase(cfg.BaseURL)
	if cfg.SearchURL == "" {
		cfg.SearchURL = SearchURL
	}
	if cfg.ProbeTimeout <= 0 {
		cfg.ProbeTimeout = 5 * time.Second
	}
	plain := cfg.HTTPClient
	if plain == nil {
		plain = &http.Client{}
	}
	idle := cfg.IdleTimeout
	if idle == 0 {
		idle = call.DefaultIdleTimeout
	}
	c := *plain
	c.Transport = call.Transport(plain.Transport, idle)
	return &Provider{cfg: cfg, client: &c, plain: plain, ep: call.NewEndpoint(cfg.Name, cfg.BaseURL, cfg.KeyHint, cfg.APIKey)}
}

// normaliseBase turns "", ".../v1" and ".../api" into the server root.
func normaliseBase(raw string) string {
	s := strings.TrimRight(strings.TrimSpace(raw), "/")
	if s == "" {
		return DefaultBaseURL
	}
	for _, suffix := range []string{"/v1", "/api"} {
		s = strings.TrimSuffix(s, suffix)
	}
	return s
}

func (p *Provider) fail(kind llm.ErrorKind, model, msg string) error {
	return &llm.Error{Kind: kind, Provider: p.cfg.Name, Model: model, Message: msg}
}

func (p *Provider) missingKey(model string) error {
	hint := p.cfg.KeyHint
	if hint == "" {
		hint = "OLLAMA_API_KEY"
	}
	return p.fail(llm.ErrMissingKey, model, "no API key: set "+hint)
}

// newRequest builds a request to the server with the key, if any.
func (p *Provider) newRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.cfg.BaseURL+path, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if p.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	return req, nil
}

// chatRequest is /api/chat's body.
type chatRequest struct {
	Model    string         `json:"model"`
	Messages []wireMessage  `json:"messages"`
	Tools    []wireTool     `json:"tools,omitempty"`
	Stream   bool           `json:"stream"`
	Think    any            `json:"think,omitempty"`
	Options  map[string]any `json:"options,omitempty"`
}

// Rejections lists what model rejected this session (a parameter left out
// or sent in another form from then on), for the model's details.
func (p *Provider) Rejections(model string) []string { return p.ep.Rejections(model) }

// Stream implements llm.Provider. An explicit effort asks /api/show for
// the model's thinking controls first, every time, since a model can be
// replaced under the same name.
func (p *Provider) Stream(ctx context.Context, req llm.Request, emit func(llm.Delta)) (llm.Completion, error) {
	if p.cfg.RequireKey && p.cfg.APIKey == "" {
		return llm.Completion{}, p.missingKey(req.Model)
	}
	if strings.TrimSpace(req.Model) == "" {
		return llm.Completion{}, p.fail(llm.ErrBadRequest, "", "no model given: use an id such as "+p.cfg.Name+"/llama3.2")
	}
	if req.Temperature != nil {
		if err := llm.ValidateTemperature(*req.Temperature); err != nil {
			return llm.Completion{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: p.cfg.Name, Model: req.Model, Message: err.Error(), Err: err}
		}
	}
	msgs, err := convert(req)
	if err != nil {
		return llm.Completion{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: p.cfg.Name, Model: req.Model, Message: err.Error(), Err: err}
	}
	tools, err := wireTools(req.Tools)
	if err != nil {
		return llm.Completion{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: p.cfg.Name, Model: req.Model, Message: err.Error(), Err: err}
	}
	var controls Controls
	if req.Effort != "" && req.Effort != llm.EffortAuto {
		controls, _ = p.Probe(ctx, req.Model)
		if ctx.Err() != nil {
			return llm.Completion{}, ctx.Err()
		}
	}
	body := chatRequest{Model: req.Model, Messages: msgs, Tools: tools, Stream: true}
	return p.cfg.Policy.Run(ctx, p.ep.StreamTarget(req), func(ctx context.Context, adj call.Adjust) (call.Result, error) {
		b := body
		sent := call.Sent{}
		b.Think = ThinkFor(req.Effort, controls)
		switch {
		case adj.DropEffort:
			b.Think = nil
		case adj.Effort != "":
			b.Think = adj.Effort
			for _, l := range controls.Levels {
				if strings.EqualFold(l, adj.Effort) {
					b.Think = l
				}
			}
		}
		sent.Effort = thinkLabel(b.Think)
		if req.Temperature != nil && !adj.DropTemperature {
			b.Options = map[string]any{"temperature": *req.Temperature}
			sent.Temperature = true
		}
		var supported []string
		for _, l := range controls.Levels {
			supported = append(supported, strings.ToLower(l))
		}
		res, err := p.chat(ctx, b, emit)
		res.Sent, res.Supported = sent, supported
		return res, err
	})
}

// chunk is one line of /api/chat's stream.
type chunk struct {
	Message struct {
		Content   string     `json:"content"`
		Thinking  string     `json:"thinking"`
		ToolCalls []wireCall `json:"tool_calls"`
	} `json:"message"`
	Done            bool   `json:"done"`
	DoneReason      string `json:"done_reason"`
	PromptEvalCount int    `json:"prompt_eval_count"`
	EvalCount       int    `json:"eval_count"`
	Error           string `json:"error"`
}

// maxLine bounds one line of the stream: a whole tool call arrives in one.
const maxLine = 8 << 20

func (p *Provider) chat(ctx context.Context, body chatRequest, emit func(llm.Delta)) (call.Result, error) {
	hreq, err := p.newRequest(ctx, http.MethodPost, "/api/chat", body)
	if err != nil {
		return call.Result{}, err
	}
	resp, err := p.client.Do(hreq)
	if err != nil {
		return call.Result{}, unwrap(err)
	}
	defer resp.Body.Close()
	acc := accumulator{emit: emit}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ch chunk
		if err := json.Unmarshal(line, &ch); err != nil {
			return acc.result(), &call.StreamError{Reason: "the server sent something that is not Ollama's stream", Err: errors.New(clip(string(line)))}
		}
		if ch.Error != "" {
			return acc.result(), &call.StreamError{Reason: "the server reported an error mid-stream", Err: errors.New(ch.Error)}
		}
		acc.add(ch)
		if ch.Done {
			return acc.result(), nil
		}
	}
	if ctx.Err() != nil {
		return acc.result(), ctx.Err()
	}
	if err := sc.Err(); err != nil {
		var ie *call.IdleError
		if errors.As(err, &ie) {
			return acc.result(), ie
		}
		return acc.result(), &call.StreamError{Reason: "the stream failed", Err: err}
	}
	return acc.result(), &call.StreamError{Reason: "the stream ended before the answer was done"}
}

// unwrap takes a request error out of *url.Error so it classifies as what
// it is (an HTTP status, silence, or an unreachable server).
func unwrap(err error) error {
	var he *call.HTTPError
	if errors.As(err, &he) {
		return he
	}
	var ie *call.IdleError
	if errors.As(err, &ie) {
		return ie
	}
	return err
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// accumulator assembles the stream and forwards deltas.
type accumulator struct {
	emit      func(llm.Delta)
	text      strings.Builder
	reasoning strings.Builder
	calls     []llm.ToolCall
	done      string
	usage     llm.Usage
	emitted   bool
}

func (a *accumulator) send(d llm.Delta) {
	a.emitted = true
	a.emit(d)
}

func (a *accumulator) add(ch chunk) {
	if ch.Message.Thinking != "" {
		a.reasoning.WriteString(ch.Message.Thinking)
		a.send(llm.Delta{Kind: llm.ReasoningDelta, Text: ch.Message.Thinking})
	}
	if ch.Message.Content != "" {
		a.text.WriteString(ch.Message.Content)
		a.send(llm.Delta{Kind: llm.TextDelta, Text: ch.Message.Content})
	}
	for _, wc := range ch.Message.ToolCalls {
		id := wc.ID
		if id == "" {
			id = newCallID()
		}
		args := strings.TrimSpace(string(wc.Function.Arguments))
		if args == "" || args == "null" {
			args = "{}"
		}
		idx := len(a.calls)
		a.calls = append(a.calls, llm.ToolCall{ID: id, Name: wc.Function.Name, Arguments: args})
		a.send(llm.Delta{Kind: llm.ToolCallDelta, ToolCall: llm.ToolCallFragment{Index: idx, ID: id, Name: wc.Function.Name, Arguments: args}})
	}
	if ch.Done {
		a.done = ch.DoneReason
		if a.done == "" {
			a.done = "stop"
		}
		a.usage = llm.Usage{InputTokens: ch.PromptEvalCount, OutputTokens: ch.EvalCount}
	}
}

func (a *accumulator) result() call.Result {
	c := llm.Completion{Text: a.text.String(), Reasoning: a.reasoning.String(), ToolCalls: a.calls, FinishReason: a.done, Usage: a.usage}
	if len(a.calls) > 0 {
		c.FinishReason = "tool_calls"
	}
	return call.Result{Completion: c, Emitted: a.emitted}
}

// Probe asks /api/show for the model's thinking controls. Any failure
// (unreachable, an error status, a late or malformed answer) returns
// Controls{} with the reason: the caller then leaves think unset.
func (p *Provider) Probe(ctx context.Context, model string) (Controls, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.ProbeTimeout)
	defer cancel()
	req, err := p.newRequest(ctx, http.MethodPost, "/api/show", map[string]string{"model": model})
	if err != nil {
		return Controls{}, err
	}
	resp, err := p.plain.Do(req)
	if err != nil {
		return Controls{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Controls{}, fmt.Errorf("/api/show answered %s", resp.Status)
	}
	var show struct {
		Thinking json.RawMessage `json:"thinking"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&show); err != nil {
		return Controls{}, fmt.Errorf("/api/show: %w", err)
	}
	return parseControls(show.Thinking), nil
}

// ListModels lists /api/tags, sorted, the cloud default first. Ollama
// Cloud's catalog is public; the key is sent when there is one.
func (p *Provider) ListModels(ctx context.Context) ([]string, error) {
	req, err := p.newRequest(ctx, http.MethodGet, "/api/tags", nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, p.ep.Target("").Classify(unwrap(err), 0)
	}
	defer resp.Body.Close()
	var tags struct {
		Models []struct {
			Name         string   `json:"name"`
			Model        string   `json:"model"`
			Capabilities []string `json:"capabilities"`
		} `json:"models"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 32<<20)).Decode(&tags); err != nil {
		return nil, p.fail(llm.ErrStream, "", "the model list from "+p.cfg.BaseURL+"/api/tags is not Ollama's: "+err.Error())
	}
	var ids []string
	seen := map[string]bool{}
	for _, m := range tags.Models {
		id := m.Name
		if id == "" {
			id = m.Model
		}
		if id != "" && !seen[id] && chats(id, m.Capabilities) {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	sort.SliceStable(ids, func(i, j int) bool {
		if (ids[i] == DefaultCloudModel) != (ids[j] == DefaultCloudModel) {
			return ids[i] == DefaultCloudModel
		}
		return ids[i] < ids[j]
	})
	return ids, nil
}

// chats reports a model that can chat: one whose capabilities (Ollama
// Cloud lists them) include completion, or, where they are not listed, one
// whose name is not an embedding or reranking model's (a local /api/tags
// does not say).
func chats(id string, capabilities []string) bool {
	if len(capabilities) > 0 {
		for _, c := range capabilities {
			if c == "completion" {
				return true
			}
		}
		return false
	}
	low := strings.ToLower(id)
	return !strings.Contains(low, "embed") && !strings.Contains(low, "rerank")
}

// WebSearchAvailable implements llm.WebSearchAvailability: Ollama's search
// runs on ollama.com and needs an account key.
func (p *Provider) WebSearchAvailable() bool { return p.cfg.APIKey != "" || p.cfg.SearchKey != "" }

// WebSearch implements llm.WebSearcher with Ollama's hosted search, which
// needs an ollama.com key (the cloud key, or SearchKey for a local
// server); without one it fails rather than search some other way.
func (p *Provider) WebSearch(ctx context.Context, model, query string) (llm.SearchResult, error) {
	key := p.cfg.APIKey
	if key == "" {
		key = p.cfg.SearchKey
	}
	if key == "" {
		return llm.SearchResult{}, p.fail(llm.ErrMissingKey, model, "web search through Ollama runs on ollama.com and needs an account key: set OLLAMA_API_KEY")
	}
	if strings.TrimSpace(query) == "" {
		return llm.SearchResult{}, p.fail(llm.ErrBadRequest, model, "the web search has no query")
	}
	t := p.ep.Target(model)
	t.BaseURL, t.Secret, t.KeyHint = p.cfg.SearchURL, key, "check OLLAMA_API_KEY"
	var out llm.SearchResult
	_, err := p.cfg.Policy.Run(ctx, t, func(ctx context.Context, adj call.Adjust) (call.Result, error) {
		raw, err := json.Marshal(map[string]any{"query": query, "max_results": 5})
		if err != nil {
			return call.Result{}, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.cfg.SearchURL, bytes.NewReader(raw))
		if err != nil {
			return call.Result{}, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := p.client.Do(req)
		if err != nil {
			return call.Result{}, unwrap(err)
		}
		defer resp.Body.Close()
		var body struct {
			Results []struct {
				Title   string `json:"title"`
				URL     string `json:"url"`
				Content string `json:"content"`
			} `json:"results"`
		}
		if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&body); err != nil {
			return call.Result{}, &call.StreamError{Reason: "the search answer is not Ollama's", Err: err}
		}
		out = llm.SearchResult{}
		var b strings.Builder
		for i, r := range body.Results {
			out.Sources = append(out.Sources, llm.SearchSource{Title: r.Title, URL: r.URL, Snippet: r.Content})
			fmt.Fprintf(&b, "%d. %s — %s\n%s\n\n", i+1, r.Title, r.URL, strings.TrimSpace(r.Content))
		}
		out.Text = strings.TrimSpace(b.String())
		return call.Result{}, nil
	})
	return out, err
}

// wireMessage is one /api/chat message.
type wireMessage struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	Thinking   string     `json:"thinking,omitempty"`
	Images     []string   `json:"images,omitempty"`
	ToolCalls  []wireCall `json:"tool_calls,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type wireCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     *int            `json:"index,omitempty"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	} `json:"function"`
}

// convert turns the conversation into /api/chat messages: earlier
// reasoning goes back as thinking, tool answers name their tool (which is
// what Ollama's templates use) and carry the call's id.
func convert(req llm.Request) ([]wireMessage, error) {
	var out []wireMessage
	if req.System != "" {
		out = append(out, wireMessage{Role: "system", Content: req.System})
	}
	names := map[string]string{}
	for i, m := range req.Messages {
		w := wireMessage{Role: string(m.Role), Content: m.Content}
		for _, img := range m.Images {
			w.Images = append(w.Images, base64.StdEncoding.EncodeToString(img.Data))
		}
		switch m.Role {
		case llm.RoleSystem, llm.RoleUser:
		case llm.RoleAssistant:
			w.Thinking = m.Reasoning
			for _, tc := range m.ToolCalls {
				var wc wireCall
				wc.ID, wc.Function.Name, wc.Function.Arguments = tc.ID, tc.Name, argsObject(tc.Arguments)
				w.ToolCalls = append(w.ToolCalls, wc)
				names[tc.ID] = tc.Name
			}
		case llm.RoleTool:
			name, ok := names[m.ToolCallID]
			if !ok {
				return nil, fmt.Errorf("message %d answers tool call %q, which no earlier message made", i+1, m.ToolCallID)
			}
			w.ToolName, w.ToolCallID = name, m.ToolCallID
		default:
			return nil, fmt.Errorf("message %d has an unknown role %q", i+1, m.Role)
		}
		out = append(out, w)
	}
	return out, nil
}

// argsObject sends arguments back as the JSON object they were; anything
// else (a model's malformed call) is wrapped so nothing is lost.
func argsObject(raw string) json.RawMessage {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &obj) == nil && obj != nil {
		return json.RawMessage(raw)
	}
	wrapped, _ := json.Marshal(map[string]string{"invalid_arguments": raw})
	return wrapped
}

func wireTools(ts []llm.Tool) ([]wireTool, error) {
	var out []wireTool
	for _, t := range ts {
		var w wireTool
		w.Type = "function"
		w.Function.Name, w.Function.Description = t.Name, t.Description
		if len(t.Parameters) > 0 {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(t.Parameters, &obj); err != nil {
				return nil, fmt.Errorf("tool %q has a parameter schema that is not a JSON object: %v", t.Name, err)
			}
			w.Function.Parameters = t.Parameters
		}
		out = append(out, w)
	}
	return out, nil
}

func newCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
