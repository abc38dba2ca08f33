package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
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
	// change receives every change the run makes to the conversation's
	// transcript, in order.
	change(c transcript.Change) error
	// approvalOpened announces a request; answerable says whether stdin
	// can still answer it.
	approvalOpened(a session.Approval, answerable bool) error
	approvalResolved(a session.Approval) error
	usage(u llm.Usage) error
	// failedBeforeStart reports a turn that ended before its run started
	// (the workspace could not even record the message).
	failedBeforeStart(message string) error
	// end is called once after the turn.
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

// runEndOf is how the run that c ends ended, as the formats report it:
// an interrupted run is an error whose message and code are both
// "interrupted".
func runEndOf(c transcript.Change) runEnd {
	e := runEnd{Finished: c.Status == transcript.Finished, RunID: c.Run, seen: true}
	switch c.Status {
	case transcript.Interrupted:
		e.Message, e.Code = "interrupted", "interrupted"
	case transcript.Failed:
		e.Message, e.Code = c.Err, c.Code
	}
	return e
}

// itemSink receives a run as the text and JSON formats need it: each
// segment's text as it streams, each tool call when it starts and again,
// with its outcome, when it ends.
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

// itemRenderer adapts an itemSink to renderer: it applies each transcript
// change of the run, telling the sink what the change adds. Notices
// recorded outside the run are no part of its output (the loop logs
// them); a notice of the run itself (a moved conversation) is shown as
// text.
type itemRenderer struct {
	sink itemSink

	// open holds the kind of each started, unfinished item, and sent how
	// many bytes of each segment went to the sink, so a done segment
	// adds only what did not stream.
	open map[string]transcript.Kind
	sent map[string]int

	final      runEnd
	terminated bool
}

func newItemRenderer(sink itemSink) *itemRenderer {
	return &itemRenderer{sink: sink, open: map[string]transcript.Kind{}, sent: map[string]int{}}
}

func (r *itemRenderer) resumed(session.Snapshot) error { return nil }

func (r *itemRenderer) change(c transcript.Change) error {
	switch c.Op {
	case transcript.RunStarted:
		return r.sink.runStarted(c.Conversation, c.Run)
	case transcript.RunEnded:
		r.final = runEndOf(c)
	case transcript.ItemStarted:
		return r.start(c.Item)
	case transcript.DeltaAppended:
		return r.delta(c.Item.ID, c.Delta)
	case transcript.ItemDone:
		return r.done(c)
	}
	return nil
}

// start tells the sink of a segment's first text, or of a call, whose
// arguments are whole when it starts; a call an interrupt skipped is
// shown without them, as it never ran with them.
func (r *itemRenderer) start(it transcript.Item) error {
	switch it.Kind {
	case transcript.Text, transcript.Reasoning:
		r.open[it.ID] = it.Kind
		return r.delta(it.ID, it.Text)
	case transcript.Tool:
		r.open[it.ID] = it.Kind
		args := it.Call.Args
		if it.Call.Skipped {
			args = ""
		}
		return r.sink.toolCall(it.ID, it.Call.Name, args)
	}
	return nil
}

func (r *itemRenderer) delta(id, text string) error {
	if text == "" {
		return nil
	}
	switch r.open[id] {
	case transcript.Text:
		r.sent[id] += len(text)
		return r.sink.text(id, text)
	case transcript.Reasoning:
		r.sent[id] += len(text)
		return r.sink.reasoning(id, text)
	}
	return nil
}

func (r *itemRenderer) done(c transcript.Change) error {
	it := c.Item
	if _, started := r.open[it.ID]; !started {
		if c.Run == "" {
			return nil // recorded outside the run: not its output
		}
		if err := r.start(transcript.Item{ID: it.ID, Kind: it.Kind, Call: it.Call}); err != nil {
			return err
		}
	}
	if n := r.sent[it.ID]; n < len(it.Text) && (it.Kind == transcript.Text || it.Kind == transcript.Reasoning) {
		// What the done segment adds to what streamed (the note that
		// ends an answer cut at its cap).
		if err := r.delta(it.ID, it.Text[n:]); err != nil {
			return err
		}
	}
	delete(r.open, it.ID)
	delete(r.sent, it.ID)
	switch it.Kind {
	case transcript.Text:
		return r.sink.textEnd(it.ID)
	case transcript.Reasoning:
		return r.sink.reasoningEnd(it.ID)
	case transcript.Tool:
		k := it.Call
		return r.sink.toolResult(toolOutcome{ID: it.ID, Name: k.Name, OK: k.OK, Duration: k.Duration, Output: k.Result})
	case transcript.Notice:
		text := it.Text
		if it.Level == transcript.Warn {
			text = "⚠ " + text
		}
		if err := r.sink.text(it.ID, text); err != nil {
			return err
		}
		return r.sink.textEnd(it.ID)
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
