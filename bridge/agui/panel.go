package agui

import (
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
)

// Panel adds to an Encoder's events what the extension's side panel needs
// around them on its connection:
//
//   - a connection that arrives in the middle of a message (a panel that
//     reconnected while the agent streamed) is sent the message's start
//     before its first content, so every segment it shows opens with its
//     own TEXT_MESSAGE_START (reopen);
//   - a run that finishes on a tool result with no text after it (a
//     "!command", an agent run stopped by its step limit) gets a closing
//     text with the result, since opentask leaves its "Working…" state
//     only on TEXT_MESSAGE_END and ignores TOOL_CALL_RESULT (runCloser);
//   - artifact links are made absolute against the connection's address,
//     and paths of files in the artifacts folder become short links
//     (linkRewriter).
//
// Headless's --output ag-ui reads the Encoder's events as they are. A
// Panel is not safe for concurrent use.
type Panel struct {
	links  linkRewriter
	closer runCloser
	// open holds the messages conn has seen start.
	open map[string]bool
	conn any
}

// NewPanel returns a Panel whose paths of files in dir (the artifacts
// folder; "" leaves paths alone) become short links.
func NewPanel(dir string) *Panel {
	return &Panel{links: linkRewriter{dir: dir}}
}

// Events returns what conn, the live connection (compared by identity),
// is sent for e; base is its address for artifact links ("" leaves them
// relative). The events are new values where they differ from e: an
// event may be shared.
func (p *Panel) Events(conn any, base string, e events.Event) []events.Event {
	out := p.reopen(conn, e)
	for _, before := range append(p.closer.before(e), e) {
		out = append(out, p.links.panelText(before, base)...)
	}
	return out
}

// Content is text as the panel is sent it whole (a snapshot).
func (p *Panel) Content(text, base string) string {
	return panelContent(text, base, p.links.dir)
}

// reopen returns the start of the message e continues when conn never saw
// it start.
func (p *Panel) reopen(conn any, e events.Event) []events.Event {
	if conn != p.conn || p.open == nil {
		p.conn, p.open = conn, map[string]bool{}
	}
	switch ev := e.(type) {
	case *events.TextMessageStartEvent:
		p.open[ev.MessageID] = true
	case *events.ReasoningStartEvent:
		p.open[ev.MessageID] = true
	case *events.TextMessageEndEvent:
		delete(p.open, ev.MessageID)
	case *events.ReasoningEndEvent:
		delete(p.open, ev.MessageID)
	case *events.TextMessageContentEvent:
		if !p.open[ev.MessageID] {
			p.open[ev.MessageID] = true
			return []events.Event{events.NewTextMessageStartEvent(ev.MessageID, events.WithRole("assistant"))}
		}
	case *events.ReasoningMessageContentEvent:
		if !p.open[ev.MessageID] {
			p.open[ev.MessageID] = true
			return []events.Event{events.NewReasoningStartEvent(ev.MessageID), events.NewReasoningMessageStartEvent(ev.MessageID, "assistant")}
		}
	}
	return nil
}

// Say is a whole run of one assistant message saying text, for a line
// that is no part of any turn (an MCP client's call): bracketed like every
// run, since opentask shows text only inside one. thread is the
// conversation it belongs to, run and message its ids.
func Say(thread, run, message, text string) []events.Event {
	return []events.Event{
		events.NewRunStartedEvent(thread, run),
		events.NewTextMessageStartEvent(message, events.WithRole("assistant")),
		events.NewTextMessageContentEvent(message, text),
		events.NewTextMessageEndEvent(message),
		events.NewRunFinishedEvent(thread, run),
	}
}

// UserMessageEvent names the CUSTOM event that shows the panel a message
// another front end sent. opentask renders user-role text events as
// assistant bubbles, so such messages travel as this event, which panels
// may render and others ignore.
const UserMessageEvent = "infer.user_message"

// UserMessage is the event that shows the panel text another front end
// (origin) sent.
func UserMessage(text, origin string) events.Event {
	return events.NewCustomEvent(UserMessageEvent, events.WithValue(map[string]string{"content": text, "origin": origin}))
}

// RefusedEvent names the CUSTOM event that tells the panel a user_message
// was refused. Its value has the reason, the start of the message's
// content and its length in bytes.
const RefusedEvent = "infer.message_refused"

// Refused is the event that tells the panel its message of size bytes,
// which begins with preview, was refused for reason.
func Refused(reason, preview string, size int) events.Event {
	return events.NewCustomEvent(RefusedEvent, events.WithValue(map[string]any{
		"reason":  reason,
		"content": preview,
		"bytes":   size,
	}))
}
