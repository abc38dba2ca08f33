package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/session/llm/internal/llmtest"

	"github.com/infer-workspace/infer/session/llm"
)

func simpleReq(text string) llm.Request {
	return llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

func TestChatStreamsText(t *testing.T) {
	t.Parallel()
	f := newFake(t, sse(
		chunk(`{"role":"assistant","content":""}`),
		chunk(`{"content":"Hel"}`),
		chunk(`{"content":"lo"}`),
		finish("stop"),
		usageChunk(12, 3, 0),
	))
	ds, c, err := collect(t, f.provider(FlavorOpenAI, nil), simpleReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].Text != "Hel" || ds[1].Text != "lo" || ds[0].Kind != llm.TextDelta {
		t.Fatalf("deltas = %+v, want two text deltas Hel, lo", ds)
	}
	if c.Text != "Hello" || c.FinishReason != "stop" || c.Usage.InputTokens != 12 || c.Usage.OutputTokens != 3 {
		t.Fatalf("completion = %+v", c)
	}
	r := f.last()
	if r.Path != "/v1/chat/completions" || r.Method != "POST" {
		t.Fatalf("request went to %s %s", r.Method, r.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Fatalf("Authorization = %q", got)
	}
	if at(r.Body, "stream") != true || at(r.Body, "stream_options", "include_usage") != true {
		t.Fatalf("stream flags missing: %v", r.Body)
	}
	if at(r.Body, "model") != "gpt-4o" {
		t.Fatalf("model = %v", at(r.Body, "model"))
	}
	for _, absent := range []string{"temperature", "reasoning_effort", "tools"} {
		if _, ok := r.Body[absent]; ok {
			t.Errorf("%s sent although not requested: %v", absent, r.Body[absent])
		}
	}
}

func TestChatRequestBody(t *testing.T) {
	t.Parallel()
	f := newFake(t, sse(chunk(`{"content":"ok"}`), finish("stop")))
	temp := 0.4
	png := []byte{0x89, 'P', 'N', 'G'}
	req := llm.Request{
		Model:  "gpt-5.1",
		System: "be brief",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "look", Images: []llm.Image{{MIME: "image/jpeg", Data: []byte("jpg")}}},
			{Role: llm.RoleAssistant, Content: "opening", ToolCalls: []llm.ToolCall{
				{ID: "call_a", Name: "BrowserNavigate", Arguments: `{"url":"https://example.com"}`},
				{ID: "call_b", Name: "BrowserScreenshot", Arguments: ""},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_a", Content: "Example Domain"},
			{Role: llm.RoleTool, ToolCallID: "call_b", Content: "", Images: []llm.Image{{MIME: "image/png", Data: png}}},
			{Role: llm.RoleUser, Content: "and now?"},
		},
		Tools: []llm.Tool{{
			Name: "BrowserNavigate", Description: "open a page",
			Parameters: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}`),
		}, {Name: "BrowserScreenshot"}},
		Effort:      llm.EffortHigh,
		Temperature: &temp,
	}
	if _, _, err := collect(t, f.provider(FlavorOpenAI, nil), req); err != nil {
		t.Fatal(err)
	}
	b := f.last().Body
	if at(b, "temperature") != 0.4 || at(b, "reasoning_effort") != "high" {
		t.Fatalf("options: temperature=%v reasoning_effort=%v", at(b, "temperature"), at(b, "reasoning_effort"))
	}
	msgs, _ := at(b, "messages").([]any)
	roles := []string{}
	for _, m := range msgs {
		roles = append(roles, at(m, "role").(string))
	}
	if want := []string{"system", "user", "assistant", "tool", "tool", "user", "user"}; !reflect.DeepEqual(roles, want) {
		t.Fatalf("roles = %v, want %v", roles, want)
	}
	if at(msgs[0], "content") != "be brief" {
		t.Errorf("system = %v", at(msgs[0], "content"))
	}
	if at(msgs[1], "content", 0, "text") != "look" ||
		at(msgs[1], "content", 1, "image_url", "url") != "data:image/jpeg;base64,"+base64.StdEncoding.EncodeToString([]byte("jpg")) {
		t.Errorf("user with image = %v", msgs[1])
	}
	if at(msgs[2], "content") != "opening" || at(msgs[2], "tool_calls", 0, "id") != "call_a" ||
		at(msgs[2], "tool_calls", 0, "type") != "function" ||
		at(msgs[2], "tool_calls", 0, "function", "name") != "BrowserNavigate" ||
		at(msgs[2], "tool_calls", 0, "function", "arguments") != `{"url":"https://example.com"}` ||
		at(msgs[2], "tool_calls", 1, "function", "arguments") != "{}" {
		t.Errorf("assistant = %v", msgs[2])
	}
	if at(msgs[3], "tool_call_id") != "call_a" || at(msgs[3], "content") != "Example Domain" {
		t.Errorf("tool a = %v", msgs[3])
	}
	if at(msgs[4], "tool_call_id") != "call_b" || at(msgs[4], "content") != "(no output)" {
		t.Errorf("tool b = %v", msgs[4])
	}
	// The screenshot follows the tool messages as a user message.
	if at(msgs[5], "content", 0, "text") != toolImagesNote ||
		at(msgs[5], "content", 1, "image_url", "url") != "data:image/png;base64,"+base64.StdEncoding.EncodeToString(png) {
		t.Errorf("tool images = %v", msgs[5])
	}
	if at(msgs[6], "content") != "and now?" {
		t.Errorf("last user = %v", msgs[6])
	}
	tools, _ := at(b, "tools").([]any)
	if len(tools) != 2 || at(tools[0], "type") != "function" || at(tools[0], "function", "name") != "BrowserNavigate" ||
		at(tools[0], "function", "description") != "open a page" ||
		at(tools[0], "function", "parameters", "properties", "url", "type") != "string" ||
		at(tools[0], "function", "parameters", "required", 0) != "url" ||
		at(tools[1], "function", "parameters", "type") != "object" {
		t.Errorf("tools = %v", tools)
	}
}

func TestChatReasoningFields(t *testing.T) {
	t.Parallel()
	for _, field := range []string{"reasoning_content", "reasoning"} {
		t.Run(field, func(t *testing.T) {
			f := newFake(t, sse(
				chunk(`{"role":"assistant","`+field+`":"Let me "}`),
				chunk(`{"`+field+`":"think."}`),
				chunk(`{"content":"Answer."}`),
				finish("stop"),
				usageChunk(5, 9, 6),
			))
			ds, c, err := collect(t, f.provider(FlavorCompatible, nil), simpleReq("q"))
			if err != nil {
				t.Fatal(err)
			}
			if got := joined(ds, llm.ReasoningDelta); got != "Let me think." {
				t.Fatalf("reasoning deltas = %q", got)
			}
			if c.Reasoning != "Let me think." || c.Text != "Answer." || c.Usage.ReasoningTokens != 6 {
				t.Fatalf("completion = %+v", c)
			}
			if ds[0].Kind != llm.ReasoningDelta || ds[len(ds)-1].Kind != llm.TextDelta {
				t.Fatalf("order = %+v", ds)
			}
		})
	}
}

func TestChatToolCallSplitAcrossChunks(t *testing.T) {
	t.Parallel()
	args := `{"command":"ls -la /tmp","timeout_ms":5000}`
	payloads := []string{chunk(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Bash","arguments":""}}]}`)}
	for i := 0; i < len(args); i += 3 {
		piece, _ := json.Marshal(args[i:min(i+3, len(args))])
		payloads = append(payloads, chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+string(piece)+`}}]}`))
	}
	payloads = append(payloads, finish("tool_calls"))
	f := newFake(t, sse(payloads...))
	ds, c, err := collect(t, f.provider(FlavorOpenAI, nil), simpleReq("list"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ToolCalls) != 1 || c.ToolCalls[0] != (llm.ToolCall{ID: "call_1", Name: "Bash", Arguments: args}) {
		t.Fatalf("tool calls = %+v", c.ToolCalls)
	}
	if c.FinishReason != "tool_calls" {
		t.Fatalf("finish = %q", c.FinishReason)
	}
	var got strings.Builder
	for i, d := range ds {
		if d.Kind != llm.ToolCallDelta || d.ToolCall.Index != 0 {
			t.Fatalf("delta %d = %+v", i, d)
		}
		if (i == 0) != (d.ToolCall.ID != "") || (i == 0) != (d.ToolCall.Name != "") {
			t.Fatalf("id and name must come on the first fragment only: %+v", d)
		}
		got.WriteString(d.ToolCall.Arguments)
	}
	if len(ds) < 10 || got.String() != args {
		t.Fatalf("fragments = %d, joined %q", len(ds), got.String())
	}
}

func TestChatParallelToolCalls(t *testing.T) {
	t.Parallel()
	f := newFake(t, sse(
		chunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"BrowserRead","arguments":""}}]}`),
		chunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"BrowserTabs","arguments":""}}]}`),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"selector\":"}}]}`),
		chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]}`),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"h1\"}"}}]}`),
		finish("tool_calls"),
	))
	ds, c, err := collect(t, f.provider(FlavorOpenAI, nil), simpleReq("go"))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{
		{ID: "call_a", Name: "BrowserRead", Arguments: `{"selector":"h1"}`},
		{ID: "call_b", Name: "BrowserTabs", Arguments: `{}`},
	}
	if !reflect.DeepEqual(c.ToolCalls, want) {
		t.Fatalf("tool calls = %+v", c.ToolCalls)
	}
	perIndex := map[int]string{}
	for _, d := range ds {
		perIndex[d.ToolCall.Index] += d.ToolCall.Arguments
	}
	if perIndex[0] != want[0].Arguments || perIndex[1] != want[1].Arguments {
		t.Fatalf("fragments per index = %v", perIndex)
	}
}

// Some compatible servers send whole calls without an index; they must not
// merge.
func TestChatToolCallsWithoutIndex(t *testing.T) {
	t.Parallel()
	f := newFake(t, sse(
		chunk(`{"tool_calls":[{"id":"x1","type":"function","function":{"name":"A","arguments":"{\"n\":1}"}}]}`),
		chunk(`{"tool_calls":[{"id":"x2","type":"function","function":{"name":"B","arguments":"{\"n\":2}"}}]}`),
		finish("tool_calls"),
	))
	_, c, err := collect(t, f.provider(FlavorCompatible, nil), simpleReq("go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ToolCalls) != 2 || c.ToolCalls[0].Name != "A" || c.ToolCalls[1].Arguments != `{"n":2}` {
		t.Fatalf("tool calls = %+v", c.ToolCalls)
	}
}

func TestChatErrorMidStreamKeepsPartialText(t *testing.T) {
	t.Parallel()
	cases := map[string]reply{
		"connection dropped": broken(chunk(`{"content":"partial "}`), chunk(`{"content":"answer"}`)),
		"garbage":            sse(chunk(`{"content":"partial "}`), chunk(`{"content":"answer"}`), `{not json`),
		"ended early":        llmtest.SSE(dataEvents([]string{chunk(`{"content":"partial "}`), chunk(`{"content":"answer"}`)})...),
		"error event":        sse(chunk(`{"content":"partial "}`), chunk(`{"content":"answer"}`), `{"error":{"code":502,"message":"upstream went away"}}`),
	}
	for name, rp := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, rp)
			_, c, err := collect(t, f.provider(FlavorOpenRouter, nil), simpleReq("q"))
			if kindOf(t, err) != llm.ErrStream {
				t.Fatalf("kind = %v (%v), want ErrStream", llm.KindOf(err), err)
			}
			if c.Text != "partial answer" {
				t.Fatalf("partial text = %q", c.Text)
			}
			if n := len(f.requests()); n != 1 {
				t.Fatalf("a stream that emitted must not be retried; %d requests", n)
			}
		})
	}
}

// A server that ends with [DONE] but never sends a finish_reason still
// finished cleanly.
func TestChatDoneWithoutFinishReason(t *testing.T) {
	t.Parallel()
	f := newFake(t, sse(chunk(`{"content":"whole"}`)))
	_, c, err := collect(t, f.provider(FlavorCompatible, nil), simpleReq("q"))
	if err != nil || c.Text != "whole" {
		t.Fatalf("text %q err %v", c.Text, err)
	}
}

func TestDoneReaderFindsSplitMarker(t *testing.T) {
	t.Parallel()
	body := "data: {}\n\ndata: [DONE]\n\n"
	for split := 1; split < len(body); split++ {
		seen := false
		r := &doneReader{ReadCloser: io.NopCloser(&chunkedReader{parts: []string{body[:split], body[split:]}}), seen: &seen}
		if _, err := io.ReadAll(r); err != nil || !seen {
			t.Fatalf("split at %d: seen %v err %v", split, seen, err)
		}
	}
	seen := false
	r := &doneReader{ReadCloser: io.NopCloser(strings.NewReader("data: {\"x\":\"[DON\"}\n\n")), seen: &seen}
	if _, _ = io.ReadAll(r); seen {
		t.Fatal("found a marker that is not there")
	}
}

// chunkedReader returns its parts one Read at a time.
type chunkedReader struct{ parts []string }

func (c *chunkedReader) Read(p []byte) (int, error) {
	if len(c.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.parts[0])
	c.parts[0] = c.parts[0][n:]
	if c.parts[0] == "" {
		c.parts = c.parts[1:]
	}
	return n, nil
}

// An error event before any output (OpenRouter's way of reporting an
// upstream failure after a 200) is retried like the status it carries.
func TestChatErrorEventBeforeOutputIsRetried(t *testing.T) {
	t.Parallel()
	var waits []time.Duration
	f := newFake(t,
		sse(`{"error":{"code":502,"message":"upstream unavailable"}}`),
		sse(chunk(`{"content":"ok"}`), finish("stop")),
	)
	_, c, err := collect(t, f.provider(FlavorOpenRouter, &waits), simpleReq("q"))
	if err != nil || c.Text != "ok" || len(waits) != 1 {
		t.Fatalf("text %q err %v waits %v", c.Text, err, waits)
	}
}

func TestChatRateLimitThenSuccess(t *testing.T) {
	t.Parallel()
	var waits []time.Duration
	f := newFake(t,
		status(429, `{"error":{"message":"slow down","type":"rate_limit"}}`, "retry-after-ms", "7"),
		status(429, `{"error":{"message":"slow down"}}`, "Retry-After", "2"),
		sse(chunk(`{"content":"ok"}`), finish("stop")),
	)
	_, c, err := collect(t, f.provider(FlavorOpenAI, &waits), simpleReq("q"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Text != "ok" || len(f.requests()) != 3 {
		t.Fatalf("text %q after %d requests", c.Text, len(f.requests()))
	}
	if want := []time.Duration{7 * time.Millisecond, 2 * time.Second}; !reflect.DeepEqual(waits, want) {
		t.Fatalf("waits = %v, want the Retry-After values %v", waits, want)
	}
}

// The real sleep path, with a tiny Retry-After.
func TestChatRateLimitRealWait(t *testing.T) {
	t.Parallel()
	f := newFake(t,
		status(429, `{"error":{"message":"slow down"}}`, "retry-after-ms", "1"),
		sse(chunk(`{"content":"ok"}`), finish("stop")),
	)
	p := New(Config{Name: "t", BaseURL: f.URL + "/v1", HTTPClient: f.Client})
	_, c, err := collect(t, p, simpleReq("q"))
	if err != nil || c.Text != "ok" {
		t.Fatalf("text %q err %v", c.Text, err)
	}
}

func TestChatRateLimitExhausted(t *testing.T) {
	t.Parallel()
	var waits []time.Duration
	f := newFake(t, status(429, `{"error":{"message":"quota"}}`, "retry-after-ms", "3"))
	_, _, err := collect(t, f.provider(FlavorOpenAI, &waits), simpleReq("q"))
	if kindOf(t, err) != llm.ErrRateLimited {
		t.Fatalf("kind = %v: %v", llm.KindOf(err), err)
	}
	var le *llm.Error
	errors.As(err, &le)
	if le.RetryAfter != 3*time.Millisecond || le.Status != 429 {
		t.Fatalf("error = %+v", le)
	}
	if len(f.requests()) != 4 || len(waits) != 3 {
		t.Fatalf("%d requests, %d waits; want 4 and 3", len(f.requests()), len(waits))
	}
	if !strings.Contains(err.Error(), "quota") || !strings.Contains(err.Error(), "3 retries") {
		t.Fatalf("message = %q", err)
	}
}

// A Retry-After longer than the policy's longest wait is reported, not
// waited out.
func TestChatRateLimitLongRetryAfterNotWaited(t *testing.T) {
	t.Parallel()
	var waits []time.Duration
	f := newFake(t, status(429, `{"error":{"message":"quota"}}`, "Retry-After", "600"))
	_, _, err := collect(t, f.provider(FlavorOpenAI, &waits), simpleReq("q"))
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.ErrRateLimited || le.RetryAfter != 10*time.Minute {
		t.Fatalf("err = %v", err)
	}
	if len(waits) != 0 || len(f.requests()) != 1 {
		t.Fatalf("waited %v over %d requests", waits, len(f.requests()))
	}
}

func TestChatServerErrorRetriedThenSuccess(t *testing.T) {
	t.Parallel()
	var waits []time.Duration
	f := newFake(t,
		status(503, `{"error":{"message":"overloaded"}}`),
		status(500, `oops`),
		sse(chunk(`{"content":"fine"}`), finish("stop")),
	)
	_, c, err := collect(t, f.provider(FlavorOpenAI, &waits), simpleReq("q"))
	if err != nil || c.Text != "fine" {
		t.Fatalf("text %q err %v", c.Text, err)
	}
	if want := []time.Duration{time.Millisecond, 2 * time.Millisecond}; !reflect.DeepEqual(waits, want) {
		t.Fatalf("backoff = %v, want %v", waits, want)
	}
}

func TestChatServerErrorExhausted(t *testing.T) {
	t.Parallel()
	var waits []time.Duration
	f := newFake(t, status(502, `<html>bad gateway</html>`))
	_, _, err := collect(t, f.provider(FlavorOpenAI, &waits), simpleReq("q"))
	if kindOf(t, err) != llm.ErrServer {
		t.Fatalf("kind = %v: %v", llm.KindOf(err), err)
	}
	if len(f.requests()) != 4 {
		t.Fatalf("%d requests, want 1 + 3 retries", len(f.requests()))
	}
	if want := []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond}; !reflect.DeepEqual(waits, want) {
		t.Fatalf("backoff = %v", waits)
	}
	if !strings.Contains(err.Error(), "502") {
		t.Fatalf("message = %q", err)
	}
}

func TestChatUnauthorized(t *testing.T) {
	t.Parallel()
	f := newFake(t, status(401, `{"error":{"message":"Incorrect API key provided: `+testKey+`.","type":"invalid_request_error","code":"invalid_api_key"}}`))
	_, _, err := collect(t, f.provider(FlavorOpenAI, nil), simpleReq("q"))
	if kindOf(t, err) != llm.ErrAuth {
		t.Fatalf("kind = %v: %v", llm.KindOf(err), err)
	}
	if len(f.requests()) != 1 {
		t.Fatalf("401 retried: %d requests", len(f.requests()))
	}
	msg := err.Error()
	if strings.Contains(msg, testKey) {
		t.Fatalf("the key leaked into the error: %q", msg)
	}
	if !strings.Contains(msg, "TEST_API_KEY") || !strings.Contains(msg, "401") {
		t.Fatalf("message does not say what to fix: %q", msg)
	}
	var le *llm.Error
	errors.As(err, &le)
	if le.Err == nil || strings.Contains(le.Err.Error(), testKey) {
		t.Fatalf("wrapped error leaks the key or is missing: %v", le.Err)
	}
}

func TestChatModelNotFound(t *testing.T) {
	t.Parallel()
	f := newFake(t, status(404, `{"error":{"message":"The model 'gpt-9' does not exist","code":"model_not_found"}}`))
	_, _, err := collect(t, f.provider(FlavorOpenAI, nil), llm.Request{Model: "gpt-9", Messages: simpleReq("q").Messages})
	if kindOf(t, err) != llm.ErrNotFound {
		t.Fatalf("kind = %v: %v", llm.KindOf(err), err)
	}
	if !strings.Contains(err.Error(), `model "gpt-9" not found at testprov`) || !strings.Contains(err.Error(), "model list") {
		t.Fatalf("message = %q", err)
	}
}

func TestChatMissingKey(t *testing.T) {
	t.Parallel()
	f := newFake(t, sse(finish("stop")))
	p := New(Config{Name: "openai", BaseURL: f.URL, RequireKey: true, HTTPClient: f.Client,
		KeyHint: "OPENAI_API_KEY or providers.openai.api_key_env in ~/.infer/config.yaml"})
	_, _, err := collect(t, p, simpleReq("q"))
	if kindOf(t, err) != llm.ErrMissingKey {
		t.Fatalf("kind = %v: %v", llm.KindOf(err), err)
	}
	if !strings.Contains(err.Error(), "set OPENAI_API_KEY or providers.openai.api_key_env") {
		t.Fatalf("message = %q", err)
	}
	if len(f.requests()) != 0 {
		t.Fatal("a request was sent without a key")
	}
}

// The SDK's environment defaults are off: a compatible server configured
// without a key must not receive the OpenAI key from the environment.
func TestChatDoesNotReadEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-environment-123456")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/")
	f := newFake(t, sse(chunk(`{"content":"ok"}`), finish("stop")))
	p := New(Config{Name: "lmstudio", Flavor: FlavorCompatible, BaseURL: f.URL + "/v1", HTTPClient: f.Client})
	if _, _, err := collect(t, p, simpleReq("q")); err != nil {
		t.Fatal(err)
	}
	if got := f.last().Header.Get("Authorization"); got != "" {
		t.Fatalf("Authorization = %q, want none", got)
	}
}

func TestChatUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := New(Config{Name: "lmstudio", Flavor: FlavorCompatible, BaseURL: "http://" + addr + "/v1", APIKey: testKey,
		HTTPClient: &http.Client{Transport: &http.Transport{}}})
	_, _, err = collect(t, p, simpleReq("q"))
	if kindOf(t, err) != llm.ErrUnreachable {
		t.Fatalf("kind = %v: %v", llm.KindOf(err), err)
	}
	if !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), testKey) {
		t.Fatalf("message = %q", err)
	}
}

func TestChatRetryWithoutRejectedTemperature(t *testing.T) {
	t.Parallel()
	f := newFake(t,
		status(400, `{"error":{"message":"Unsupported value: 'temperature' does not support 0.2 with this model. Only the default (1) value is supported.","type":"invalid_request_error","param":"temperature","code":"unsupported_value"}}`),
		sse(chunk(`{"content":"ok"}`), finish("stop")),
	)
	temp := 0.2
	req := simpleReq("q")
	req.Model, req.Temperature, req.Effort = "gpt-5", &temp, llm.EffortLow
	_, c, err := collect(t, f.provider(FlavorOpenAI, nil), req)
	if err != nil || c.Text != "ok" {
		t.Fatalf("text %q err %v", c.Text, err)
	}
	rs := f.requests()
	if len(rs) != 2 || at(rs[0].Body, "temperature") != 0.2 {
		t.Fatalf("first request = %v", rs[0].Body)
	}
	if _, ok := rs[1].Body["temperature"]; ok {
		t.Fatalf("retry still sends temperature: %v", rs[1].Body)
	}
	if at(rs[1].Body, "reasoning_effort") != "low" {
		t.Fatalf("retry lost the effort: %v", rs[1].Body)
	}
}

func TestChatRetryWithSupportedEffort(t *testing.T) {
	t.Parallel()
	f := newFake(t,
		status(400, `{"error":{"message":"Unsupported value: 'reasoning_effort' does not support 'none' with this model. Supported values are: 'low', 'medium', and 'high'.","param":"reasoning_effort"}}`),
		sse(chunk(`{"content":"ok"}`), finish("stop")),
	)
	req := simpleReq("q")
	req.Model, req.Effort = "some-new-model", llm.EffortNone
	if _, _, err := collect(t, f.provider(FlavorOpenAI, nil), req); err != nil {
		t.Fatal(err)
	}
	rs := f.requests()
	if len(rs) != 2 || at(rs[0].Body, "reasoning_effort") != "none" || at(rs[1].Body, "reasoning_effort") != "low" {
		t.Fatalf("efforts sent: %v then %v", at(rs[0].Body, "reasoning_effort"), at(rs[1].Body, "reasoning_effort"))
	}
}

func TestChatRetryWithoutEffortOnce(t *testing.T) {
	t.Parallel()
	f := newFake(t,
		status(400, `{"error":{"message":"Unrecognized request argument supplied: reasoning_effort"}}`),
		status(400, `{"error":{"message":"Unrecognized request argument supplied: reasoning_effort"}}`),
	)
	req := simpleReq("q")
	req.Model, req.Effort = "local-model", llm.EffortHigh
	_, _, err := collect(t, f.provider(FlavorCompatible, nil), req)
	if kindOf(t, err) != llm.ErrBadRequest {
		t.Fatalf("kind = %v: %v", llm.KindOf(err), err)
	}
	rs := f.requests()
	if len(rs) != 2 {
		t.Fatalf("%d requests, want exactly one retry", len(rs))
	}
	if _, ok := rs[1].Body["reasoning_effort"]; ok {
		t.Fatalf("retry still sends reasoning_effort: %v", rs[1].Body)
	}
}

func TestChatRetryWithoutStreamOptions(t *testing.T) {
	t.Parallel()
	f := newFake(t,
		status(400, `{"error":"unknown field stream_options"}`),
		sse(chunk(`{"content":"ok"}`), finish("stop")),
	)
	if _, _, err := collect(t, f.provider(FlavorCompatible, nil), simpleReq("q")); err != nil {
		t.Fatal(err)
	}
	if rs := f.requests(); len(rs) != 2 || rs[1].Body["stream_options"] != nil {
		t.Fatalf("requests = %d, retry body %v", len(rs), f.last().Body)
	}
}

func TestChatUnrelatedBadRequestNotRetried(t *testing.T) {
	t.Parallel()
	f := newFake(t, status(400, `{"error":{"message":"Invalid value for 'messages[1].content'"}}`))
	temp := 1.0
	req := simpleReq("q")
	req.Temperature = &temp
	_, _, err := collect(t, f.provider(FlavorOpenAI, nil), req)
	if kindOf(t, err) != llm.ErrBadRequest || len(f.requests()) != 1 {
		t.Fatalf("kind %v after %d requests", llm.KindOf(err), len(f.requests()))
	}
	if !strings.Contains(err.Error(), "messages[1].content") {
		t.Fatalf("message = %q", err)
	}
}

func TestChatInvalidTemperatureRefusedLocally(t *testing.T) {
	t.Parallel()
	f := newFake(t, sse(finish("stop")))
	temp := 3.0
	req := simpleReq("q")
	req.Temperature = &temp
	_, _, err := collect(t, f.provider(FlavorOpenAI, nil), req)
	if kindOf(t, err) != llm.ErrBadRequest || len(f.requests()) != 0 {
		t.Fatalf("kind %v, %d requests", llm.KindOf(err), len(f.requests()))
	}
}

// A compatible server gets the options as they are and no earlier
// reasoning: servers that do not know the field may reject it.
func TestChatCompatibleBody(t *testing.T) {
	t.Parallel()
	f := newFake(t, sse(chunk(`{"reasoning":"hm"}`), chunk(`{"content":"ok"}`), finish("stop")))
	temp := 0.3
	req := llm.Request{Model: "qwen3:8b", Effort: llm.EffortNone, Temperature: &temp, Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "a"},
		{Role: llm.RoleAssistant, Content: "b", Reasoning: "earlier thought"},
		{Role: llm.RoleUser, Content: "c"},
	}}
	if _, _, err := collect(t, f.provider(FlavorCompatible, nil), req); err != nil {
		t.Fatal(err)
	}
	b := f.last().Body
	if at(b, "reasoning_effort") != "none" || at(b, "temperature") != 0.3 {
		t.Fatalf("options = effort %v temperature %v", at(b, "reasoning_effort"), at(b, "temperature"))
	}
	if at(b, "messages", 1, "reasoning") != nil {
		t.Fatalf("earlier reasoning sent to a compatible server: %v", at(b, "messages", 1))
	}
}

func TestChatCancelMidStream(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	release := make(chan struct{})
	f := newFake(t, llmtest.Hang(release, llmtest.Event{Data: chunk(`{"content":"first"}`)}))
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := f.provider(FlavorOpenAI, nil)
	done := make(chan struct{})
	var c llm.Completion
	var err error
	go func() {
		defer close(done)
		c, err = p.Stream(ctx, simpleReq("q"), func(d llm.Delta) { cancel() })
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Stream did not return after cancel")
	}
	if !errors.Is(err, context.Canceled) || c.Text != "first" {
		t.Fatalf("err %v, text %q", err, c.Text)
	}
	f.Close()
}
