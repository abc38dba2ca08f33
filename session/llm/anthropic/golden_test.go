package anthropic

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
	lt "github.com/infer-workspace/infer/session/llm/internal/llmtest"
)

func recorded(t *testing.T, name string) lt.Reply {
	return lt.Stream(t, name, "text/event-stream")
}

// TestWireGoldens drives a tool round trip per effort and temperature
// against recorded Messages API streams (a signed thinking block and a
// tool_use, then text) and compares the request bodies and the assembled
// completions with testdata/golden, so an SDK bump that changes the wire
// fails here. Run with -update to rewrite them after checking the change
// is wanted.
func TestWireGoldens(t *testing.T) {
	temp := 0.3
	// One model per row of the effort table: adaptive (4.6), budget (4.5),
	// between_tools (Sonnet 5.5), always thinking (Fable, Mythos), and 4.7+
	// where temperature is left out.
	models := []string{"claude-sonnet-4-6", "claude-haiku-4-5", "claude-sonnet-5-5", "claude-fable-5", "claude-mythos-preview", "claude-opus-4-7"}
	for _, model := range models {
		for _, e := range []llm.Effort{llm.EffortAuto, llm.EffortNone, llm.EffortLow, llm.EffortMedium, llm.EffortHigh} {
			for _, tp := range []*float64{nil, &temp} {
				name := fmt.Sprintf("%s_%s_temp-%s", model, e, lt.TempName(tp))
				t.Run(name, func(t *testing.T) {
					s := lt.New(t, recorded(t, "tool_call.sse"), recorded(t, "answer.sse"))
					p := provider(s, nil)
					req := llm.Request{Model: model, System: "You drive the person's browser.", Effort: e, Temperature: tp,
						Messages: []llm.Message{{Role: llm.RoleUser, Content: "What is the page title?"}},
						Tools: []llm.Tool{{Name: "BrowserRead", Description: "Read the page's text.",
							Parameters: json.RawMessage(`{"type":"object","properties":{"selector":{"type":"string","description":"CSS selector"}},"additionalProperties":false}`)}}}
					_, c1, err := lt.Collect(t, p, req)
					if err != nil {
						t.Fatal(err)
					}
					if len(c1.ToolCalls) != 1 {
						t.Fatalf("first step: %+v", c1)
					}
					req.Messages = append(req.Messages,
						llm.Message{Role: llm.RoleAssistant, Content: c1.Text, Reasoning: c1.Reasoning, ToolCalls: c1.ToolCalls, ProviderData: c1.ProviderData},
						llm.Message{Role: llm.RoleTool, ToolCallID: c1.ToolCalls[0].ID, Content: "Example Domain"})
					_, c2, err := lt.Collect(t, p, req)
					if err != nil {
						t.Fatal(err)
					}
					th := ThinkingFor(model, e)
					wantTemp := TemperatureFor(model, tp, th)
					for _, rec := range s.Requests() {
						if rec.Path != "/v1/messages" || rec.Body["stream"] != true {
							t.Fatalf("request %s %v", rec.Path, rec.Body)
						}
						if got := lt.At(rec.Body, "thinking", "type"); (th.Type == "" && got != nil) || (th.Type != "" && got != th.Type) {
							t.Errorf("thinking.type %v, want %q", got, th.Type)
						}
						if got := rec.Body["temperature"]; (wantTemp == nil && got != nil) || (wantTemp != nil && got != *wantTemp) {
							t.Errorf("temperature %v, want %v", got, wantTemp)
						}
					}
					lt.CompareGolden(t, name, lt.NewGolden(s.Requests(), c1, c2))
				})
			}
		}
	}
}
