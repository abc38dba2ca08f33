package call

import (
	"regexp"
	"strconv"
	"strings"
)

// Option names a request option the adapters may drop or replace when a
// provider rejects it.
type Option string

// Options an adapter can retry without.
const (
	OptTemperature   Option = "temperature"
	OptEffort        Option = "effort" // reasoning_effort, reasoning, thinking, output_config
	OptStreamOptions Option = "stream_options"
	OptMaxTokens     Option = "max_tokens"
)

// Sent records which options an attempt put in its request, so a rejection
// is only acted on when it can be about something we sent.
type Sent struct {
	Temperature   bool
	Effort        string // the effort value sent, "" when none
	StreamOptions bool
	MaxTokens     int64 // 0 when not sent
	Summary       bool  // Responses API: reasoning.summary was requested
}

// Adjust tells an attempt what to leave out or change after a rejection.
// Each option is adjusted at most once per Stream call.
type Adjust struct {
	DropTemperature   bool
	DropEffort        bool
	Effort            string // replacement effort the provider said it supports
	DropStreamOptions bool
	MaxTokens         int64 // replacement max_tokens, 0 to keep ours
	DropSummary       bool
}

// fields maps the request fields providers name in rejections to our
// options. Only a field the error names counts (see Blamed): a message
// that merely mentions a word such as "reasoning" ("Gemini models require
// OpenRouter reasoning details to be preserved") is about something else.
var fields = map[string]Option{
	"temperature":                  OptTemperature,
	"reasoning_effort":             OptEffort,
	"reasoning.effort":             OptEffort,
	"reasoning":                    OptEffort,
	"effort":                       OptEffort,
	"output_config":                OptEffort,
	"output_config.effort":         OptEffort,
	"thinking":                     OptEffort,
	"thinking.type":                OptEffort,
	"thinking.budget_tokens":       OptEffort,
	"budget_tokens":                OptEffort,
	"think":                        OptEffort,
	"thinkingconfig":               OptEffort,
	"thinkinglevel":                OptEffort,
	"thinking_level":               OptEffort,
	"thinking_config":              OptEffort,
	"stream_options":               OptStreamOptions,
	"stream_options.include_usage": OptStreamOptions,
	"include_usage":                OptStreamOptions,
	"max_tokens":                   OptMaxTokens,
}

// fieldOption maps one field name as an error wrote it (any case, maybe a
// path such as "generationConfig.thinkingConfig.thinkingLevel" or
// "messages[1].content") to our option, or "".
func fieldOption(name string) Option {
	n := strings.ToLower(strings.Trim(name, " .:"))
	if i := strings.IndexByte(n, '['); i >= 0 {
		return "" // a message or tool element, never an option of ours
	}
	if o, ok := fields[n]; ok {
		return o
	}
	// The last segment of a path names the field itself.
	if i := strings.LastIndexByte(n, '.'); i >= 0 {
		return fields[n[i+1:]]
	}
	return ""
}

// quotedField matches a field name in quotes: 'temperature', "think",
// `reasoning_effort`.
var quotedField = regexp.MustCompile("['\"`]([A-Za-z_][A-Za-z0-9_.]*)['\"`]")

// leadingField matches the field a message starts with, as Anthropic
// ("temperature: …", "thinking.type: …"), Gemini ("Thinking level …") and
// Ollama ("think value …") write them.
var leadingField = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.]*)\b`)

// introducedField matches a field named after a colon or after the words
// servers use to introduce one: "argument supplied: reasoning_effort",
// "unknown field stream_options", "invalid option: temperature".
var introducedField = regexp.MustCompile(`(?i)(?::|\bfield|\bparameter|\bparam|\bargument|\boption)\s+([A-Za-z_][A-Za-z0-9_.]*)`)

// valuedField matches a field named as the owner of a value: "invalid
// reasoning value: 'minimal'", "think value \"low\" is not supported".
var valuedField = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_.]*)\s+value\b`)

// Blamed returns the option a 400-class rejection is about, or "" when the
// error names none of ours. The server's param field wins; otherwise the
// message must name the field: quoted, as its first word, or introduced
// as a field (after a colon, "field", "parameter", "argument", "option"),
// or as the owner of a value ("invalid reasoning value").
// The earliest such name in the message wins, because providers name the
// offending field first ("`temperature` may only be set to 1 when
// thinking is enabled").
func Blamed(he *HTTPError) Option {
	if he == nil {
		return ""
	}
	if he.Param != "" {
		if o := fieldOption(he.Param); o != "" {
			return o
		}
	}
	msg := he.Message
	best, bestAt := Option(""), len(msg)+1
	consider := func(re *regexp.Regexp) {
		for _, m := range re.FindAllStringSubmatchIndex(msg, -1) {
			if o := fieldOption(msg[m[2]:m[3]]); o != "" && m[2] < bestAt {
				best, bestAt = o, m[2]
			}
		}
	}
	consider(quotedField)
	consider(leadingField)
	consider(introducedField)
	consider(valuedField)
	return best
}

// next returns the adjustment for a rejection, or false when the rejection
// is not about an option we sent or that option was already adjusted.
func (a Adjust) next(he *HTTPError, sent Sent, supported []string) (Adjust, bool) {
	if he.Status != 400 && he.Status != 422 {
		return a, false
	}
	// Reasoning summaries need a verified organisation at OpenAI; the
	// refusal mentions "reasoning" too, but only the summary has to go.
	if sent.Summary && !a.DropSummary && strings.Contains(strings.ToLower(he.Param+" "+he.Message), "summar") {
		a.DropSummary = true
		return a, true
	}
	switch Blamed(he) {
	case OptTemperature:
		if sent.Temperature && !a.DropTemperature {
			a.DropTemperature = true
			return a, true
		}
	case OptEffort:
		if sent.Effort != "" && !a.DropEffort && a.Effort == "" {
			if v := FallbackEffort(he.Message, sent.Effort, supported); v != "" {
				a.Effort = v
			} else {
				a.DropEffort = true
			}
			return a, true
		}
	case OptStreamOptions:
		if sent.StreamOptions && !a.DropStreamOptions {
			a.DropStreamOptions = true
			return a, true
		}
	case OptMaxTokens:
		if sent.MaxTokens > 0 && a.MaxTokens == 0 {
			if n := allowedMaxTokens(he.Message, sent.MaxTokens); n > 0 {
				a.MaxTokens = n
				return a, true
			}
		}
	}
	return a, false
}

// effortRank orders the effort words providers use.
var effortRank = map[string]int{"none": 0, "minimal": 1, "low": 2, "medium": 3, "high": 4, "xhigh": 5, "max": 6}

var quoted = regexp.MustCompile("['\"`]([a-z]+)['\"`]")

// FallbackEffort picks, from the values a rejection message lists as
// supported (quoted words such as 'low', 'medium'), the one nearest to what
// we sent, preferring the lower on a tie. Only values in allowed count (all
// known effort words when allowed is empty). It returns "" when the message
// lists none, and the request should then go without the effort.
func FallbackEffort(msg, sent string, allowed []string) string {
	want, ok := effortRank[sent]
	if !ok {
		return ""
	}
	best, bestDist := "", 0
	for _, m := range quoted.FindAllStringSubmatch(strings.ToLower(msg), -1) {
		v := m[1]
		r, known := effortRank[v]
		if !known || v == sent || (len(allowed) > 0 && !contains(allowed, v)) {
			continue
		}
		d := r - want
		if d < 0 {
			d = -d
		}
		if best == "" || d < bestDist || (d == bestDist && r < effortRank[best]) {
			best, bestDist = v, d
		}
	}
	return best
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

var number = regexp.MustCompile(`\d+`)

// allowedMaxTokens reads the limit from a "max_tokens: 32000 > 8192, which
// is the maximum allowed" style message: the largest number in it that is
// below what we sent and large enough to be a token limit.
func allowedMaxTokens(msg string, sent int64) int64 {
	var best int64
	for _, s := range number.FindAllString(msg, -1) {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n >= sent || n < 256 {
			continue
		}
		if n > best {
			best = n
		}
	}
	return best
}
