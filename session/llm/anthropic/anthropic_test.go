package anthropic

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/session/llm"
	lt "github.com/infer-workspace/infer/session/llm/internal/llmtest"
)

const testKey = "sk-ant-test-0123456789abcdef"

func provider(s *lt.Server, waits *[]time.Duration) *Provider {
	return New(Config{Name: "anthropic", BaseURL: s.URL, APIKey: testKey, HTTPClient: s.Client,
		KeyHint: "ANTHROPIC_API_KEY", Policy: lt.Policy(waits)})
}

func e(name, data string) lt.Event { return lt.Event{Name: name, Data: data} }

func msgStart(in int) lt.Event {
	return e("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`+itoa(in)+`,"output_tokens":1}}}`)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func textStart(i int) lt.Event {
	return e("content_block_start", `{"type":"content_block_start","index":`+itoa(i)+`,"content_block":{"type":"text","text":""}}`)
}

func textDelta(i int, s string) lt.Event {
	return e("content_block_delta", `{"type":"content_block_delta","index":`+itoa(i)+`,"delta":{"type":"text_delta","text":`+q(s)+`}}`)
}

func thinkStart(i int) lt.Event {
	return e("content_block_start", `{"type":"content_block_start","index":`+itoa(i)+`,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
}

func thinkDelta(i int, s string) lt.Event {
	return e("content_block_delta", `{"type":"content_block_delta","index":`+itoa(i)+`,"delta":{"type":"thinking_delta","thinking":`+q(s)+`}}`)
}

func sigDelta(i int, s string) lt.Event {
	return e("content_block_delta", `{"type":"content_block_delta","index":`+itoa(i)+`,"delta":{"type":"signature_delta","signature":`+q(s)+`}}`)
}

func toolStart(i int, id, name string) lt.Event {
	return e("content_block_start", `{"type":"content_block_start","index":`+itoa(i)+`,"content_block":{"type":"tool_use","id":`+q(id)+`,"name":`+q(name)+`,"input":{}}}`)
}

func jsonDelta(i int, s string) lt.Event {
	return e("content_block_delta", `{"type":"content_block_delta","index":`+itoa(i)+`,"delta":{"type":"input_json_delta","partial_json":`+q(s)+`}}`)
}

func blockStop(i int) lt.Event {
	return e("content_block_stop", `{"type":"content_block_stop","index":`+itoa(i)+`}`)
}

func msgDelta(stop string, out int) lt.Event {
	return e("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+`","stop_sequence":null},"usage":{"output_tokens":`+itoa(out)+`}}`)
}

func msgStop() lt.Event { return e("message_stop", `{"type":"message_stop"}`) }

func ping() lt.Event { return e("ping", `{"type": "ping"}`) }

func q(s string) string { b, _ := json.Marshal(s); return string(b) }

func user(s string) llm.Request {
	return llm.Request{Model: "claude-sonnet-4-5", Messages: []llm.Message{{Role: llm.RoleUser, Content: s}}}
}

func TestStreamsText(t *testing.T) {
	s := lt.New(t, lt.SSE(msgStart(25), ping(), textStart(0), textDelta(0, "Hello"), textDelta(0, " world"), blockStop(0), msgDelta("end_turn", 15), msgStop()))
	ds, c, err := lt.Collect(t, provider(s, nil), user("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].Text != "Hello" || ds[1].Text != " world" {
		t.Fatalf("deltas = %+v", ds)
	}
	if c.Text != "Hello world" || c.FinishReason != "stop" || c.Usage.InputTokens != 25 || c.Usage.OutputTokens != 15 {
		t.Fatalf("completion = %+v", c)
	}
	if c.ProviderData != nil {
		t.Fatalf("no thinking, yet provider data %v", c.ProviderData)
	}
	r := s.Last()
	if r.Path != "/v1/messages" || r.Header.Get("X-Api-Key") != testKey || r.Header.Get("Authorization") != "" || r.Header.Get("Anthropic-Version") == "" {
		t.Fatalf("request %s with headers %v", r.Path, r.Header)
	}
	b := r.Body
	if lt.At(b, "model") != "claude-sonnet-4-5" || lt.At(b, "stream") != true || lt.At(b, "max_tokens") != float64(32000) {
		t.Fatalf("body = %v", b)
	}
	for _, absent := range []string{"temperature", "thinking", "output_config", "system", "tools"} {
		if _, ok := b[absent]; ok {
			t.Errorf("%s sent although not requested", absent)
		}
	}
}

func TestRequestConversion(t *testing.T) {
	s := lt.New(t, lt.SSE(msgStart(1), textStart(0), textDelta(0, "ok"), msgDelta("end_turn", 1), msgStop()))
	png := []byte("png!")
	b64 := base64.StdEncoding.EncodeToString(png)
	temp := 1.5
	req := llm.Request{
		Model: "claude-sonnet-4-5", System: "be brief", Temperature: &temp,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "extra rule"},
			{Role: llm.RoleUser, Content: "look", Images: []llm.Image{{MIME: "image/jpeg", Data: png}}},
			{Role: llm.RoleAssistant, Content: "on it", ToolCalls: []llm.ToolCall{
				{ID: "toolu_a", Name: "BrowserScreenshot", Arguments: ""},
				{ID: "toolu_b", Name: "Bash", Arguments: `{"command":"ls"}`},
			}},
			{Role: llm.RoleTool, ToolCallID: "toolu_a", Content: "shot", Images: []llm.Image{{MIME: "image/png", Data: png}}},
			{Role: llm.RoleTool, ToolCallID: "toolu_b", Content: "a.txt"},
			{Role: llm.RoleUser, Content: "thanks"},
		},
		Tools: []llm.Tool{{Name: "Bash", Description: "run", Parameters: json.RawMessage(
			`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`)}},
	}
	if _, _, err := lt.Collect(t, provider(s, nil), req); err != nil {
		t.Fatal(err)
	}
	b := s.Last().Body
	if lt.At(b, "system", 0, "text") != "be brief" || lt.At(b, "system", 1, "text") != "extra rule" {
		t.Errorf("system = %v", b["system"])
	}
	if lt.At(b, "temperature") != float64(1) {
		t.Errorf("temperature = %v, want 1.5 clamped to 1", lt.At(b, "temperature"))
	}
	msgs, _ := b["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages = %d: %v", len(msgs), msgs)
	}
	u := msgs[0]
	if lt.At(u, "role") != "user" || lt.At(u, "content", 0, "text") != "look" ||
		lt.At(u, "content", 1, "type") != "image" || lt.At(u, "content", 1, "source", "type") != "base64" ||
		lt.At(u, "content", 1, "source", "media_type") != "image/jpeg" || lt.At(u, "content", 1, "source", "data") != b64 {
		t.Errorf("user = %v", u)
	}
	a := msgs[1]
	if lt.At(a, "role") != "assistant" || lt.At(a, "content", 0, "text") != "on it" ||
		lt.At(a, "content", 1, "type") != "tool_use" || lt.At(a, "content", 1, "id") != "toolu_a" ||
		!reflect.DeepEqual(lt.At(a, "content", 1, "input"), map[string]any{}) ||
		lt.At(a, "content", 2, "input", "command") != "ls" {
		t.Errorf("assistant = %v", a)
	}
	r := msgs[2]
	if lt.At(r, "role") != "user" || lt.At(r, "content", 0, "type") != "tool_result" || lt.At(r, "content", 0, "tool_use_id") != "toolu_a" ||
		lt.At(r, "content", 0, "content", 0, "text") != "shot" || lt.At(r, "content", 0, "content", 1, "type") != "image" ||
		lt.At(r, "content", 0, "content", 1, "source", "data") != b64 ||
		lt.At(r, "content", 1, "tool_use_id") != "toolu_b" || lt.At(r, "content", 1, "content", 0, "text") != "a.txt" ||
		lt.At(r, "content", 2, "text") != "thanks" {
		t.Errorf("tool results = %v", r)
	}
	tool := lt.At(b, "tools", 0)
	if lt.At(tool, "name") != "Bash" || lt.At(tool, "description") != "run" || lt.At(tool, "input_schema", "type") != "object" ||
		lt.At(tool, "input_schema", "properties", "command", "type") != "string" ||
		lt.At(tool, "input_schema", "required", 0) != "command" || lt.At(tool, "input_schema", "additionalProperties") != false {
		t.Errorf("tools = %v", b["tools"])
	}
}

func TestOptionsInRequest(t *testing.T) {
	temp := 0.4
	rows := []struct {
		model  string
		effort llm.Effort
		check  func(b map[string]any) string
	}{
		{"claude-opus-4-6", llm.EffortHigh, func(b map[string]any) string {
			if lt.At(b, "thinking", "type") != "adaptive" || lt.At(b, "output_config", "effort") != "high" || b["temperature"] != nil {
				return "want adaptive thinking, effort high, no temperature"
			}
			return ""
		}},
		{"claude-haiku-4-5", llm.EffortMedium, func(b map[string]any) string {
			if lt.At(b, "thinking", "type") != "enabled" || lt.At(b, "thinking", "budget_tokens") != float64(8192) || b["output_config"] != nil {
				return "want enabled thinking with budget 8192"
			}
			return ""
		}},
		{"claude-sonnet-4-5", llm.EffortNone, func(b map[string]any) string {
			if lt.At(b, "thinking", "type") != "disabled" || lt.At(b, "temperature") != 0.4 {
				return "want thinking disabled and temperature 0.4"
			}
			return ""
		}},
		{"claude-sonnet-5-5", llm.EffortNone, func(b map[string]any) string {
			if lt.At(b, "thinking", "type") != "between_tools" || b["temperature"] != nil {
				return "want between_tools and no temperature"
			}
			return ""
		}},
		{"claude-fable-5", llm.EffortNone, func(b map[string]any) string {
			if b["thinking"] != nil || b["temperature"] != nil {
				return "want neither thinking nor temperature"
			}
			return ""
		}},
	}
	for _, r := range rows {
		s := lt.New(t, lt.SSE(msgStart(1), textStart(0), textDelta(0, "ok"), msgDelta("end_turn", 1), msgStop()))
		req := user("x")
		req.Model, req.Effort, req.Temperature = r.model, r.effort, &temp
		if _, _, err := lt.Collect(t, provider(s, nil), req); err != nil {
			t.Fatal(err)
		}
		if msg := r.check(s.Last().Body); msg != "" {
			t.Errorf("%s/%s: %s; body %v", r.model, r.effort, msg, s.Last().Body)
		}
	}
}

func TestThinkingAndSignatureRoundTrip(t *testing.T) {
	s := lt.New(t,
		lt.SSE(msgStart(10),
			thinkStart(0), thinkDelta(0, "I should "), thinkDelta(0, "list files."), sigDelta(0, "SIG-abc"), blockStop(0),
			textStart(1), textDelta(1, "Listing."), blockStop(1),
			toolStart(2, "toolu_1", "Bash"), jsonDelta(2, `{"command":"ls"}`), blockStop(2),
			msgDelta("tool_use", 30), msgStop()),
		lt.SSE(msgStart(10), textStart(0), textDelta(0, "done"), msgDelta("end_turn", 1), msgStop()),
	)
	p := provider(s, nil)
	req := user("list")
	req.Model, req.Effort = "claude-haiku-4-5", llm.EffortLow
	ds, c, err := lt.Collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	if lt.Joined(ds, llm.ReasoningDelta) != "I should list files." || c.Reasoning != "I should list files." || c.Text != "Listing." {
		t.Fatalf("completion = %+v", c)
	}
	if c.FinishReason != "tool_calls" || len(c.ToolCalls) != 1 || c.ToolCalls[0].Arguments != `{"command":"ls"}` {
		t.Fatalf("tool calls = %+v", c.ToolCalls)
	}
	if c.ProviderData[dataKey] == "" {
		t.Fatal("the signed thinking block was not kept")
	}
	// The next turn sends the answer back with its thinking first.
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, Content: c.Text, Reasoning: c.Reasoning, ToolCalls: c.ToolCalls, ProviderData: c.ProviderData},
		llm.Message{Role: llm.RoleTool, ToolCallID: "toolu_1", Content: "a.txt"})
	if _, _, err := lt.Collect(t, p, req); err != nil {
		t.Fatal(err)
	}
	a := lt.At(s.Last().Body, "messages", 1)
	if lt.At(a, "content", 0, "type") != "thinking" || lt.At(a, "content", 0, "signature") != "SIG-abc" ||
		lt.At(a, "content", 0, "thinking") != "I should list files." ||
		lt.At(a, "content", 1, "text") != "Listing." || lt.At(a, "content", 2, "id") != "toolu_1" {
		t.Fatalf("assistant sent back = %v", a)
	}
}

func TestToolCallSplitAcrossChunks(t *testing.T) {
	args := `{"url":"https://example.com/a/long/path?q=1","new_tab":true}`
	evs := []lt.Event{msgStart(1), toolStart(0, "toolu_x", "BrowserNavigate")}
	for i := 0; i < len(args); i += 5 {
		evs = append(evs, jsonDelta(0, args[i:min(i+5, len(args))]))
	}
	evs = append(evs, blockStop(0), msgDelta("tool_use", 9), msgStop())
	s := lt.New(t, lt.SSE(evs...))
	ds, c, err := lt.Collect(t, provider(s, nil), user("go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ToolCalls) != 1 || c.ToolCalls[0] != (llm.ToolCall{ID: "toolu_x", Name: "BrowserNavigate", Arguments: args}) {
		t.Fatalf("tool calls = %+v", c.ToolCalls)
	}
	var joined strings.Builder
	for i, d := range ds {
		if d.Kind != llm.ToolCallDelta || d.ToolCall.Index != 0 || (i == 0) != (d.ToolCall.ID == "toolu_x") {
			t.Fatalf("delta %d = %+v", i, d)
		}
		joined.WriteString(d.ToolCall.Arguments)
	}
	if len(ds) < 10 || joined.String() != args {
		t.Fatalf("%d fragments joined to %q", len(ds), joined.String())
	}
}

func TestParallelToolCalls(t *testing.T) {
	s := lt.New(t, lt.SSE(msgStart(1),
		textStart(0), textDelta(0, "Two things."), blockStop(0),
		toolStart(1, "toolu_a", "BrowserRead"), jsonDelta(1, `{"selector":`), jsonDelta(1, `"h1"}`), blockStop(1),
		toolStart(2, "toolu_b", "BrowserTabs"), blockStop(2),
		msgDelta("tool_use", 5), msgStop()))
	ds, c, err := lt.Collect(t, provider(s, nil), user("go"))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{{ID: "toolu_a", Name: "BrowserRead", Arguments: `{"selector":"h1"}`}, {ID: "toolu_b", Name: "BrowserTabs", Arguments: "{}"}}
	if !reflect.DeepEqual(c.ToolCalls, want) {
		t.Fatalf("tool calls = %+v", c.ToolCalls)
	}
	ids, args := map[int]string{}, map[int]string{}
	for _, d := range ds {
		if d.Kind == llm.ToolCallDelta {
			ids[d.ToolCall.Index] += d.ToolCall.ID
			args[d.ToolCall.Index] += d.ToolCall.Arguments
		}
	}
	if ids[0] != "toolu_a" || ids[1] != "toolu_b" || args[0] != `{"selector":"h1"}` || args[1] != "" {
		t.Fatalf("fragments: ids %v args %v", ids, args)
	}
}

func TestErrorMidStreamKeepsPartialText(t *testing.T) {
	head := []lt.Event{msgStart(1), textStart(0), textDelta(0, "partial "), textDelta(0, "answer")}
	cases := map[string]lt.Reply{
		"connection dropped": lt.Broken(head...),
		"no message_stop":    lt.SSE(head...),
		"garbage":            lt.SSE(append(head, e("content_block_delta", `{"type":"content_block_delta",`))...),
		"error event":        lt.SSE(append(head, e("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))...),
	}
	for name, rp := range cases {
		t.Run(name, func(t *testing.T) {
			s := lt.New(t, rp)
			_, c, err := lt.Collect(t, provider(s, nil), user("q"))
			if lt.Kind(t, err) != llm.ErrStream || c.Text != "partial answer" {
				t.Fatalf("kind %v (%v), text %q", llm.KindOf(err), err, c.Text)
			}
			if len(s.Requests()) != 1 {
				t.Fatal("a stream that emitted was retried")
			}
		})
	}
}

func TestOverloadedBeforeOutputIsRetried(t *testing.T) {
	var waits []time.Duration
	s := lt.New(t,
		lt.SSE(msgStart(1), e("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)),
		lt.SSE(msgStart(1), textStart(0), textDelta(0, "ok"), msgDelta("end_turn", 1), msgStop()),
	)
	_, c, err := lt.Collect(t, provider(s, &waits), user("q"))
	if err != nil || c.Text != "ok" || len(waits) != 1 {
		t.Fatalf("text %q err %v waits %v", c.Text, err, waits)
	}
}

func TestRateLimitThenSuccess(t *testing.T) {
	var waits []time.Duration
	s := lt.New(t,
		lt.Status(429, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`, "retry-after", "4"),
		lt.SSE(msgStart(1), textStart(0), textDelta(0, "ok"), msgDelta("end_turn", 1), msgStop()),
	)
	_, c, err := lt.Collect(t, provider(s, &waits), user("q"))
	if err != nil || c.Text != "ok" {
		t.Fatalf("text %q err %v", c.Text, err)
	}
	if !reflect.DeepEqual(waits, []time.Duration{4 * time.Second}) {
		t.Fatalf("waits = %v, want the Retry-After", waits)
	}
}

func TestServerErrors(t *testing.T) {
	t.Run("retried then success", func(t *testing.T) {
		var waits []time.Duration
		s := lt.New(t,
			lt.Status(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			lt.Status(500, `{"type":"error","error":{"type":"api_error","message":"Internal"}}`),
			lt.SSE(msgStart(1), textStart(0), textDelta(0, "ok"), msgDelta("end_turn", 1), msgStop()),
		)
		_, c, err := lt.Collect(t, provider(s, &waits), user("q"))
		if err != nil || c.Text != "ok" || !reflect.DeepEqual(waits, []time.Duration{time.Millisecond, 2 * time.Millisecond}) {
			t.Fatalf("text %q err %v waits %v", c.Text, err, waits)
		}
	})
	t.Run("exhausted", func(t *testing.T) {
		s := lt.New(t, lt.Status(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
		_, _, err := lt.Collect(t, provider(s, nil), user("q"))
		if lt.Kind(t, err) != llm.ErrServer || len(s.Requests()) != 4 || !strings.Contains(err.Error(), "Overloaded") {
			t.Fatalf("kind %v after %d requests: %v", llm.KindOf(err), len(s.Requests()), err)
		}
	})
}

func TestAuthAndNotFound(t *testing.T) {
	s := lt.New(t, lt.Status(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key `+testKey+`"}}`))
	_, _, err := lt.Collect(t, provider(s, nil), user("q"))
	if lt.Kind(t, err) != llm.ErrAuth || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("kind %v: %v", llm.KindOf(err), err)
	}
	var le *llm.Error
	if !errors.As(err, &le) || strings.Contains(le.Err.Error(), testKey) {
		t.Fatalf("wrapped error leaks the key: %v", le.Err)
	}

	s = lt.New(t, lt.Status(404, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}`))
	req := user("q")
	req.Model = "claude-nope"
	_, _, err = lt.Collect(t, provider(s, nil), req)
	if lt.Kind(t, err) != llm.ErrNotFound || !strings.Contains(err.Error(), `model "claude-nope" not found at anthropic`) {
		t.Fatalf("kind %v: %v", llm.KindOf(err), err)
	}
}

func TestMissingKeyAndEnvironmentIgnored(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-environment-xyz")
	s := lt.New(t, lt.SSE(msgStart(1), textStart(0), textDelta(0, "ok"), msgDelta("end_turn", 1), msgStop()))
	p := New(Config{BaseURL: s.URL, HTTPClient: s.Client, RequireKey: true, KeyHint: "ANTHROPIC_API_KEY or providers.anthropic.api_key_env in ~/.infer/config.yaml"})
	_, _, err := lt.Collect(t, p, user("q"))
	if lt.Kind(t, err) != llm.ErrMissingKey || !strings.Contains(err.Error(), "set ANTHROPIC_API_KEY") || len(s.Requests()) != 0 {
		t.Fatalf("kind %v: %v", llm.KindOf(err), err)
	}
	// Without RequireKey (a keyless gateway) the environment's key is not sent.
	p = New(Config{BaseURL: s.URL, HTTPClient: s.Client})
	if _, _, err := lt.Collect(t, p, user("q")); err != nil {
		t.Fatal(err)
	}
	if h := s.Last().Header; h.Get("X-Api-Key") != "" || h.Get("Authorization") != "" {
		t.Fatalf("a key was sent: %v", h)
	}
}

func TestRetryWithoutRejectedOptions(t *testing.T) {
	t.Run("temperature", func(t *testing.T) {
		s := lt.New(t,
			lt.Status(400, `{"type":"error","error":{"type":"invalid_request_error","message":"temperature: not supported for this model"}}`),
			lt.SSE(msgStart(1), textStart(0), textDelta(0, "ok"), msgDelta("end_turn", 1), msgStop()),
		)
		temp := 0.5
		req := user("q")
		req.Temperature, req.Effort = &temp, llm.EffortNone
		if _, _, err := lt.Collect(t, provider(s, nil), req); err != nil {
			t.Fatal(err)
		}
		rs := s.Requests()
		if len(rs) != 2 || rs[0].Body["temperature"] != 0.5 || rs[1].Body["temperature"] != nil || lt.At(rs[1].Body, "thinking", "type") != "disabled" {
			t.Fatalf("bodies: %v then %v", rs[0].Body, rs[1].Body)
		}
	})
	t.Run("thinking", func(t *testing.T) {
		s := lt.New(t,
			lt.Status(400, `{"type":"error","error":{"type":"invalid_request_error","message":"thinking.type: 'disabled' is not supported for this model"}}`),
			lt.SSE(msgStart(1), textStart(0), textDelta(0, "ok"), msgDelta("end_turn", 1), msgStop()),
		)
		req := user("q")
		req.Model, req.Effort = "claude-opus-6", llm.EffortNone
		if _, _, err := lt.Collect(t, provider(s, nil), req); err != nil {
			t.Fatal(err)
		}
		rs := s.Requests()
		if len(rs) != 2 || lt.At(rs[0].Body, "thinking", "type") != "disabled" || rs[1].Body["thinking"] != nil {
			t.Fatalf("bodies: %v then %v", rs[0].Body, rs[1].Body)
		}
	})
	t.Run("max_tokens", func(t *testing.T) {
		s := lt.New(t,
			lt.Status(400, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: 32000 > 16000, which is the maximum allowed number of output tokens for claude-custom"}}`),
			lt.SSE(msgStart(1), textStart(0), textDelta(0, "ok"), msgDelta("end_turn", 1), msgStop()),
		)
		req := user("q")
		req.Model = "claude-custom"
		if _, _, err := lt.Collect(t, provider(s, nil), req); err != nil {
			t.Fatal(err)
		}
		if rs := s.Requests(); len(rs) != 2 || rs[1].Body["max_tokens"] != float64(16000) {
			t.Fatalf("retry max_tokens = %v", s.Last().Body["max_tokens"])
		}
	})
	t.Run("unrelated rejection", func(t *testing.T) {
		s := lt.New(t, lt.Status(400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate"}}`))
		temp := 0.5
		req := user("q")
		req.Temperature = &temp
		_, _, err := lt.Collect(t, provider(s, nil), req)
		if lt.Kind(t, err) != llm.ErrBadRequest || len(s.Requests()) != 1 || !strings.Contains(err.Error(), "roles must alternate") {
			t.Fatalf("kind %v after %d: %v", llm.KindOf(err), len(s.Requests()), err)
		}
	})
}

func TestCancelMidStream(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	release := make(chan struct{})
	defer close(release)
	s := lt.New(t, lt.Hang(release, msgStart(1), textStart(0), textDelta(0, "first")))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	var c llm.Completion
	var err error
	go func() {
		defer close(done)
		c, err = provider(s, nil).Stream(ctx, user("q"), func(llm.Delta) { cancel() })
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Stream did not return after cancel")
	}
	if !errors.Is(err, context.Canceled) || c.Text != "first" {
		t.Fatalf("err %v text %q", err, c.Text)
	}
	s.Close()
}

func TestListModels(t *testing.T) {
	s := lt.New(t,
		lt.JSON(`{"data":[{"type":"model","id":"claude-sonnet-4-5","display_name":"Sonnet","created_at":"2025-09-29T00:00:00Z"}],"has_more":true,"first_id":"claude-sonnet-4-5","last_id":"claude-sonnet-4-5"}`),
		lt.JSON(`{"data":[{"type":"model","id":"claude-haiku-4-5","display_name":"Haiku","created_at":"2025-10-01T00:00:00Z"}],"has_more":false,"first_id":"claude-haiku-4-5","last_id":"claude-haiku-4-5"}`),
	)
	ids, err := provider(s, nil).ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ids, []string{"claude-haiku-4-5", "claude-sonnet-4-5"}) {
		t.Fatalf("ids = %v", ids)
	}
	if rs := s.Requests(); len(rs) != 2 || rs[0].Path != "/v1/models" || !strings.Contains(rs[1].Query, "after_id=claude-sonnet-4-5") {
		t.Fatalf("requests = %+v", rs)
	}
}
