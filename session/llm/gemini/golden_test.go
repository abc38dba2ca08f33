package gemini

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/internal/llmtest"
)

// TestWireGoldens drives a tool round trip per effort and temperature
// against recorded Gemini streams and compares the request bodies and the
// assembled completions with testdata/golden, so an SDK bump that changes
// the wire (or how a stream is read) fails here. Run with -update to
// rewrite them after checking the change is wanted.
func TestWireGoldens(t *testing.T) {
	temp := 0.3
	type row struct {
		model  string
		effort llm.Effort
		temp   *float64
	}
	var rows []row
	for _, e := range []llm.Effort{llm.EffortAuto, llm.EffortNone, llm.EffortLow, llm.EffortMedium, llm.EffortHigh} {
		rows = append(rows, row{DefaultModel, e, nil}, row{DefaultModel, e, &temp})
	}
	rows = append(rows, row{"gemini-2.5-flash", llm.EffortHigh, &temp}, row{"gemini-3-pro-preview", llm.EffortMedium, nil})
	for _, r := range rows {
		name := fmt.Sprintf("%s_%s_temp-%s", r.model, r.effort, llmtest.TempName(r.temp))
		t.Run(name, func(t *testing.T) {
			srv, p := fake(t, recorded(t, "tool_call.sse"), recorded(t, "answer.sse"))
			req := llm.Request{Model: r.model, System: "You drive the person's browser.", Effort: r.effort, Temperature: r.temp,
				Messages: []llm.Message{{Role: llm.RoleUser, Content: "What is the page title?"}},
				Tools: []llm.Tool{{Name: "BrowserRead", Description: "Read the page's text.",
					Parameters: json.RawMessage(`{"type":"object","properties":{"selector":{"type":"string","description":"CSS selector"}},"additionalProperties":false}`)}}}
			_, c1, err := llmtest.Collect(t, p, req)
			if err != nil {
				t.Fatal(err)
			}
			// The ids infer makes up for calls without one are random; pin
			// them so the files compare.
			c1 = pinIDs(c1)
			req.Messages = append(req.Messages,
				llm.Message{Role: llm.RoleAssistant, Content: c1.Text, Reasoning: c1.Reasoning, ToolCalls: c1.ToolCalls, ProviderData: c1.ProviderData},
				llm.Message{Role: llm.RoleTool, ToolCallID: c1.ToolCalls[0].ID, Content: "Example Domain"})
			_, c2, err := llmtest.Collect(t, p, req)
			if err != nil {
				t.Fatal(err)
			}
			llmtest.CompareGolden(t, name, llmtest.NewGolden(srv.Requests(), c1, c2))
		})
	}
}

func pinIDs(c llm.Completion) llm.Completion {
	var s saved
	if raw := c.ProviderData[dataKey]; raw != "" {
		_ = json.Unmarshal([]byte(raw), &s)
	}
	for i := range c.ToolCalls {
		id := fmt.Sprintf("gemini_pinned_%d", i)
		for j, syn := range s.Synthetic {
			if syn == c.ToolCalls[i].ID {
				s.Synthetic[j] = id
			}
		}
		c.ToolCalls[i].ID = id
	}
	c.ProviderData = encodeSaved(s)
	return c
}
