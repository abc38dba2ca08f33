package store

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// Record kinds of the JSON-lines file. Unknown kinds are skipped on read so
// that a newer infer can add kinds without breaking an older one.
const (
	kindConversation = "conversation" // first line: id and creation time
	kindMessage      = "message"
	kindToolResult   = "tool_result"
	kindTitle        = "title"
	kindPin          = "pin"
	kindNotice       = "notice"
)

// formatVersion is written in the first line of every conversation file.
const formatVersion = 1

// record is one line of a conversation file. Each kind uses a few fields;
// the rest are omitted so the file stays readable.
type record struct {
	Kind       string    `json:"kind"`
	At         time.Time `json:"at"`
	ID         string    `json:"id,omitempty"`
	Version    int       `json:"version,omitempty"`
	Message    *Message  `json:"message,omitempty"`
	ToolCallID string    `json:"tool_call_id,omitempty"`
	OK         *bool     `json:"ok,omitempty"`
	Title      string    `json:"title,omitempty"`
	Source     string    `json:"source,omitempty"`
	Pinned     *bool     `json:"pinned,omitempty"`
	Notice     *Notice   `json:"notice,omitempty"`
}

// encodeRecords renders records as JSON lines. HTML escaping is off because
// the file is meant to be read by people, and "<" is common in chat.
func encodeRecords(recs []record) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// state folds records into a conversation. Disk appends fold into a state
// without messages (only Meta matters there); loads keep everything.
type state struct {
	meta     Meta
	keep     bool
	messages []Message
	results  map[string]bool
	notices  []Notice
}

// apply folds one record into s and reports whether the record was
// meaningful; a known kind missing its payload is not.
func (s *state) apply(r *record) bool {
	switch r.Kind {
	case kindConversation:
		if !r.At.IsZero() {
			s.meta.CreatedAt = r.At
			if s.meta.UpdatedAt.IsZero() {
				s.meta.UpdatedAt = r.At
			}
		}
	case kindMessage:
		if r.Message == nil {
			return false
		}
		s.meta.MessageCount++
		s.meta.OpenCalls = openCalls(s.meta.OpenCalls, r.Message)
		s.touch(r.At)
		if s.meta.TitleSource == "" && r.Message.Role == RoleUser {
			if t := PreviewTitle(r.Message.Content); t != "" {
				s.meta.Title, s.meta.TitleSource = t, TitlePreview
			}
		}
		if s.keep {
			s.messages = append(s.messages, *r.Message)
		}
	case kindToolResult:
		if r.ToolCallID == "" || r.OK == nil {
			return false
		}
		s.touch(r.At)
		if s.keep {
			if s.results == nil {
				s.results = make(map[string]bool)
			}
			s.results[r.ToolCallID] = *r.OK
		}
	case kindTitle:
		switch r.Source {
		case TitleUser:
			s.meta.Title, s.meta.TitleSource = r.Title, TitleUser
		case TitleGenerated:
			if s.meta.TitleSource != TitleUser {
				s.meta.Title, s.meta.TitleSource = r.Title, TitleGenerated
			}
		default:
			return false
		}
	case kindPin:
		if r.Pinned == nil {
			return false
		}
		s.meta.Pinned = *r.Pinned
	case kindNotice:
		// A notice changes nothing a summary holds: it is neither a
		// message nor content that should reorder the list.
		if r.Notice == nil {
			return false
		}
		if s.keep {
			n := *r.Notice
			n.At, n.After = r.At, len(s.messages)
			// Notices recorded before Warn existed said so with a
			// leading sign; they are read as the field says it now.
			if rest, ok := strings.CutPrefix(n.Text, "⚠"); ok && !n.Warn {
				n.Text, n.Warn = strings.TrimLeft(rest, " "), true
			}
			s.notices = append(s.notices, n)
		}
	}
	return true
}

// touch moves UpdatedAt forward. Only conversation content moves it, so that
// renaming or pinning does not reorder the list.
func (s *state) touch(at time.Time) {
	if at.After(s.meta.UpdatedAt) {
		s.meta.UpdatedAt = at
	}
}

// Preview titles are short enough for a list row and a panel menu.
const (
	previewWords = 10
	previewRunes = 80
)

// PreviewTitle derives a conversation title from its first user message:
// whitespace collapsed, at most ten words and 80 characters, cut at a word
// boundary with "…" when shortened. It returns "" for blank text.
func PreviewTitle(text string) string {
	words := strings.Fields(text)
	if len(words) == 0 {
		return ""
	}
	cut := len(words) > previewWords
	if cut {
		words = words[:previewWords]
	}
	title := strings.Join(words, " ")
	if !cut && utf8.RuneCountInString(title) <= previewRunes {
		return title
	}
	// Leave room for the ellipsis, then back off to a word boundary; a single
	// word longer than the limit is cut inside the word.
	const room = previewRunes - 1
	if utf8.RuneCountInString(title) > room {
		head := truncateRunes(title, room)
		if title[len(head)] != ' ' {
			if i := strings.LastIndexByte(head, ' '); i > 0 {
				head = head[:i]
			}
		}
		title = head
	}
	return strings.TrimRight(title, " ") + "…"
}

// truncateRunes keeps the first n runes of s.
func truncateRunes(s string, n int) string {
	i := 0
	for range n {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i]
}

// openCalls returns open, the number of unanswered calls, after message
// m: an assistant's calls open, a tool message answers one.
func openCalls(open int, m *Message) int {
	switch {
	case m.Role == RoleAssistant:
		return open + len(m.ToolCalls)
	case m.Role == RoleTool && m.ToolCallID != "" && open > 0:
		return open - 1
	}
	return open
}
