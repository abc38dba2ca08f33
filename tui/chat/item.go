package chat

import (
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/internal/termtext"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/tui/frame"
	"github.com/infer-workspace/infer/tui/toolfmt"
)

type kind int

const (
	kUser kind = iota
	kText
	kReasoning
	kTool
	kNotice
	kQueue
)

type toolState int

const (
	toolRunning toolState = iota
	toolOK
	toolFailed
	toolCancelled
	toolNoResult   // the call has no result (stored or streamed)
	toolUnreported // a result, but no outcome reported or stored
)

// maxExpandedLines bounds an expanded tool result; the rest is counted.
const maxExpandedLines = 400

// spinnerFrames animate running tool rows.
var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// item is one entry of the conversation. Its rendered lines are cached
// under a key of everything they depend on, so an unchanged item is never
// rendered twice at the same width.
type item struct {
	kind kind
	gap  bool // a blank line before it
	warn bool // a notice that reports a problem

	// origin is who wrote a user message, or who made a tool call from
	// outside the conversation ("" for the turn's own calls).
	origin    tools.Origin
	buf       []byte // text, reasoning or notice source
	streaming bool
	words     int
	inWord    bool

	name      string
	args      []byte
	state     toolState
	dur       time.Duration // as the done call reported it; 0 when unknown
	result    string
	hasResult bool
	awaiting  bool // its approval is pending
	expanded  bool

	version int
	key     cacheKey
	top     string // a line before head ("" for none)
	head    []string
	tail    []string
	md      mdStream
	plain   plainStream
}

type cacheKey struct {
	width, version, epoch, frame int
	expanded                     bool
}

// open reports whether the item is a transcript item still growing: a
// segment streaming or one of the turn's calls running.
func (it *item) open() bool {
	return it.streaming || (it.kind == kTool && it.origin == "" && it.state == toolRunning)
}

func (it *item) expandable() bool {
	switch it.kind {
	case kReasoning:
		return true
	case kTool:
		return it.state != toolRunning
	}
	return false
}

func (it *item) appendText(s string) {
	it.buf = append(it.buf, s...)
	if it.kind == kReasoning {
		for _, r := range s {
			space := unicode.IsSpace(r)
			if !space && !it.inWord {
				it.words++
			}
			it.inWord = !space
		}
	}
	it.version++
}

// setText makes text the item's text. Text that grows what the item
// holds (a segment done after streaming) is appended, so the reasoning's
// word count and the Markdown stream's finished blocks stay as they are.
func (it *item) setText(text string) {
	if len(text) >= len(it.buf) && text[:len(it.buf)] == string(it.buf) {
		if len(text) > len(it.buf) {
			it.appendText(text[len(it.buf):])
		}
		return
	}
	it.buf, it.words, it.inWord = it.buf[:0], 0, false
	it.appendText(text)
}

// height is the number of lines the item occupies (render first).
func (it *item) height() int {
	n := len(it.head) + len(it.tail)
	if it.gap {
		n++
	}
	if it.top != "" {
		n++
	}
	return n
}

// line returns line i of the rendered item.
func (it *item) line(i int) string {
	if it.gap {
		if i == 0 {
			return ""
		}
		i--
	}
	if it.top != "" {
		if i == 0 {
			return it.top
		}
		i--
	}
	if i < len(it.head) {
		return it.head[i]
	}
	return it.tail[i-len(it.head)]
}

// renderer holds what rendering needs beyond the item itself.
type renderer struct {
	m     *Model
	width int
}

// render brings the item's cached lines up to date. Everything an item
// holds came from outside (the person's message may have come from the
// browser panel), so each text is passed through termtext here, where it
// is drawn, and stored as it came.
func (r renderer) render(it *item) {
	m := r.m
	key := cacheKey{width: r.width, version: it.version, epoch: m.epoch, expanded: it.expanded}
	if it.kind == kTool && it.state == toolRunning && !it.awaiting {
		key.frame = m.frame
	}
	if key == it.key && (it.head != nil || it.tail != nil) {
		return
	}
	it.key = key
	it.top, it.head, it.tail = "", nil, nil
	th := m.th
	w := r.width
	switch it.kind {
	case kUser:
		head := th.User.Bold(true).Render("You")
		if it.origin != "" && it.origin != tools.OriginTerminal {
			head += th.Faint.Render(" · from the " + it.origin.Label())
		}
		it.head = []string{head}
		bar := th.User.Render("│ ")
		for _, l := range Wrap(termtext.Text(string(it.buf)), w-2) {
			it.head = append(it.head, bar+l)
		}
	case kText:
		if it.streaming || len(it.buf) > finalRenderLimit {
			// The stream pads its own lines, each once.
			it.head, it.tail = it.md.update(it.buf, m.md, w, m.epoch)
			return
		}
		it.head = m.md.Render(string(it.buf), w)
		it.md = mdStream{}
	case kReasoning:
		if r.renderReasoning(it) {
			return
		}
	case kTool:
		r.renderTool(it)
	case kQueue:
		for _, l := range strings.Split(string(it.buf), "\n") {
			if l != "" {
				it.head = append(it.head, th.Faint.Render(ansi.Truncate(termtext.Line(l), w, "…")))
			}
		}
	case kNotice:
		sym, style := "ⓘ ", th.Faint
		if it.warn {
			sym, style = "⚠ ", th.Warn
		}
		text := string(it.buf)
		for i, l := range Wrap(termtext.Text(text), w-2) {
			if i == 0 {
				it.head = append(it.head, style.Render(sym+l))
			} else {
				it.head = append(it.head, style.Render("  "+l))
			}
		}
	}
	// Pad once here so composing a frame never measures a cached line.
	padAll(it.head, w)
	padAll(it.tail, w)
	if it.head == nil && it.tail == nil {
		it.head = []string{} // rendered, just empty
	}
}

// padAll pads or cuts lines in place to exactly w cells. The slices are
// the item's own (the Markdown stream's done lines are padded when they
// are made, and padding twice is a no-op).
func padAll(lines []string, w int) {
	for i, l := range lines {
		lines[i] = frame.Pad(l, w)
	}
}

// finalRenderLimit is the size above which a finished message keeps its
// block-by-block rendering instead of one full render, which would stall
// the interface for a moment on huge messages.
const finalRenderLimit = 64 << 10

// renderReasoning reports whether the lines are already padded.
func (r renderer) renderReasoning(it *item) bool {
	th := r.m.th
	words := strconv.Itoa(it.words) + " words"
	if it.words == 1 {
		words = "1 word"
	}
	if !it.expanded {
		label := "▸ Thought · " + words + " · enter to expand"
		if it.streaming {
			label = "▸ Thinking… · " + words
		}
		it.head = []string{th.Reasoning.Render(label)}
		return false
	}
	label := "▾ Thought · " + words
	if it.streaming {
		label = "▾ Thinking… · " + words
	}
	// The header is a separate line so the streamed lines can be the
	// cached done slice itself, never copied.
	done, tail := it.plain.update(it.buf, r.width-2, r.width, r.m.epoch, func(l string) string {
		return th.Reasoning.Render("  " + l)
	})
	it.top = frame.Pad(th.Reasoning.Render(label), r.width)
	it.head, it.tail = done, tail
	return true
}

func (r renderer) renderTool(it *item) {
	m := r.m
	th := m.th
	w := r.width
	var sym string
	switch it.state {
	case toolRunning:
		sym = th.Accent.Render(spinnerFrames[m.frame%len(spinnerFrames)])
		if it.awaiting {
			sym = th.Warn.Render("⚠") // nothing runs until the person answers
		}
	case toolOK:
		sym = th.OK.Render("✓")
	case toolFailed:
		sym = th.Err.Render("✗")
	case toolCancelled:
		sym = th.Warn.Render("⏹")
	default: // no result, or no outcome: say nothing we do not know
		sym = th.Faint.Render("·")
	}
	plainName := termtext.Line(it.name)
	name := th.Bold.Render(plainName)
	if it.origin != "" {
		// A call from outside the conversation says who made it.
		who := it.origin.Label() + " · "
		name = th.Faint.Render(who) + name
		plainName = who + plainName
	}
	var suffix string
	if it.dur > 0 {
		suffix = " · " + toolfmt.Duration(it.dur)
	}
	switch {
	case it.state == toolRunning && it.awaiting:
		suffix = " · waiting for your approval"
	case it.state == toolRunning:
		suffix = " · running"
	case it.state == toolCancelled:
		suffix += " · interrupted"
	case it.state == toolNoResult:
		suffix = " · no result"
	}
	// The arguments are decoded from JSON first: only then do the
	// characters its escapes stood for appear.
	args := termtext.Line(toolfmt.Short(it.name, string(it.args)))
	room := w - 2 - ansi.StringWidth(plainName) - ansi.StringWidth(suffix)
	if args != "" && room > 4 {
		args = " " + ansi.Truncate(args, room-1, "…")
	} else {
		args = ""
	}
	it.head = []string{sym + " " + name + th.Faint.Render(args+suffix)}
	if it.state == toolRunning || it.state == toolNoResult || !it.hasResult {
		return
	}
	if !it.expanded {
		first := termtext.Line(toolfmt.FirstLine(it.result))
		if first == "" {
			first = "(no output)"
		}
		more := ""
		if strings.Count(strings.TrimSpace(it.result), "\n") > 0 {
			more = " (enter: full result)"
		}
		line := toolfmt.Fit(first, max(w-4-ansi.StringWidth(more), 1))
		it.head = append(it.head, th.Faint.Render("  └ "+line+more))
		return
	}
	lines := Wrap(termtext.Text(strings.TrimRight(it.result, "\n")), w-4)
	extra := 0
	if len(lines) > maxExpandedLines {
		extra = len(lines) - maxExpandedLines
		lines = lines[:maxExpandedLines]
	}
	for _, l := range lines {
		it.head = append(it.head, th.Faint.Render("  │ ")+l)
	}
	end := "  └ enter to collapse"
	if extra > 0 {
		end = "  └ " + strconv.Itoa(extra) + " more lines not shown · enter to collapse"
	}
	it.head = append(it.head, th.Faint.Render(end))
}
