package agui

import (
	"os"
	"path"
	"path/filepath"
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

// panelContent is text as the panel is sent it whole (a snapshot): artifact
// links absolute, and paths of files in the artifacts folder dir turned
// into short links (see shortenPaths).
func panelContent(text, base, dir string) string {
	out, _ := rewrite("", text, base, dir, true)
	return out
}

// rewrite makes text's artifact links absolute and shortens the paths of
// artifacts in it. Unless final, more text may follow: keep is how many
// bytes at the end of out could change with it (the start of a link, a
// path that may go on) and must wait for the next delta. lead is the end
// of what was sent before text.
func rewrite(lead, text, base, dir string, final bool) (out string, keep int) {
	if base == "" {
		return text, 0
	}
	out, keep = shortenPaths(lead, absoluteArtifacts(text, base), base, dir, final)
	if !final {
		keep = max(keep, partialLink(out))
	}
	return out, keep
}

// isPathChar reports whether c can be part of an artifact's path (see
// tools.SaveArtifact): a path ends at the first other character.
func isPathChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '/'
}

// shortenPaths replaces every absolute path of a file in the artifacts
// folder dir with a Markdown link to it whose label is the file's name,
// cut short. The screenshot tool names the file it saved, and a model
// repeats that path: at some 130 characters with no place to break, it
// ran out of opentask's chat bubble. The link opens the picture too. In a
// link's target the path becomes the bare address, in code the short name
// alone, since Markdown is not read there, and a path that names no file
// (cut short) is shortened without a link. Unless final, a path that
// reaches the end of text, or an end that could start one, is left for
// the next delta (pending counts its bytes). lead is the end of what was
// sent before text, which says whether a path starts in a link or code.
func shortenPaths(lead, text, base, dir string, final bool) (out string, pending int) {
	if dir == "" {
		return text, 0
	}
	prefix := strings.TrimSuffix(dir, "/") + "/"
	var b strings.Builder
	rest := text
	for {
		i := strings.Index(rest, prefix)
		if i < 0 {
			break
		}
		end := i + len(prefix)
		for end < len(rest) && isPathChar(rest[end]) {
			end++
		}
		if end == len(rest) && !final {
			b.WriteString(rest[:i])
			out = b.String() + rest[i:]
			return out, len(rest) - i
		}
		// A sentence's full stop or a folder's slash is not the file's.
		rel := strings.TrimRight(rest[i+len(prefix):end], "./")
		end = i + len(prefix) + len(rel)
		b.WriteString(rest[:i])
		before := lead + b.String()
		switch {
		case rel == "" || strings.Contains("/"+rel+"/", "/../"):
			b.WriteString(rest[i:end])
		case strings.HasSuffix(before, "]("):
			b.WriteString(base + "/artifacts/" + rel)
		case strings.HasSuffix(before, "`"):
			b.WriteString(shortName(rel))
		case !isFile(filepath.Join(dir, filepath.FromSlash(rel))):
			// A path cut short (a model's summary) names no file to
			// link to.
			b.WriteString("…/" + shortName(rel))
		default:
			b.WriteString("[" + shortName(rel) + "](" + base + "/artifacts/" + rel + ")")
		}
		rest = rest[end:]
	}
	if !final {
		for n := min(len(prefix)-1, len(rest)); n > 0; n-- {
			if strings.HasSuffix(rest, prefix[:n]) {
				pending = n
				break
			}
		}
	}
	b.WriteString(rest)
	return b.String(), pending
}

// isFile reports whether p is a regular file.
func isFile(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.Mode().IsRegular()
}

// shortNameLen is how much of a file name's stem a label keeps: the
// date and time an artifact's name starts with, and a little of its id.
const shortNameLen = 22

// shortName is the label for the artifact at rel: its file name, the
// middle of a long one cut.
func shortName(rel string) string {
	name := path.Base(rel)
	ext := path.Ext(name)
	if stem := strings.TrimSuffix(name, ext); len(stem) > shortNameLen {
		return stem[:shortNameLen] + "…" + ext
	}
	return name
}

// linkRewriter rewrites artifact links and paths in streamed text. A link
// or a path can be split across two deltas, so the end of a delta that
// could be the start of one is held back until the next delta (or the
// message's end) shows what it is. It runs on the mirror goroutine only.
type linkRewriter struct {
	// dir is the artifacts folder, whose files' paths are shortened;
	// "" leaves paths alone.
	dir  string
	held map[string]string // message id → held-back tail
	// sent holds the last bytes sent of each message, whose end may
	// open a link or code that a path in the next delta is in.
	sent map[string]string
}

// leadLen is how much of what was sent shortenPaths looks back at.
const leadLen = 2

// content returns the delta to send for a TEXT_MESSAGE_CONTENT of message
// id ("" sends nothing yet).
func (r *linkRewriter) content(id, delta, base string) string {
	if base == "" {
		return delta
	}
	text, keep := rewrite(r.sent[id], r.held[id]+delta, base, r.dir, false)
	if keep > 0 {
		if r.held == nil {
			r.held = map[string]string{}
		}
		r.held[id] = text[len(text)-keep:]
		text = text[:len(text)-keep]
	} else {
		delete(r.held, id)
	}
	if text != "" {
		if r.sent == nil {
			r.sent = map[string]string{}
		}
		lead := r.sent[id] + text
		r.sent[id] = lead[len(lead)-min(leadLen, len(lead)):]
	}
	return text
}

// end returns what was held back for message id, which its end releases.
func (r *linkRewriter) end(id, base string) string {
	tail, lead := r.held[id], r.sent[id]
	delete(r.held, id)
	delete(r.sent, id)
	out, _ := rewrite(lead, tail, base, r.dir, true)
	return out
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
		if tail := r.end(t.MessageID, base); tail != "" {
			return []events.Event{events.NewTextMessageContentEvent(t.MessageID, tail), e}
		}
	}
	return []events.Event{e}
}
