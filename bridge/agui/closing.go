package agui

import (
	"strings"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
)

// closingText caps, in bytes and lines, the tool output a closing text
// repeats: the panel is a narrow side bar, and the whole result is in the
// TUI and the stored conversation.
const (
	closingTextBytes = 4 << 10
	closingTextLines = 40
)

// runCloser gives the panel a text message at the end of a run that
// finished on a tool result with no text after it — a "!command" run, or an
// agent run cut off by its step limit. opentask leaves its "Working…" state
// only on TEXT_MESSAGE_END and ignores TOOL_CALL_RESULT, so without one the
// panel would wait forever and never show the output. It runs on the mirror
// goroutine only.
type runCloser struct {
	result  string // the last tool result of the run
	pending bool   // a tool result came after the run's last text
}

// before returns the events to send ahead of e: the closing text when e
// finishes a run that needs one.
func (r *runCloser) before(e events.Event) []events.Event {
	switch t := e.(type) {
	case *events.RunStartedEvent:
		r.result, r.pending = "", false
	case *events.ToolCallResultEvent:
		r.result, r.pending = t.Content, true
	case *events.TextMessageEndEvent:
		r.pending = false
	case *events.RunFinishedEvent:
		if !r.pending {
			return nil
		}
		r.pending = false
		id := "closing-" + t.RunID()
		return []events.Event{
			events.NewTextMessageStartEvent(id, events.WithRole("assistant")),
			events.NewTextMessageContentEvent(id, closingText(r.result)),
			events.NewTextMessageEndEvent(id),
		}
	}
	return nil
}

// closingText shows a tool's output as a code block, cut to what a side
// panel can show.
func closingText(output string) string {
	output = strings.TrimRight(output, "\n")
	cut := false
	if len(output) > closingTextBytes {
		output = strings.ToValidUTF8(output[:closingTextBytes], "")
		cut = true
	}
	if lines := strings.SplitN(output, "\n", closingTextLines+1); len(lines) > closingTextLines {
		output = strings.Join(lines[:closingTextLines], "\n")
		cut = true
	}
	// A fence longer than any run of backticks in the output keeps the
	// output from closing it.
	fence := "```"
	for strings.Contains(output, fence) {
		fence += "`"
	}
	text := fence + "\n" + output + "\n" + fence
	if cut {
		text += "\n(cut; the whole output is in infer)"
	}
	return text
}
