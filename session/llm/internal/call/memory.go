package call

import (
	"fmt"
	"sort"
	"sync"

	"github.com/infer-workspace/infer/session/llm"
)

// Memory remembers, for the life of one adapter (a session), what each
// model rejected, so later requests to it send the accepted form at once
// instead of paying for the same 400 on every step of a tool loop and
// every title request. It is safe for concurrent use; a nil *Memory
// remembers nothing.
type Memory struct {
	mu sync.Mutex
	// general holds the adjustments that do not depend on the effort
	// asked for (temperature, stream_options, max_tokens, summaries).
	general map[string]Adjust
	// effort holds effort adjustments by model and requested effort: a
	// model that rejected "none" may well take "high".
	effort map[effortKey]Adjust
	notes  map[string]map[string]string // model → subject → note
}

type effortKey struct {
	model  string
	effort llm.Effort
}

// NewMemory returns an empty memory.
func NewMemory() *Memory {
	return &Memory{general: map[string]Adjust{}, effort: map[effortKey]Adjust{}, notes: map[string]map[string]string{}}
}

// start returns the adjustments already known for a request.
func (m *Memory) start(model string, effort llm.Effort) Adjust {
	if m == nil {
		return Adjust{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.general[model]
	e := m.effort[effortKey{model, effort}]
	a.DropEffort, a.Effort = e.DropEffort, e.Effort
	return a
}

// learn records the adjustment a rejection led to (from before to after),
// with a note a person can read.
func (m *Memory) learn(model string, effort llm.Effort, before, after Adjust, sent Sent) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	g := m.general[model]
	note := func(subject, text string) {
		if m.notes[model] == nil {
			m.notes[model] = map[string]string{}
		}
		m.notes[model][subject] = text
	}
	switch {
	case after.DropTemperature && !before.DropTemperature:
		g.DropTemperature = true
		note("temperature", "temperature rejected: left out")
	case after.DropStreamOptions && !before.DropStreamOptions:
		g.DropStreamOptions = true
		note("stream_options", "stream_options rejected: left out (no usage figures)")
	case after.MaxTokens != before.MaxTokens:
		g.MaxTokens = after.MaxTokens
		note("max_tokens", fmt.Sprintf("max_tokens %d rejected: sent as %d", sent.MaxTokens, after.MaxTokens))
	case after.DropSummary && !before.DropSummary:
		g.DropSummary = true
		note("summary", "reasoning summaries rejected: not asked for")
	case after.DropEffort != before.DropEffort || after.Effort != before.Effort:
		m.effort[effortKey{model, effort}] = Adjust{DropEffort: after.DropEffort, Effort: after.Effort}
		subject := "effort " + string(effort)
		if after.Effort != "" {
			note(subject, fmt.Sprintf("reasoning effort %s (sent as %q) rejected: sent as %q", effort, sent.Effort, after.Effort))
		} else {
			note(subject, fmt.Sprintf("reasoning effort %s (sent as %q) rejected: left out", effort, sent.Effort))
		}
	}
	m.general[model] = g
}

// Notes lists what model rejected this session, sorted, one line each.
func (m *Memory) Notes(model string) []string {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, n := range m.notes[model] {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
