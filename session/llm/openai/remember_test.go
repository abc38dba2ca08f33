package openai

import (
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
)

// With a temperature and an effort the model rejects, a two-step tool loop
// pays for each rejection once: the second step (and any later request to
// the model) sends the accepted form at once.
func TestRejectionsAreRememberedForTheModel(t *testing.T) {
	t.Parallel()
	tempReject := status(400, `{"error":{"message":"Unsupported value: 'temperature' does not support 0.3 with this model. Only the default (1) value is supported.","type":"invalid_request_error","param":"temperature","code":"unsupported_value"}}`)
	effortReject := status(400, `{"error":{"message":"Unsupported value: 'reasoning_effort' does not support 'none' with this model. Supported values are: 'low', 'medium', and 'high'.","param":"reasoning_effort"}}`)
	f := newFake(t,
		tempReject, effortReject,
		sse(chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"Read","arguments":"{}"}}]}`), finish("tool_calls")),
		sse(chunk(`{"content":"done"}`), finish("stop")),
		sse(chunk(`{"content":"a title"}`), finish("stop")),
	)
	p := f.provider(FlavorOpenAI, nil)
	temp := 0.3
	req := llm.Request{Model: "gpt-5-custom", Effort: llm.EffortNone, Temperature: &temp,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "go"}}, Tools: []llm.Tool{{Name: "Read"}}}
	_, c, err := collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: c.ToolCalls},
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", Content: "text"})
	if _, c, err = collect(t, p, req); err != nil || c.Text != "done" {
		t.Fatalf("second step: %q %v", c.Text, err)
	}
	rs := f.requests()
	if len(rs) != 4 {
		t.Fatalf("a two-step loop made %d requests, want 4 (two rejections, two steps)", len(rs))
	}
	if rs[3].Body["temperature"] != nil || rs[3].Body["reasoning_effort"] != "low" {
		t.Fatalf("second step sent temperature %v, effort %v", rs[3].Body["temperature"], rs[3].Body["reasoning_effort"])
	}
	// A title request without tools benefits too.
	if _, _, err := collect(t, p, llm.Request{Model: "gpt-5-custom", Effort: llm.EffortNone, Temperature: &temp,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "title"}}}); err != nil {
		t.Fatal(err)
	}
	if n := len(f.requests()); n != 5 {
		t.Fatalf("title request took %d requests", n-4)
	}
	notes := strings.Join(p.Rejections("gpt-5-custom"), "\n")
	if !strings.Contains(notes, "temperature rejected") || !strings.Contains(notes, `sent as "low"`) {
		t.Fatalf("notes: %q", notes)
	}
	if p.Rejections("gpt-4o") != nil {
		t.Fatal("another model inherited the rejections")
	}
}

// An effort rejection is remembered for the effort asked for only: the
// same model may take another effort as it is.
func TestEffortRejectionIsPerEffort(t *testing.T) {
	t.Parallel()
	f := newFake(t,
		status(400, `{"error":{"message":"Unrecognized request argument supplied: reasoning_effort"}}`),
		sse(chunk(`{"content":"a"}`), finish("stop")),
		sse(chunk(`{"content":"b"}`), finish("stop")),
		sse(chunk(`{"content":"c"}`), finish("stop")),
	)
	p := f.provider(FlavorCompatible, nil)
	req := llm.Request{Model: "m", Effort: llm.EffortNone, Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}
	for _, e := range []llm.Effort{llm.EffortNone, llm.EffortNone, llm.EffortHigh} {
		req.Effort = e
		if _, _, err := collect(t, p, req); err != nil {
			t.Fatal(err)
		}
	}
	rs := f.requests()
	if len(rs) != 4 || rs[2].Body["reasoning_effort"] != nil || rs[3].Body["reasoning_effort"] != "high" {
		t.Fatalf("%d requests; efforts %v %v", len(rs), rs[2].Body["reasoning_effort"], rs[3].Body["reasoning_effort"])
	}
}

// A 400 that only mentions reasoning (OpenRouter's "reasoning details")
// is not an effort rejection: no retry without the effort, nothing
// remembered.
func TestMentionOfReasoningIsNotAnEffortRejection(t *testing.T) {
	t.Parallel()
	f := newFake(t, status(400, `{"error":{"message":"Gemini models require OpenRouter reasoning details to be preserved","code":400}}`))
	p := f.provider(FlavorOpenRouter, nil)
	_, _, err := collect(t, p, llm.Request{Model: "google/gemini-3-pro", Effort: llm.EffortHigh, Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
	if kindOf(t, err) != llm.ErrBadRequest || len(f.requests()) != 1 || p.Rejections("google/gemini-3-pro") != nil {
		t.Fatalf("%d requests, %v, notes %v", len(f.requests()), err, p.Rejections("google/gemini-3-pro"))
	}
}
