package ollama

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/internal/llmtest"
)

// TestWireGoldens drives a tool round trip per effort and temperature
// against recorded Ollama streams and compares every request and the
// assembled completions with testdata/golden. Run with -update to
// rewrite them after checking the change is wanted.
func TestWireGoldens(t *testing.T) {
	temp := 0.3
	type row struct {
		model, thinking string
		effort          llm.Effort
		temp            *float64
	}
	const levels = `{"values":["low","medium","high"],"default":"medium"}`
	var rows []row
	for _, e := range []llm.Effort{llm.EffortAuto, llm.EffortNone, llm.EffortLow, llm.EffortMedium, llm.EffortHigh} {
		rows = append(rows, row{"gpt-oss:20b", levels, e, nil}, row{"gpt-oss:20b", levels, e, &temp})
	}
	rows = append(rows, row{"qwen3:8b", `{"values":[false,true],"default":true}`, llm.EffortNone, &temp},
		row{"qwen3:8b", `{"values":[false,true],"default":true}`, llm.EffortHigh, nil})
	for _, r := range rows {
		// No ":" in file names (module zips and Windows refuse it).
		name := fmt.Sprintf("%s_%s_temp-%s", strings.ReplaceAll(r.model, ":", "-"), r.effort, llmtest.TempName(r.temp))
		t.Run(name, func(t *testing.T) {
			var replies []llmtest.Reply
			for _, stream := range []string{"tool_call.ndjson", "answer.ndjson"} {
				if r.effort != llm.EffortAuto {
					replies = append(replies, show(r.thinking))
				}
				replies = append(replies, recorded(t, stream))
			}
			srv, p := fake(t, replies...)
			req := llm.Request{Model: r.model, System: "You drive the person's browser.", Effort: r.effort, Temperature: r.temp,
				Messages: []llm.Message{{Role: llm.RoleUser, Content: "What is the page title?"}},
				Tools: []llm.Tool{{Name: "BrowserRead", Description: "Read the page's text.",
					Parameters: json.RawMessage(`{"type":"object","properties":{"selector":{"type":"string","description":"CSS selector"}},"additionalProperties":false}`)}}}
			_, c1, err := llmtest.Collect(t, p, req)
			if err != nil {
				t.Fatal(err)
			}
			req.Messages = append(req.Messages,
				llm.Message{Role: llm.RoleAssistant, Content: c1.Text, Reasoning: c1.Reasoning, ToolCalls: c1.ToolCalls},
				llm.Message{Role: llm.RoleTool, ToolCallID: c1.ToolCalls[0].ID, Content: "Example Domain"})
			_, c2, err := llmtest.Collect(t, p, req)
			if err != nil {
				t.Fatal(err)
			}
			llmtest.CompareGolden(t, name, llmtest.NewGolden(srv.Requests(), c1, c2))
		})
	}
}
