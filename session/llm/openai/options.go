package openai

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/infer-workspace/infer/session/llm"
)

// family is what the option tables need to know about a model name.
type family int

const (
	famUnknown      family = iota // compatible servers' own models, new names
	famLegacy                     // gpt-3.5, gpt-4, gpt-4o, gpt-4.1: no reasoning_effort at all
	famO                          // o1, o3, o4-mini…: low/medium/high only
	famGPT5Early                  // gpt-5, gpt-5-mini, gpt-5-nano: lowest is "minimal"
	famGPT5Later                  // gpt-5.1 and later, including GPT-6 variants not listed below
	famGPT6LowFloor               // GPT-6 Astra, GPT-6.1 Sol: lowest is "low"
)

var datedSuffix = regexp.MustCompile(`-(\d{4}-\d{2}-\d{2}|\d{4})$`)

// baseModel strips what does not change a model's family: a vendor prefix
// ("openai/gpt-5" on OpenRouter), letter case and a release date.
func baseModel(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	if i := strings.Index(m, ":"); i >= 0 { // Ollama tags, OpenRouter variants
		m = m[:i]
	}
	return datedSuffix.ReplaceAllString(m, "")
}

var gptVersion = regexp.MustCompile(`^gpt-(\d+)(?:\.(\d+))?(?:-(.*))?$`)

func modelFamily(model string) family {
	m := baseModel(model)
	switch {
	case strings.HasPrefix(m, "chatgpt-"), strings.HasPrefix(m, "gpt-3"), strings.HasPrefix(m, "gpt-4"):
		return famLegacy
	case len(m) >= 2 && m[0] == 'o' && m[1] >= '1' && m[1] <= '9':
		return famO
	}
	g := gptVersion.FindStringSubmatch(m)
	if g == nil {
		return famUnknown
	}
	major, _ := strconv.Atoi(g[1])
	minor := 0
	if g[2] != "" {
		minor, _ = strconv.Atoi(g[2])
	}
	variant := g[3]
	switch {
	case major < 5:
		return famUnknown // unreachable after the gpt-3/gpt-4 prefixes above
	case major == 5 && minor == 0:
		if variant == "" || variant == "mini" || variant == "nano" {
			return famGPT5Early
		}
		return famUnknown // gpt-5-pro, gpt-5-codex…: the rejection retry finds their floor
	case major == 6 && minor == 0 && variant == "astra",
		major == 6 && minor == 1 && variant == "sol":
		return famGPT6LowFloor
	default:
		return famGPT5Later
	}
}

// EffortValue maps a reasoning effort to the reasoning_effort value sent to
// an OpenAI-style server ("" means leave the field out):
//
//	effort       | gpt-5.1+, GPT-6.1 Terra, GPT-6 Sol/Luna, unknown | gpt-5/-mini/-nano | GPT-6 Astra, GPT-6.1 Sol | o-series | gpt-4.x and older
//	auto         | omit                                             | omit              | omit                     | omit     | omit
//	none         | "none"                                           | "minimal"         | "low"                    | "low"    | omit
//	low/med/high | same                                             | same              | same                     | same     | omit
//
// Every flavor gets the same mapping: the model's name, not the server,
// decides (OpenRouter's "openai/gpt-5-mini" is still gpt-5-mini).
func EffortValue(model string, e llm.Effort) string {
	switch e {
	case "", llm.EffortAuto:
		return ""
	}
	fam := modelFamily(model)
	if fam == famLegacy {
		return ""
	}
	if e != llm.EffortNone {
		return string(e)
	}
	switch fam {
	case famGPT5Early:
		return "minimal"
	case famGPT6LowFloor, famO:
		return "low"
	default:
		return "none"
	}
}

// TemperatureValue maps a temperature to the top-level temperature field
// (nil: leave it out). Every flavor and model takes it as is; a model that
// refuses it is retried without it (call.Adjust's DropTemperature).
func TemperatureValue(t *float64) *float64 {
	if t == nil {
		return nil
	}
	v := *t
	return &v
}

// UsesResponses reports whether model must go through the Responses API.
// Only OpenAI itself has it. It is used for the models OpenAI serves only
// there (the -pro models, deep research, computer use, codex, cyber,
// rosalind and daybreak lines) and for GPT-6, where OpenAI recommends it;
// every other model uses Chat Completions, which every compatible server
// speaks.
func UsesResponses(f Flavor, model string) bool {
	if f != FlavorOpenAI {
		return false
	}
	m := baseModel(model)
	switch {
	case m == "codex-mini-latest": // served by Chat Completions too
		return false
	case strings.HasPrefix(m, "gpt-6"), strings.HasPrefix(m, "computer-use"), strings.HasSuffix(m, "-pro"):
		return true
	}
	for _, s := range []string{"deep-research", "codex", "-cyber", "rosalind", "daybreak"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}
