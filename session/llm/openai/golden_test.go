package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/internal/llmtest"
)

// recorded replays a stream recorded in each provider's own format.
func recorded(t *testing.T, name string) llmtest.Reply {
	return llmtest.Stream(t, name, "text/event-stream")
}

// TestWireGoldens drives a tool round trip per effort and temperature
// against recorded streams (OpenAI's Chat Completions and Responses,
// OpenRouter's, PayPerQ's) and compares the request bodies and the
// assembled completions with testdata/golden, so an SDK bump that changes
// the wire (or how a stream is read) fails here. Run with -update to
// rewrite them after checking the change is wanted.
func TestWireGoldens(t *testing.T) {
	t.Parallel()
	temp := 0.3
	type route struct {
		name    string
		flavor  Flavor
		model   string
		streams [2]string
	}
	routes := []route{
		{"openai-chat", FlavorOpenAI, "gpt-5.1", [2]string{"chat_tool_call.sse", "chat_answer.sse"}},
		{"openai-chat", FlavorOpenAI, "gpt-5", [2]string{"chat_tool_call.sse", "chat_answer.sse"}},
		{"openai-responses", FlavorOpenAI, "gpt-6-sol", [2]string{"responses_tool_call.sse", "responses_answer.sse"}},
		{"openrouter", FlavorOpenRouter, "google/gemini-3-pro-preview", [2]string{"openrouter_tool_call.sse", "openrouter_answer.sse"}},
		{"payperq", FlavorPayPerQ, "auto", [2]string{"chat_tool_call.sse", "chat_answer.sse"}},
	}
	for _, rt := range routes {
		for _, e := range []llm.Effort{llm.EffortAuto, llm.EffortNone, llm.EffortLow, llm.EffortMedium, llm.EffortHigh} {
			for _, tp := range []*float64{nil, &temp} {
				name := fmt.Sprintf("%s_%s_%s_temp-%s", rt.name, safeName(rt.model), e, llmtest.TempName(tp))
				t.Run(name, func(t *testing.T) {
					f := newFake(t, recorded(t, rt.streams[0]), recorded(t, rt.streams[1]))
					p := f.provider(rt.flavor, nil)
					req := llm.Request{Model: rt.model, System: "You drive the person's browser.", Effort: e, Temperature: tp,
						Messages: []llm.Message{{Role: llm.RoleUser, Content: "What is the page title?"}},
						Tools: []llm.Tool{{Name: "BrowserRead", Description: "Read the page's text.",
							Parameters: json.RawMessage(`{"type":"object","properties":{"selector":{"type":"string","description":"CSS selector"}},"additionalProperties":false}`)}}}
					_, c1, err := collect(t, p, req)
					if err != nil {
						t.Fatal(err)
					}
					if len(c1.ToolCalls) != 1 {
						t.Fatalf("first step: %+v", c1)
					}
					req.Messages = append(req.Messages,
						llm.Message{Role: llm.RoleAssistant, Content: c1.Text, Reasoning: c1.Reasoning, ToolCalls: c1.ToolCalls, ProviderData: c1.ProviderData},
						llm.Message{Role: llm.RoleTool, ToolCallID: c1.ToolCalls[0].ID, Content: "Example Domain"})
					_, c2, err := collect(t, p, req)
					if err != nil {
						t.Fatal(err)
					}
					// The documented shapes, independently of the files.
					for _, rec := range f.requests() {
						checkShape(t, rt.flavor, rt.model, e, tp, rec)
					}
					llmtest.CompareGolden(t, name, llmtest.NewGolden(f.requests(), c1, c2))
				})
			}
		}
	}
}

// checkShape checks one request against the spec's mappings: Chat
// Completions carry reasoning_effort and temperature at the top level, the
// Responses API reasoning.effort; both stream.
func checkShape(t *testing.T, f Flavor, model string, e llm.Effort, tp *float64, rec llmtest.Recorded) {
	t.Helper()
	wantEffort := EffortValue(model, e)
	var gotEffort any
	if UsesResponses(f, model) {
		if rec.Path != "/v1/responses" {
			t.Fatalf("path %s", rec.Path)
		}
		gotEffort = at(rec.Body, "reasoning", "effort")
	} else {
		if rec.Path != "/v1/chat/completions" {
			t.Fatalf("path %s", rec.Path)
		}
		gotEffort = rec.Body["reasoning_effort"]
	}
	if (wantEffort == "" && gotEffort != nil) || (wantEffort != "" && gotEffort != wantEffort) {
		t.Errorf("effort %s on %s: sent %v, want %q", e, model, gotEffort, wantEffort)
	}
	if got := rec.Body["temperature"]; (tp == nil && got != nil) || (tp != nil && got != *tp) {
		t.Errorf("temperature sent %v, want %v", got, tp)
	}
	if rec.Body["stream"] != true {
		t.Errorf("not streamed: %v", rec.Body)
	}
}

func safeName(model string) string {
	return string(bytes.ReplaceAll([]byte(model), []byte("/"), []byte("~")))
}
