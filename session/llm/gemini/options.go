package gemini

import (
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/infer-workspace/infer/session/llm"
)

// model is what the option tables need to know about a model id.
type model struct {
	family    string // "pro", "flash", "flash-lite"; "" for others (gemma, embeddings, unknown)
	major     int
	minor     int
	versioned bool // false for aliases such as gemini-flash-latest
	gemini    bool // a gemini-* id at all
}

func (m model) atLeast(major, minor int) bool {
	return m.versioned && (m.major > major || (m.major == major && m.minor >= minor))
}

// parseModel reads family and version from the id shapes Google uses:
// gemini-3.8-flash, gemini-3-pro-preview, gemini-2.5-flash-lite,
// models/gemini-2.5-pro, gemini-flash-latest.
func parseModel(id string) model {
	s := strings.ToLower(strings.TrimSpace(id))
	if i := strings.LastIndex(s, "/"); i >= 0 {
		s = s[i+1:]
	}
	var m model
	if !strings.HasPrefix(s, "gemini-") {
		return m
	}
	m.gemini = true
	toks := strings.Split(strings.TrimPrefix(s, "gemini-"), "-")
	if len(toks) > 0 {
		if major, minor, ok := version(toks[0]); ok {
			m.major, m.minor, m.versioned = major, minor, true
			toks = toks[1:]
		}
	}
	for i, t := range toks {
		switch t {
		case "pro":
			m.family = "pro"
		case "flash":
			m.family = "flash"
			if i+1 < len(toks) && toks[i+1] == "lite" {
				m.family = "flash-lite"
			}
		}
		if m.family != "" {
			break
		}
	}
	return m
}

// version parses "3", "2.5" or "3.8".
func version(s string) (major, minor int, ok bool) {
	a, b, dotted := strings.Cut(s, ".")
	major, err := strconv.Atoi(a)
	if err != nil || len(a) > 2 {
		return 0, 0, false
	}
	if dotted {
		if minor, err = strconv.Atoi(b); err != nil || len(b) > 2 {
			return 0, 0, false
		}
	}
	return major, minor, true
}

// levelBased reports a model that takes thinkingLevel (Gemini 3 and the
// unversioned aliases, which point at the current generation).
func (m model) levelBased() bool {
	return m.gemini && (m.atLeast(3, 0) || !m.versioned) && (m.family != "" || !m.versioned)
}

// Levels lists the thinkingLevel values a model accepts, lowest first, or
// nil for models that take a token budget or do not think.
func Levels(modelID string) []genai.ThinkingLevel {
	m := parseModel(modelID)
	if !m.levelBased() {
		return nil
	}
	switch {
	case m.family == "pro" && m.versioned && !m.atLeast(3, 1):
		return []genai.ThinkingLevel{genai.ThinkingLevelLow, genai.ThinkingLevelHigh}
	case m.family == "pro":
		return []genai.ThinkingLevel{genai.ThinkingLevelLow, genai.ThinkingLevelMedium, genai.ThinkingLevelHigh}
	}
	return []genai.ThinkingLevel{genai.ThinkingLevelMinimal, genai.ThinkingLevelLow, genai.ThinkingLevelMedium, genai.ThinkingLevelHigh}
}

// levelRank orders thinking levels.
var levelRank = map[genai.ThinkingLevel]int{
	genai.ThinkingLevelMinimal: 1, genai.ThinkingLevelLow: 2, genai.ThinkingLevelMedium: 3, genai.ThinkingLevelHigh: 4,
}

// effortLevel is the level each effort asks for before the model's own
// list is consulted; "none" asks for the least thinking there is.
var effortLevel = map[llm.Effort]genai.ThinkingLevel{
	llm.EffortNone: genai.ThinkingLevelMinimal, llm.EffortLow: genai.ThinkingLevelLow,
	llm.EffortMedium: genai.ThinkingLevelMedium, llm.EffortHigh: genai.ThinkingLevelHigh,
}

// nearestLevel picks from levels the one nearest to want, the lower on a
// tie (the person asked for less thinking than the next level up).
func nearestLevel(levels []genai.ThinkingLevel, want genai.ThinkingLevel) genai.ThinkingLevel {
	best, bestDist := genai.ThinkingLevel(""), 0
	for _, l := range levels {
		d := levelRank[l] - levelRank[want]
		if d < 0 {
			d = -d
		}
		if best == "" || d < bestDist {
			best, bestDist = l, d
		}
	}
	return best
}

// Token budgets for the Gemini 2.5 models, which take thinkingBudget.
var budgets = map[llm.Effort]int32{llm.EffortLow: 1024, llm.EffortMedium: 8192}

// ThinkingFor maps a reasoning effort to generationConfig.thinkingConfig
// (nil: leave it out, the model's default):
//
//	effort | Gemini 3+ Flash / Flash-Lite, aliases | Gemini 3 Pro | Gemini 3.1+ Pro | Gemini 2.5 Pro  | Gemini 2.5 Flash / Flash-Lite | 2.0 and older, others
//	auto   | omit                                   | omit         | omit            | omit            | omit                          | omit
//	none   | MINIMAL                                | LOW          | LOW             | budget 128      | budget 0 (off)                | omit
//	low    | LOW                                    | LOW          | LOW             | budget 1024     | budget 1024                   | omit
//	medium | MEDIUM                                 | LOW          | MEDIUM          | budget 8192     | budget 8192                   | omit
//	high   | HIGH                                   | HIGH         | HIGH            | budget 32768    | budget 24576                  | omit
//
// Gemini 3 Pro and 2.5 Pro cannot stop thinking, so none gets their least.
// Gemini 3 Pro has no MEDIUM: medium is as near LOW as HIGH, and the lower
// wins, as in every other fallback. Thought summaries are asked for
// whenever thinking is asked for, so reasoning streams.
func ThinkingFor(modelID string, e llm.Effort) *genai.ThinkingConfig {
	want, ok := effortLevel[e]
	if !ok {
		return nil
	}
	if levels := Levels(modelID); levels != nil {
		return &genai.ThinkingConfig{ThinkingLevel: nearestLevel(levels, want), IncludeThoughts: e != llm.EffortNone}
	}
	m := parseModel(modelID)
	if !m.gemini || !m.atLeast(2, 5) || m.family == "" {
		return nil
	}
	var budget int32
	switch e {
	case llm.EffortNone:
		if m.family == "pro" {
			budget = 128
		}
	case llm.EffortHigh:
		budget = 24576
		if m.family == "pro" {
			budget = 32768
		}
	default:
		budget = budgets[e]
	}
	return &genai.ThinkingConfig{ThinkingBudget: &budget, IncludeThoughts: budget > 0 && e != llm.EffortNone}
}

// label names what a thinking config sends, in the lower-case words that
// rejection messages quote, so call.FallbackEffort can pick a replacement.
func label(tc *genai.ThinkingConfig) string {
	switch {
	case tc == nil:
		return ""
	case tc.ThinkingLevel != "":
		return strings.ToLower(string(tc.ThinkingLevel))
	case tc.ThinkingBudget != nil:
		return "budget-" + strconv.Itoa(int(*tc.ThinkingBudget))
	}
	return ""
}

// supported lists a model's levels as lower-case effort words.
func supported(modelID string) []string {
	var out []string
	for _, l := range Levels(modelID) {
		out = append(out, strings.ToLower(string(l)))
	}
	return out
}

// replaceLevel turns a level word a rejection suggested back into a config.
func replaceLevel(word string, include bool) *genai.ThinkingConfig {
	return &genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevel(strings.ToUpper(word)), IncludeThoughts: include}
}

// needsSignatures reports a model that rejects a function-call turn sent
// back without its thought signatures: Gemini 3 and later, and the aliases
// that point at them. Gemini 2.5 accepts them missing.
func needsSignatures(modelID string) bool {
	m := parseModel(modelID)
	return m.gemini && (m.atLeast(3, 0) || !m.versioned)
}
