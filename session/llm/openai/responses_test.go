package openai

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
)

func ev(typ, body string) [2]string {
	return [2]string{typ, `{"type":"` + typ + `","sequence_number":1` + body + `}`}
}

func completed(usage string) [2]string {
	return ev("response.completed", `,"response":{"id":"r1","object":"response","status":"completed","output":[],"usage":`+usage+`}`)
}

const usage = `{"input_tokens":20,"output_tokens":8,"total_tokens":28,"input_tokens_details":{"cached_tokens":0},"output_tokens_details":{"reasoning_tokens":5}}`

func TestResponsesStreamsTextAndReasoning(t *testing.T) {
	t.Parallel()
	f := newFake(t, events(
		ev("response.created", `,"response":{"id":"r1","status":"in_progress","output":[]}`),
		ev("response.reasoning_summary_part.added", `,"item_id":"rs1","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}`),
		ev("response.reasoning_summary_text.delta", `,"item_id":"rs1","output_index":0,"summary_index":0,"delta":"Think"`),
		ev("response.reasoning_summary_part.added", `,"item_id":"rs1","output_index":0,"summary_index":1,"part":{"type":"summary_text","text":""}`),
		ev("response.reasoning_summary_text.delta", `,"item_id":"rs1","output_index":0,"summary_index":1,"delta":"more"`),
		ev("response.output_text.delta", `,"item_id":"m1","output_index":1,"content_index":0,"delta":"Hi "`),
		ev("response.output_text.delta", `,"item_id":"m1","output_index":1,"content_index":0,"delta":"there"`),
		completed(usage),
	))
	req := llm.Request{Model: "gpt-5-pro", System: "sys", Effort: llm.EffortHigh, Messages: []llm.Message{{Role: llm.RoleUser, Content: "hello"}}}
	ds, c, err := collect(t, f.provider(FlavorOpenAI, nil), req)
	if err != nil {
		t.Fatal(err)
	}
	if joined(ds, llm.ReasoningDelta) != "Think\n\nmore" || c.Reasoning != "Think\n\nmore" {
		t.Fatalf("reasoning = %q / %q", joined(ds, llm.ReasoningDelta), c.Reasoning)
	}
	if c.Text != "Hi there" || joined(ds, llm.TextDelta) != "Hi there" || c.FinishReason != "stop" {
		t.Fatalf("completion = %+v", c)
	}
	if c.Usage != (llm.Usage{InputTokens: 20, OutputTokens: 8, ReasoningTokens: 5}) {
		t.Fatalf("usage = %+v", c.Usage)
	}
	r := f.last()
	if r.Path != "/v1/responses" {
		t.Fatalf("path = %s", r.Path)
	}
	b := r.Body
	if at(b, "model") != "gpt-5-pro" || at(b, "instructions") != "sys" || at(b, "store") != false || at(b, "stream") != true ||
		at(b, "reasoning", "effort") != "high" || at(b, "reasoning", "summary") != "auto" {
		t.Fatalf("body = %v", b)
	}
	if at(b, "input", 0, "role") != "user" || at(b, "input", 0, "content") != "hello" {
		t.Fatalf("input = %v", at(b, "input"))
	}
}

func TestResponsesRequestConversion(t *testing.T) {
	t.Parallel()
	f := newFake(t, events(ev("response.output_text.delta", `,"item_id":"m","delta":"ok"`), completed(usage)))
	png := []byte("png-bytes")
	temp := 0.5
	req := llm.Request{
		Model: "gpt-6-sol", Temperature: &temp,
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "see", Images: []llm.Image{{MIME: "image/png", Data: png}}},
			{Role: llm.RoleAssistant, Content: "shooting", ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "BrowserScreenshot", Arguments: "{}"}}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Content: "captured", Images: []llm.Image{{MIME: "image/png", Data: png}}},
			{Role: llm.RoleTool, ToolCallID: "call_2", Content: "plain"},
		},
		Tools: []llm.Tool{{Name: "BrowserScreenshot", Description: "take one", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}},
	}
	if _, _, err := collect(t, f.provider(FlavorOpenAI, nil), req); err != nil {
		t.Fatal(err)
	}
	b := f.last().Body
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	in, _ := at(b, "input").([]any)
	if len(in) != 5 {
		t.Fatalf("input items = %d: %v", len(in), in)
	}
	if at(in[0], "content", 0, "type") != "input_text" || at(in[0], "content", 1, "type") != "input_image" || at(in[0], "content", 1, "image_url") != url {
		t.Errorf("user item = %v", in[0])
	}
	if at(in[1], "role") != "assistant" || at(in[1], "content") != "shooting" {
		t.Errorf("assistant item = %v", in[1])
	}
	if at(in[2], "type") != "function_call" || at(in[2], "call_id") != "call_1" || at(in[2], "name") != "BrowserScreenshot" || at(in[2], "arguments") != "{}" {
		t.Errorf("call item = %v", in[2])
	}
	if at(in[3], "type") != "function_call_output" || at(in[3], "call_id") != "call_1" ||
		at(in[3], "output", 0, "text") != "captured" || at(in[3], "output", 1, "image_url") != url {
		t.Errorf("output with image = %v", in[3])
	}
	if at(in[4], "output") != "plain" || at(in[4], "call_id") != "call_2" {
		t.Errorf("plain output = %v", in[4])
	}
	if at(b, "tools", 0, "type") != "function" || at(b, "tools", 0, "name") != "BrowserScreenshot" || at(b, "tools", 0, "description") != "take one" {
		t.Errorf("tools = %v", at(b, "tools"))
	}
	if at(b, "temperature") != 0.5 {
		t.Errorf("temperature = %v", at(b, "temperature"))
	}
	if _, ok := b["reasoning"].(map[string]any)["effort"]; ok {
		t.Errorf("auto effort sent: %v", b["reasoning"])
	}
}

func TestResponsesToolCalls(t *testing.T) {
	t.Parallel()
	args := `{"selector":"#main .title"}`
	evs := [][2]string{
		ev("response.output_item.added", `,"output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_a","name":"BrowserRead","arguments":"","status":"in_progress"}`),
		ev("response.output_item.added", `,"output_index":1,"item":{"type":"function_call","id":"fc_2","call_id":"call_b","name":"BrowserTabs","arguments":"","status":"in_progress"}`),
	}
	for i := 0; i < len(args); i += 4 {
		piece, _ := json.Marshal(args[i:min(i+4, len(args))])
		evs = append(evs, ev("response.function_call_arguments.delta", `,"item_id":"fc_1","output_index":0,"delta":`+string(piece)))
	}
	evs = append(evs,
		ev("response.function_call_arguments.done", `,"item_id":"fc_1","output_index":0,"arguments":`+mustJSON(args)),
		// The second call's arguments arrive only whole.
		ev("response.function_call_arguments.done", `,"item_id":"fc_2","output_index":1,"arguments":"{}"`),
		completed(usage),
	)
	f := newFake(t, events(evs...))
	ds, c, err := collect(t, f.provider(FlavorOpenAI, nil), llm.Request{Model: "o3-pro", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.ToolCall{{ID: "call_a", Name: "BrowserRead", Arguments: args}, {ID: "call_b", Name: "BrowserTabs", Arguments: "{}"}}
	if !reflect.DeepEqual(c.ToolCalls, want) || c.FinishReason != "tool_calls" {
		t.Fatalf("completion = %+v", c)
	}
	per := map[int]string{}
	for _, d := range ds {
		per[d.ToolCall.Index] += d.ToolCall.Arguments
	}
	if per[0] != args || per[1] != "{}" {
		t.Fatalf("fragments = %v", per)
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestResponsesFailures(t *testing.T) {
	t.Parallel()
	t.Run("failed before output is retried as a server error", func(t *testing.T) {
		f := newFake(t,
			events(ev("response.failed", `,"response":{"id":"r","status":"failed","error":{"code":"server_error","message":"boom"}}`)),
			events(ev("response.output_text.delta", `,"item_id":"m","delta":"ok"`), completed(usage)),
		)
		_, c, err := collect(t, f.provider(FlavorOpenAI, nil), llm.Request{Model: "gpt-5-pro", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
		if err != nil || c.Text != "ok" || len(f.requests()) != 2 {
			t.Fatalf("text %q err %v after %d requests", c.Text, err, len(f.requests()))
		}
	})
	t.Run("error after output keeps the partial text", func(t *testing.T) {
		f := newFake(t, events(
			ev("response.output_text.delta", `,"item_id":"m","delta":"half"`),
			ev("error", `,"code":"server_error","message":"lost it"`),
		))
		_, c, err := collect(t, f.provider(FlavorOpenAI, nil), llm.Request{Model: "gpt-5-pro", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
		if kindOf(t, err) != llm.ErrStream || c.Text != "half" || !strings.Contains(err.Error(), "lost it") {
			t.Fatalf("kind %v text %q err %v", llm.KindOf(err), c.Text, err)
		}
	})
	t.Run("stream cut before completion", func(t *testing.T) {
		f := newFake(t, events(ev("response.output_text.delta", `,"item_id":"m","delta":"half"`)))
		_, c, err := collect(t, f.provider(FlavorOpenAI, nil), llm.Request{Model: "gpt-5-pro", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
		if kindOf(t, err) != llm.ErrStream || c.Text != "half" {
			t.Fatalf("kind %v text %q", llm.KindOf(err), c.Text)
		}
	})
}

func TestResponsesRetryWithoutSummary(t *testing.T) {
	t.Parallel()
	f := newFake(t,
		status(400, `{"error":{"message":"Your organization must be verified to generate reasoning summaries.","param":"reasoning.summary","code":"unsupported_value"}}`),
		events(ev("response.output_text.delta", `,"item_id":"m","delta":"ok"`), completed(usage)),
	)
	req := llm.Request{Model: "gpt-5-pro", Effort: llm.EffortHigh, Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}
	if _, _, err := collect(t, f.provider(FlavorOpenAI, nil), req); err != nil {
		t.Fatal(err)
	}
	rs := f.requests()
	if len(rs) != 2 || at(rs[1].Body, "reasoning", "summary") != nil || at(rs[1].Body, "reasoning", "effort") != "high" {
		t.Fatalf("retry body = %v", rs[len(rs)-1].Body)
	}
}
