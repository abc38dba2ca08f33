// Package llm is the workspace's small provider interface: one streaming
// completion call that every model backend implements (the offline demo
// model; OpenAI and every OpenAI-compatible server; Anthropic; Gemini;
// Ollama, local and cloud: the packages beside this one), plus the types
// that cross it.
//
// The interface is ours rather than an SDK's so that the turn loop owns
// cancellation (one context per turn) and keeps partial text when a stream
// fails: Stream returns what arrived before an error together with the error.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Provider streams model completions.
type Provider interface {
	// Stream sends req and calls emit, on the calling goroutine, for every
	// delta as it arrives. It returns the assembled completion. On error the
	// returned Completion still holds everything received before the error,
	// so the caller can keep the partial answer. Stream returns promptly with
	// ctx.Err() (wrapped or not) when ctx is cancelled.
	Stream(ctx context.Context, req Request, emit func(Delta)) (Completion, error)
}

// Role of a message.
type Role string

// Message roles, in the OpenAI-style vocabulary the store and panel share.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one turn of the conversation sent to a model.
type Message struct {
	Role       Role
	Content    string
	Reasoning  string     // assistant reasoning, when the provider returned it
	ToolCalls  []ToolCall // assistant requests to run tools
	ToolCallID string     // on tool messages: the call this answers
	Images     []Image    // images attached to a user or tool message
	// ProviderData is opaque state an adapter asked to get back with this
	// assistant message on later turns, keyed by adapter (e.g. "anthropic"
	// keeps signed thinking blocks, which tool use with thinking requires).
	// Stores persist it; front ends ignore it.
	ProviderData map[string]string
}

// ToolCall is a model's request to run one tool.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // raw JSON object
}

// Image is an attached picture, e.g. a screenshot a tool produced.
type Image struct {
	MIME string
	Data []byte
}

// Tool describes one tool offered to the model.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // JSON Schema of the arguments object
}

// Effort is the requested reasoning effort.
type Effort string

// Reasoning efforts. EffortAuto (or empty) leaves the provider's default.
const (
	EffortAuto   Effort = "auto"
	EffortNone   Effort = "none"
	EffortLow    Effort = "low"
	EffortMedium Effort = "medium"
	EffortHigh   Effort = "high"
)

// ParseEffort validates a reasoning effort name.
func ParseEffort(s string) (Effort, error) {
	switch e := Effort(s); e {
	case "", EffortAuto:
		return EffortAuto, nil
	case EffortNone, EffortLow, EffortMedium, EffortHigh:
		return e, nil
	}
	return "", fmt.Errorf("unknown reasoning effort %q: use auto, none, low, medium or high", s)
}

// ValidateTemperature checks a sampling temperature.
func ValidateTemperature(t float64) error {
	if t < 0 || t > 2 || t != t {
		return fmt.Errorf("temperature %v is out of range: use a number from 0 to 2", t)
	}
	return nil
}

// Request is one completion request.
type Request struct {
	// Model is the provider's own model name (the part after "provider/").
	Model    string
	System   string
	Messages []Message
	Tools    []Tool
	Effort   Effort
	// Temperature is nil for the provider's default.
	Temperature *float64
}

// DeltaKind says what a Delta carries.
type DeltaKind int

// Delta kinds.
const (
	TextDelta DeltaKind = iota
	ReasoningDelta
	ToolCallDelta
)

// Delta is one streamed fragment.
type Delta struct {
	Kind DeltaKind
	// Text is the fragment of answer or reasoning text.
	Text string
	// ToolCall is set for ToolCallDelta: fragments of one call are matched
	// by Index (the call's position in this completion); ID and Name arrive
	// on the first fragment, Arguments is a piece of the JSON text.
	ToolCall ToolCallFragment
}

// ToolCallFragment is one piece of a streamed tool call.
type ToolCallFragment struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}

// Usage counts tokens, where the provider reports them.
type Usage struct {
	InputTokens     int
	OutputTokens    int
	ReasoningTokens int
}

// Add returns the sum of two counts, as for the steps of one turn.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:     u.InputTokens + v.InputTokens,
		OutputTokens:    u.OutputTokens + v.OutputTokens,
		ReasoningTokens: u.ReasoningTokens + v.ReasoningTokens,
	}
}

// Completion is an assembled model answer.
type Completion struct {
	Text         string
	Reasoning    string
	ToolCalls    []ToolCall
	FinishReason string
	Usage        Usage
	// ProviderData is copied into the assistant Message that records this
	// completion; see Message.ProviderData.
	ProviderData map[string]string
}

// ErrorKind classifies provider failures so front ends can say what to do.
type ErrorKind int

// Error kinds.
const (
	ErrOther       ErrorKind = iota
	ErrMissingKey            // no API key configured
	ErrAuth                  // 401/403
	ErrNotFound              // unknown model or endpoint (404)
	ErrRateLimited           // 429
	ErrServer                // 5xx after retries
	ErrBadRequest            // 400: the request was rejected
	ErrStream                // the stream broke or sent garbage
	ErrUnreachable           // connection refused, DNS, TLS
)

// Error is a provider failure with a message a person can act on. It never
// contains an API key.
type Error struct {
	Kind       ErrorKind
	Provider   string
	Model      string
	Status     int           // HTTP status, when there was one
	RetryAfter time.Duration // for ErrRateLimited, when the provider said
	Message    string
	Err        error
}

func (e *Error) Error() string {
	where := e.Provider
	if e.Model != "" {
		where += "/" + e.Model
	}
	if where == "" {
		return e.Message
	}
	return where + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the ErrorKind of err, or ErrOther.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ErrOther
}

// Catalog resolves the workspace's "provider/model" ids.
type Catalog interface {
	// Models lists every usable id: the default first, offline/demo last.
	Models() []string
	// Resolve returns the provider serving id and the provider's own model
	// name, or an error that says how to configure it.
	Resolve(id string) (Provider, string, error)
}

// RejectionReporter is implemented by providers that remember, for the
// session, the request parameters a model rejected (a temperature, an
// effort value) and send the accepted form from then on, so front ends can
// show it with the model's details.
type RejectionReporter interface {
	// Rejections lists, one line each, what model rejected and what is
	// sent instead; nil when it rejected nothing.
	Rejections(model string) []string
}

// WebSearcher is implemented by providers that run web searches on their
// own side (Gemini's Google Search grounding, Ollama's cloud search API),
// so the agent's WebSearch tool can go through the provider the person
// chose. A provider that does not implement it has no hosted search, and
// the tool must fail closed rather than answer from the model's memory.
type WebSearcher interface {
	// WebSearch runs query with the provider's search (model is the
	// provider's own model name, for providers whose search is a model
	// call) and returns what it found with the source links kept.
	WebSearch(ctx context.Context, model, query string) (SearchResult, error)
}

// WebSearchAvailability is implemented by WebSearchers whose search
// depends on their configuration: an OpenAI-style adapter serves servers
// with and without hosted search, and Ollama's search needs an ollama.com
// key.
type WebSearchAvailability interface {
	// WebSearchAvailable reports whether WebSearch can run at all.
	WebSearchAvailable() bool
}

// CanWebSearch reports whether p runs hosted web searches: it implements
// WebSearcher and, if it says, its search is available.
func CanWebSearch(p Provider) bool {
	if _, ok := p.(WebSearcher); !ok {
		return false
	}
	if a, ok := p.(WebSearchAvailability); ok {
		return a.WebSearchAvailable()
	}
	return true
}

// SearchResult is a hosted search's answer.
type SearchResult struct {
	// Text is the provider's answer (grounded search) or the results'
	// summaries (a search API), ready to give the model.
	Text    string
	Sources []SearchSource
}

// SearchSource is one page a search result came from.
type SearchSource struct {
	Title   string
	URL     string
	Snippet string
}
