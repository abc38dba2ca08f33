package panelsync

import (
	"strings"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
)

// artifactLink is how the screenshot tool tells the model to show a
// picture: a Markdown image whose URL is root-relative. The TUI and the
// stored conversation keep that form (the bridge's port can change between
// runs); only what goes to the panel is made absolute.
const artifactLink = "](/artifacts/"

// absoluteArtifacts makes every artifact image link in text point at base.
func absoluteArtifacts(text, base string) string {
	if base == "" || !strings.Contains(text, artifactLink) {
		return text
	}
	return strings.ReplaceAll(text, artifactLink, "]("+base+"/artifacts/")
}

// linkRewriter rewrites artifact links in streamed text. A link can be
// split across two deltas, so the end of a delta that could be the start of
// one is held back until the next delta (or the message's end) shows what
// it is. It runs on the mirror goroutine only.
type linkRewriter struct {
	held map[string]string // message id → held-back tail
}

// content returns the delta to send for a TEXT_MESSAGE_CONTENT of message
// id ("" sends nothing yet).
func (r *linkRewriter) content(id, delta, base string) string {
	if base == "" {
		return delta
	}
	text := absoluteArtifacts(r.held[id]+delta, base)
	keep := partialLink(text)
	if keep > 0 {
		if r.held == nil {
			r.held = map[string]string{}
		}
		r.held[id] = text[len(text)-keep:]
		return text[:len(text)-keep]
	}
	delete(r.held, id)
	return text
}

// end returns what was held back for message id, which its end releases.
func (r *linkRewriter) end(id string) string {
	tail := r.held[id]
	delete(r.held, id)
	return tail
}

// partialLink is the length of the longest end of text that is a proper
// start of artifactLink.
func partialLink(text string) int {
	for n := min(len(artifactLink)-1, len(text)); n > 0; n-- {
		if strings.HasSuffix(text, artifactLink[:n]) {
			return n
		}
	}
	return 0
}

// panelText returns the events to send for e: e itself, or copies with
// their artifact links made absolute (the event is shared with other
// subscribers, so it is never changed in place).
func (r *linkRewriter) panelText(e events.Event, base string) []events.Event {
	switch t := e.(type) {
	case *events.TextMessageContentEvent:
		delta := r.content(t.MessageID, t.Delta, base)
		if delta == t.Delta {
			return []events.Event{e}
		}
		if delta == "" {
			return nil
		}
		return []events.Event{events.NewTextMessageContentEvent(t.MessageID, delta)}
	case *events.TextMessageEndEvent:
		if tail := r.end(t.MessageID); tail != "" {
			return []events.Event{events.NewTextMessageContentEvent(t.MessageID, tail), e}
		}
	}
	return []events.Event{e}
}
