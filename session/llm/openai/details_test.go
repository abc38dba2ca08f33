package openai

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/internal/llmtest"
)

// OpenRouter streams reasoning_details in fragments; the assembled objects
// (with their signatures) are kept with the assistant message, survive the
// on-disk store and go back unchanged on the tool continuation.
func TestOpenRouterReplaysReasoningDetailsThroughTheStore(t *testing.T) {
	t.Parallel()
	f := newFake(t,
		sse(
			chunk(`{"role":"assistant","reasoning":"Look","reasoning_details":[{"type":"reasoning.text","text":"Look","index":0,"format":"google-gemini-v1"}]}`),
			chunk(`{"reasoning":" it up","reasoning_details":[{"type":"reasoning.text","text":" it up","index":0}]}`),
			chunk(`{"reasoning_details":[{"type":"reasoning.encrypted","data":"c2lnbmVk","index":1,"format":"google-gemini-v1","id":"tool_0"}]}`),
			chunk(`{"tool_calls":[{"index":0,"id":"tool_0","type":"function","function":{"name":"BrowserRead","arguments":"{}"}}]}`),
			finish("tool_calls"),
		),
		sse(chunk(`{"content":"Example Domain."}`), finish("stop")),
	)
	p := f.provider(FlavorOpenRouter, nil)
	req := llm.Request{Model: "google/gemini-3-pro", Messages: []llm.Message{{Role: llm.RoleUser, Content: "read it"}},
		Tools: []llm.Tool{{Name: "BrowserRead"}}}
	_, c, err := collect(t, p, req)
	if err != nil {
		t.Fatal(err)
	}
	want := []any{
		map[string]any{"type": "reasoning.text", "text": "Look it up", "index": float64(0), "format": "google-gemini-v1"},
		map[string]any{"type": "reasoning.encrypted", "data": "c2lnbmVk", "index": float64(1), "format": "google-gemini-v1", "id": "tool_0"},
	}
	var kept []any
	if err := json.Unmarshal([]byte(c.ProviderData["openrouter"]), &kept); err != nil || !reflect.DeepEqual(kept, want) {
		t.Fatalf("kept %s (%v)", c.ProviderData["openrouter"], err)
	}

	req.Messages = llmtest.ThroughStore(t, "read it", c, "Example Domain")
	if _, c2, err := collect(t, p, req); err != nil || c2.Text != "Example Domain." {
		t.Fatalf("continuation: %q %v", c2.Text, err)
	}
	sent := at(f.last().Body, "messages", 1)
	if got := at(sent, "reasoning_details"); !reflect.DeepEqual(got, want) {
		t.Fatalf("replayed reasoning_details %v\nwant %v", got, want)
	}
}

// Other flavors neither keep nor send reasoning_details.
func TestReasoningDetailsOnlyForOpenRouter(t *testing.T) {
	t.Parallel()
	f := newFake(t, sse(chunk(`{"reasoning_details":[{"type":"reasoning.text","text":"x","index":0}],"content":"hi"}`), finish("stop")), sse(chunk(`{"content":"ok"}`), finish("stop")))
	p := f.provider(FlavorCompatible, nil)
	_, c, err := collect(t, p, llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}})
	if err != nil || c.ProviderData != nil {
		t.Fatalf("compatible server kept %v (%v)", c.ProviderData, err)
	}
	req := llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"},
		{Role: llm.RoleAssistant, Content: "hi", ProviderData: map[string]string{"openrouter": `[{"type":"reasoning.text"}]`}},
		{Role: llm.RoleUser, Content: "y"}}}
	if _, _, err := collect(t, p, req); err != nil {
		t.Fatal(err)
	}
	if got := at(f.last().Body, "messages", 1, "reasoning_details"); got != nil {
		t.Fatalf("sent to a compatible server: %v", got)
	}
}
