package anthropic

import (
	"strconv"
	"strings"

	"github.com/infer-workspace/infer/session/llm"
)

// claude is what the option tables need to know about a model id.
type claude struct {
	family    string // opus, sonnet, haiku, fable, mythos, instant; "" if none
	major     int
	minor     int
	versioned bool // false for ids without a version ("claude-mythos-preview")
}

// version is major.minor as one comparable number: 4.6 → 406.
func (c claude) version() int { return c.major*100 + c.minor }

func (c claude) is(family string, major, minor int) bool {
	return c.family == family && c.versioned && c.major == major && c.minor == minor
}

// atLeast reports a known version ≥ major.minor.
func (c claude) atLeast(major, minor int) bool {
	return c.versioned && c.version() >= major*100+minor
}

var families = map[string]bool{"opus": true, "sonnet": true, "haiku": true, "fable": true, "mythos": true, "instant": true}

// parseClaude reads family and version from the id shapes in use:
// claude-sonnet-4-5-20250929, claude-3-7-sonnet-latest, claude-opus-4-1,
// claude-sonnet-4.5 (gateways), anthropic.claude-sonnet-4-5-20250929-v1:0
// (Bedrock), claude-sonnet-4-5@20250929 (Vertex).
func parseClaude(model string) claude {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	if i := strings.Index(m, "claude"); i >= 0 {
		m = m[i:]
	}
	m = strings.NewReplacer(".", "-", "@", "-", ":", "-", "_", "-").Replace(m)
	toks := strings.Split(m, "-")
	var c claude
	for i, tok := range toks {
		if families[tok] && c.family == "" {
			c.family = tok
		}
		if n, ok := smallNumber(tok); ok && !c.versioned {
			c.major, c.versioned = n, true
			if i+1 < len(toks) {
				if minor, ok := smallNumber(toks[i+1]); ok {
					c.minor = minor
				}
			}
		}
	}
	return c
}

// smallNumber accepts version parts and rejects dates (20250929).
func smallNumber(s string) (int, bool) {
	if s == "" || len(s) > 2 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// Thinking is the reasoning part of a Messages request.
type Thinking struct {
	// Type is thinking.type: "" (left out), "disabled", "between_tools",
	// "adaptive" or "enabled".
	Type string
	// BudgetTokens goes with "enabled".
	BudgetTokens int64
	// Effort is output_config.effort, sent with "adaptive".
	Effort string
}

// on reports whether the model will think, which rules out a temperature.
func (t Thinking) on() bool { return t.Type == "adaptive" || t.Type == "enabled" }

// label names the setting for rejection matching; "" when nothing is sent.
func (t Thinking) label() string {
	switch {
	case t.Type == "":
		return ""
	case t.Effort != "":
		return t.Type + ":" + t.Effort
	case t.BudgetTokens > 0:
		return t.Type + ":" + strconv.FormatInt(t.BudgetTokens, 10)
	}
	return t.Type
}

// Thinking budgets for models that take budget_tokens. Each stays below
// the max_tokens we send (defaultMaxTokens), as the API requires.
var budgets = map[llm.Effort]int64{llm.EffortLow: 2048, llm.EffortMedium: 8192, llm.EffortHigh: 16384}

// ThinkingFor maps a reasoning effort to the Messages API settings:
//
//	effort       | Claude 4.6+, Opus 5.5, unversioned ids | Haiku 4.5, Claude 4.5 (and 3.7-4.1) | Claude 3.5 and older
//	auto         | omit thinking and output_config         | omit                                 | omit
//	none         | thinking {type: disabled}; Sonnet 5.5: {type: between_tools}; Fable 5.x, Mythos and Opus 5.5: omit (they always think and reject disabled)
//	low/med/high | thinking {type: adaptive} + output_config.effort | thinking {type: enabled, budget_tokens: 2048/8192/16384} | omit (no thinking)
func ThinkingFor(model string, e llm.Effort) Thinking {
	c := parseClaude(model)
	switch e {
	case llm.EffortNone:
		switch {
		case c.family == "fable", c.family == "mythos", c.is("opus", 5, 5):
			return Thinking{}
		case c.is("sonnet", 5, 5):
			return Thinking{Type: "between_tools"}
		}
		return Thinking{Type: "disabled"}
	case llm.EffortLow, llm.EffortMedium, llm.EffortHigh:
		switch {
		case !c.versioned, c.atLeast(4, 6):
			return Thinking{Type: "adaptive", Effort: string(e)}
		case c.atLeast(3, 7):
			return Thinking{Type: "enabled", BudgetTokens: budgets[e]}
		}
	}
	return Thinking{}
}

// TemperatureFor maps a temperature (0-2) to Anthropic's:
//
//	temperature | Claude 4.6 and earlier, unversioned ids | Claude 4.7+ | while thinking (adaptive or enabled)
//	omitted     | omit                                     | omit        | omit
//	0-2         | clamped to [0, 1]                        | omit        | omit (the API allows only the default)
func TemperatureFor(model string, t *float64, th Thinking) *float64 {
	if t == nil || th.on() {
		return nil
	}
	if parseClaude(model).atLeast(4, 7) {
		return nil
	}
	v := min(max(*t, 0), 1)
	return &v
}

// defaultMaxTokens is max_tokens, which the Messages API requires: the
// output limit of the older models, else 32000, which every current model
// allows. A model that allows less says so in its rejection and is retried
// with its limit.
func defaultMaxTokens(model string) int64 {
	c := parseClaude(model)
	switch {
	case c.versioned && c.version() < 305:
		return 4096
	case c.versioned && c.version() < 307:
		return 8192
	}
	return 32000
}
