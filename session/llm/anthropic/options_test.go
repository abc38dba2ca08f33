package anthropic

import (
	"testing"

	"github.com/infer-workspace/infer/session/llm"
)

func TestParseClaude(t *testing.T) {
	rows := []struct {
		id   string
		want claude
	}{
		{"claude-sonnet-4-5", claude{"sonnet", 4, 5, true}},
		{"claude-sonnet-4-5-20250929", claude{"sonnet", 4, 5, true}},
		{"claude-haiku-4-5-20251001", claude{"haiku", 4, 5, true}},
		{"claude-opus-4-1-20250805", claude{"opus", 4, 1, true}},
		{"claude-sonnet-4-20250514", claude{"sonnet", 4, 0, true}},
		{"claude-opus-4-6", claude{"opus", 4, 6, true}},
		{"claude-opus-4-7", claude{"opus", 4, 7, true}},
		{"claude-3-7-sonnet-latest", claude{"sonnet", 3, 7, true}},
		{"claude-3-5-haiku-20241022", claude{"haiku", 3, 5, true}},
		{"claude-3-haiku-20240307", claude{"haiku", 3, 0, true}},
		{"claude-sonnet-5-5", claude{"sonnet", 5, 5, true}},
		{"claude-opus-5-5", claude{"opus", 5, 5, true}},
		{"claude-fable-5", claude{"fable", 5, 0, true}},
		{"claude-fable-5-2", claude{"fable", 5, 2, true}},
		{"claude-mythos-preview", claude{"mythos", 0, 0, false}},
		{"anthropic/claude-sonnet-4.5", claude{"sonnet", 4, 5, true}},
		{"anthropic.claude-sonnet-4-5-20250929-v1:0", claude{"sonnet", 4, 5, true}},
		{"claude-sonnet-4-5@20250929", claude{"sonnet", 4, 5, true}},
		{"claude-2.1", claude{"", 2, 1, true}},
		{"my-gateway-model", claude{}},
	}
	for _, r := range rows {
		if got := parseClaude(r.id); got != r.want {
			t.Errorf("parseClaude(%q) = %+v, want %+v", r.id, got, r.want)
		}
	}
}

func TestThinkingForTable(t *testing.T) {
	adaptive := func(e string) Thinking { return Thinking{Type: "adaptive", Effort: e} }
	enabled := func(b int64) Thinking { return Thinking{Type: "enabled", BudgetTokens: b} }
	rows := []struct {
		model  string
		effort llm.Effort
		want   Thinking
	}{
		// auto: nothing sent.
		{"claude-sonnet-4-5", llm.EffortAuto, Thinking{}},
		{"claude-opus-4-6", "", Thinking{}},
		{"claude-fable-5", llm.EffortAuto, Thinking{}},

		// none.
		{"claude-sonnet-4-5", llm.EffortNone, Thinking{Type: "disabled"}},
		{"claude-haiku-4-5", llm.EffortNone, Thinking{Type: "disabled"}},
		{"claude-opus-4-6", llm.EffortNone, Thinking{Type: "disabled"}},
		{"claude-opus-4-7", llm.EffortNone, Thinking{Type: "disabled"}},
		{"claude-3-5-haiku-latest", llm.EffortNone, Thinking{Type: "disabled"}},
		{"claude-sonnet-5-5", llm.EffortNone, Thinking{Type: "between_tools"}},
		{"claude-fable-5", llm.EffortNone, Thinking{}},
		{"claude-fable-5-1", llm.EffortNone, Thinking{}},
		{"claude-fable-5-2", llm.EffortNone, Thinking{}},
		{"claude-opus-5-5", llm.EffortNone, Thinking{}},
		{"claude-mythos-preview", llm.EffortNone, Thinking{}},
		{"claude-mythos-5", llm.EffortNone, Thinking{}},

		// low / medium / high.
		{"claude-opus-4-6", llm.EffortLow, adaptive("low")},
		{"claude-sonnet-4-6", llm.EffortMedium, adaptive("medium")},
		{"claude-opus-4-7", llm.EffortHigh, adaptive("high")},
		{"claude-opus-5-5", llm.EffortHigh, adaptive("high")},
		{"claude-sonnet-5-5", llm.EffortLow, adaptive("low")},
		{"claude-fable-5", llm.EffortMedium, adaptive("medium")},
		{"claude-mythos-preview", llm.EffortHigh, adaptive("high")},
		{"claude-haiku-4-5", llm.EffortLow, enabled(2048)},
		{"claude-sonnet-4-5-20250929", llm.EffortMedium, enabled(8192)},
		{"claude-opus-4-5", llm.EffortHigh, enabled(16384)},
		{"claude-opus-4-1", llm.EffortHigh, enabled(16384)},
		{"claude-3-7-sonnet-latest", llm.EffortLow, enabled(2048)},
		{"claude-3-5-sonnet-latest", llm.EffortHigh, Thinking{}},
	}
	for _, r := range rows {
		if got := ThinkingFor(r.model, r.effort); got != r.want {
			t.Errorf("ThinkingFor(%q, %q) = %+v, want %+v", r.model, r.effort, got, r.want)
		}
	}
}

func TestTemperatureForTable(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	rows := []struct {
		model string
		in    *float64
		th    Thinking
		want  *float64
	}{
		{"claude-sonnet-4-5", nil, Thinking{}, nil},
		{"claude-sonnet-4-5", f(0.3), Thinking{}, f(0.3)},
		{"claude-sonnet-4-5", f(1.7), Thinking{}, f(1)},
		{"claude-sonnet-4-5", f(0), Thinking{}, f(0)},
		{"claude-opus-4-6", f(2), Thinking{}, f(1)},
		{"claude-haiku-4-5", f(0.5), Thinking{Type: "disabled"}, f(0.5)},
		{"claude-3-5-haiku-latest", f(1.2), Thinking{}, f(1)},
		{"claude-mythos-preview", f(0.5), Thinking{}, f(0.5)},
		// 4.7 and later: omitted.
		{"claude-opus-4-7", f(0.5), Thinking{}, nil},
		{"claude-opus-4-8", f(0.5), Thinking{}, nil},
		{"claude-sonnet-5-5", f(0.5), Thinking{Type: "between_tools"}, nil},
		{"claude-fable-5", f(0.5), Thinking{}, nil},
		// Thinking allows only the default temperature.
		{"claude-sonnet-4-5", f(0.5), Thinking{Type: "enabled", BudgetTokens: 2048}, nil},
		{"claude-opus-4-6", f(0.5), Thinking{Type: "adaptive", Effort: "low"}, nil},
	}
	for _, r := range rows {
		got := TemperatureFor(r.model, r.in, r.th)
		if (got == nil) != (r.want == nil) || (got != nil && *got != *r.want) {
			t.Errorf("TemperatureFor(%q, %v, %+v) = %v, want %v", r.model, r.in, r.th, got, r.want)
		}
	}
}

func TestDefaultMaxTokens(t *testing.T) {
	for model, want := range map[string]int64{
		"claude-3-haiku-20240307": 4096, "claude-2.1": 4096, "claude-3-5-haiku-latest": 8192,
		"claude-3-7-sonnet-latest": 32000, "claude-sonnet-4-5": 32000, "claude-mythos-preview": 32000,
	} {
		if got := defaultMaxTokens(model); got != want {
			t.Errorf("defaultMaxTokens(%q) = %d, want %d", model, got, want)
		}
	}
	if defaultMaxTokens("claude-sonnet-4-5") <= budgets[llm.EffortHigh] {
		t.Error("max_tokens must exceed the largest thinking budget")
	}
}
