package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/tools"
)

// Output formats of infer headless.
const (
	outputText = "text"
	outputJSON = "json"
	outputAGUI = "ag-ui"
)

// renderer turns one headless run into one output format on stdout. The
// headless loop calls it from one goroutine, in the order things happened.
// An error means stdout is no longer usable; the loop then stops the run.
type renderer interface {
	// resumed is called once, before the run, when --session-id resumed a
	// stored conversation.
	resumed(snap session.Snapshot) error
	// chat receives every AG-UI event of the run, in order; notice marks
	// the events of a text message that is a notice for panels (see
	// session.Chat).
	chat(e events.Event, notice bool) error
	// toolDone reports how a tool call of the run ended, just after its
	// result.
	toolDone(t session.ToolFinished) error
	// approvalOpened announces a request; answerable says whether stdin
	// can still answer it.
	approvalOpened(a session.Approval, answerable bool) error
	approvalResolved(a session.Approval) error
	usage(u llm.Usage) error
	// failedBeforeStart reports a turn that ended before its RUN_STARTED
	// (the workspace could not even record the message).
	failedBeforeStart(message string) error
	// end is called once after the turn, to write what was held back.
	end() error
}

// toolOutcome is a finished tool call as the text and JSON formats show it.
type toolOutcome struct {
	ID, Name string
	OK       bool
	Duration time.Duration
	Output   string
}

// runEnd is the run's terminal event.
type runEnd struct {
	Finished      bool
	Message, Code string
	RunID         string
	// seen is false when the terminal event never arrived (events lost).
	seen bool
}

// itemSink receives a run as the text and JSON formats need it: whole
// tool calls instead of start/args/end events, tool results joined with
// their outcome, and the notices the agent adds for panels left out.
type itemSink interface {
	runStarted(threadID, runID string) error
	text(messageID, delta string) error
	textEnd(messageID string) error
	reasoning(messageID, delta string) error
	reasoningEnd(messageID string) error
	toolCall(id, name, args string) error
	toolResult(r toolOutcome) error
	approvalOpened(a session.Approval, answerable bool) error
	approvalResolved(a session.Approval) error
	usage(u llm.Usage) error
	// ended is called once, after usage, so the terminal line comes last.
	ended(e runEnd) error
}

// itemRenderer adapts an itemSink to renderer, assembling the AG-UI
// stream into items.
//
// The agent closes an interrupted or failed run with a short text message
// ("⏹ Interrupted.", "⚠ <error>") because opentask's panel only leaves its
// working state on TEXT_MESSAGE_END. That notice is not part of the
// conversation and the error already has its own line, so a text message
// the workspace marks as a notice is held until the next event shows
// whether a RUN_ERROR follows; if not (a moved conversation's notice), it
// is written after all.
type itemRenderer struct {
	sink itemSink

	calls   map[string]*pendingCall
	results []toolOutcome // results waiting for their ToolFinished

	held       *heldMessage
	final      runEnd
	terminated bool
}

type pendingCall struct {
	name string
	args strings.Builder
	done *session.ToolFinished
}

type heldMessage struct {
	id     string
	deltas []string
	closed bool
}

func newItemRenderer(sink itemSink) *itemRenderer {
	return &itemRenderer{sink: sink, calls: map[string]*pendingCall{}}
}

func (r *itemRenderer) resumed(session.Snapshot) error { return nil }

func (r *itemRenderer) chat(e events.Event, notice bool) error {
	if err := r.settle(e); err != nil {
		return err
	}
	switch ev := e.(type) {
	case *events.RunStartedEvent:
		return r.sink.runStarted(ev.ThreadIDValue, ev.RunIDValue)
	case *events.RunFinishedEvent:
		r.final = runEnd{Finished: true, RunID: ev.RunIDValue, seen: true}
	case *events.RunErrorEvent:
		r.final = runEnd{Message: ev.Message, RunID: ev.RunIDValue, seen: true}
		if ev.Code != nil {
			r.final.Code = *ev.Code
		}
	case *events.TextMessageContentEvent:
		if r.held != nil && r.held.id == ev.MessageID {
			r.held.deltas = append(r.held.deltas, ev.Delta)
			return nil
		}
		if notice {
			r.held = &heldMessage{id: ev.MessageID, deltas: []string{ev.Delta}}
			return nil
		}
		return r.sink.text(ev.MessageID, ev.Delta)
	case *events.TextMessageEndEvent:
		if r.held != nil && r.held.id == ev.MessageID {
			r.held.closed = true
			return nil
		}
		return r.sink.textEnd(ev.MessageID)
	case *events.ReasoningMessageContentEvent:
		return r.sink.reasoning(ev.MessageID, ev.Delta)
	case *events.ReasoningMessageEndEvent:
		return r.sink.reasoningEnd(ev.MessageID)
	case *events.ToolCallStartEvent:
		r.calls[ev.ToolCallID] = &pendingCall{name: ev.ToolCallName}
	case *events.ToolCallArgsEvent:
		if c := r.calls[ev.ToolCallID]; c != nil {
			c.args.WriteString(ev.Delta)
		}
	case *events.ToolCallEndEvent:
		if c := r.calls[ev.ToolCallID]; c != nil {
			return r.sink.toolCall(ev.ToolCallID, c.name, c.args.String())
		}
	case *events.ToolCallResultEvent:
		c := r.calls[ev.ToolCallID]
		out := toolOutcome{ID: ev.ToolCallID, Output: ev.Content}
		if c == nil {
			return r.sink.toolResult(out)
		}
		out.Name = c.name
		if c.done == nil {
			// The workspace reports the outcome just after the result;
			// wait for it (settle writes it as failed otherwise).
			r.results = append(r.results, out)
			return nil
		}
		out.OK, out.Duration = c.done.OK, c.done.Duration
		delete(r.calls, ev.ToolCallID)
		return r.sink.toolResult(out)
	}
	return nil
}

// settle writes what was held back once the next chat event shows what it
// was: a notice before RUN_ERROR is dropped; a result never given an
// outcome is a call that did not run.
func (r *itemRenderer) settle(next events.Event) error {
	if h := r.held; h != nil && h.closed {
		r.held = nil
		if _, isErr := next.(*events.RunErrorEvent); !isErr {
			if err := r.flushHeld(h); err != nil {
				return err
			}
		}
	}
	return r.flushResults()
}

func (r *itemRenderer) flushHeld(h *heldMessage) error {
	for _, d := range h.deltas {
		if err := r.sink.text(h.id, d); err != nil {
			return err
		}
	}
	if h.closed {
		return r.sink.textEnd(h.id)
	}
	return nil
}

func (r *itemRenderer) flushResults() error {
	pending := r.results
	r.results = nil
	for _, out := range pending {
		delete(r.calls, out.ID)
		if err := r.sink.toolResult(out); err != nil {
			return err
		}
	}
	return nil
}

func (r *itemRenderer) toolDone(t session.ToolFinished) error {
	c := r.calls[t.CallID]
	if c == nil {
		return nil
	}
	c.done = &t
	for i, out := range r.results {
		if out.ID == t.CallID {
			r.results = append(r.results[:i:i], r.results[i+1:]...)
			out.OK, out.Duration = t.OK, t.Duration
			delete(r.calls, t.CallID)
			return r.sink.toolResult(out)
		}
	}
	return nil
}

func (r *itemRenderer) approvalOpened(a session.Approval, answerable bool) error {
	return r.sink.approvalOpened(a, answerable)
}

func (r *itemRenderer) approvalResolved(a session.Approval) error {
	return r.sink.approvalResolved(a)
}

func (r *itemRenderer) usage(u llm.Usage) error { return r.sink.usage(u) }

func (r *itemRenderer) failedBeforeStart(message string) error {
	r.final = runEnd{Message: message, Code: "not_started", seen: true}
	return nil
}

func (r *itemRenderer) end() error {
	if r.terminated {
		return nil
	}
	r.terminated = true
	if h := r.held; h != nil {
		r.held = nil
		if !(r.final.seen && !r.final.Finished) {
			if err := r.flushHeld(h); err != nil {
				return err
			}
		}
	}
	if err := r.flushResults(); err != nil {
		return err
	}
	return r.sink.ended(r.final)
}

// approvedBy describes who answered an approval, for people.
func approvedBy(by session.Origin) string {
	switch by {
	case tools.OriginHeadless:
		return "on stdin"
	case tools.OriginPanel:
		return "in the browser panel"
	case tools.OriginTerminal:
		return "in the terminal"
	case "":
		return "by nobody (the run was interrupted)"
	}
	return "by " + string(by)
}

// decisionWord is "approved" or "rejected".
func decisionWord(d tools.Decision) string {
	if d.Kind == tools.Deny {
		return "rejected"
	}
	return "approved"
}

// shortDuration renders a tool's duration the way people read it.
func shortDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Millisecond:
		return "<1ms"
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// firstLine returns the first non-empty line of s, shortened to n runes.
func firstLine(s string, n int) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return shorten(line, n)
		}
	}
	return "(no output)"
}

// shorten cuts s to n runes, marking the cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
