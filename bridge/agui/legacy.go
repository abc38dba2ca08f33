package agui

import (
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/transcript"
)

// Legacy translates transcript changes into the events the TUI and
// headless's text and JSON output were written for: UserMessage for the
// person's message, Chat for each AG-UI event of a run, ToolFinished after
// a call's result. Notices outside a run are left out: those front ends
// get them as NoticePosted.
//
// Deprecated: it goes once those front ends apply the transcript.
type Legacy struct{ enc Encoder }

// Events returns the events that tell c, in order.
func (l *Legacy) Events(c transcript.Change) []session.Event {
	it := c.Item
	if c.Op == transcript.ItemDone && it.Kind == transcript.User {
		return []session.Event{session.UserMessage{Conversation: c.Conversation, Text: it.Text, Origin: it.Origin}}
	}
	var out []session.Event
	for _, e := range l.enc.Encode(c) {
		out = append(out, session.Chat{Conversation: c.Conversation, Event: e.Event, Notice: e.Notice})
	}
	if c.Op == transcript.ItemDone && it.Kind == transcript.Tool {
		k := it.Call
		out = append(out, session.ToolFinished{Conversation: c.Conversation, CallID: it.ID, Name: k.Name, OK: k.OK,
			Duration: k.Duration, Artifacts: k.Artifacts, Skipped: k.Skipped})
	}
	return out
}
