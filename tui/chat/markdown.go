package chat

import (
	"strconv"
	"strings"

	"charm.land/glamour/v2"
	gansi "charm.land/glamour/v2/ansi"
	"charm.land/glamour/v2/styles"
	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/internal/termtext"
)

// markdown renders Markdown with Glamour. It keeps one renderer per width
// because a renderer's wrap width is fixed at creation and renderers are
// not safe for concurrent use (all calls happen on the Update goroutine).
type markdown struct {
	style     string
	renderers map[int]*glamour.TermRenderer
	order     []int // widths, oldest first, to bound the cache
}

// maxRenderers bounds the per-width cache: a resize drag visits many
// widths, and only the latest few matter.
const maxRenderers = 4

// newMarkdown returns a renderer for a Glamour standard style ("dark",
// "light" or "notty").
func newMarkdown(style string) *markdown {
	return &markdown{style: style, renderers: map[int]*glamour.TermRenderer{}}
}

// Style names the Glamour style in use.
func (m *markdown) Style() string { return m.style }

func (m *markdown) renderer(width int) *glamour.TermRenderer {
	if r, ok := m.renderers[width]; ok {
		return r
	}
	cfg := styleConfig(m.style)
	r, err := glamour.NewTermRenderer(glamour.WithStyles(cfg), glamour.WithWordWrap(width),
		glamour.WithChromaFormatter(chromaFormatter(m.style)))
	if err != nil {
		return nil
	}
	if len(m.order) >= maxRenderers {
		delete(m.renderers, m.order[0])
		m.order = m.order[1:]
	}
	m.renderers[width] = r
	m.order = append(m.order, width)
	return r
}

func chromaFormatter(style string) string {
	if style == "notty" || style == "ascii" {
		return "noop"
	}
	return "terminal256"
}

// styleConfig is the standard style without the document margin and the
// blank lines around the document: the chat draws its own gutter and gaps.
func styleConfig(style string) gansi.StyleConfig {
	base, ok := styles.DefaultStyles[style]
	if !ok {
		base = &styles.DarkStyleConfig
	}
	cfg := *base
	var zero uint
	cfg.Document.Margin = &zero
	cfg.Document.BlockPrefix = ""
	cfg.Document.BlockSuffix = ""
	return cfg
}

// Render renders text at width and returns its lines without the trailing
// padding Glamour adds and without leading or trailing blank lines.
//
// text is the model's (or a stored message's), so it is made safe here,
// before Glamour sees it: Glamour's output is full of its own escapes, and
// only the source can tell them from the ones the text brought.
func (m *markdown) Render(text string, width int) []string {
	width = max(width, 8)
	text = expandTabs(neutralizeRefs(termtext.Text(text)))
	r := m.renderer(width)
	if r == nil {
		return Wrap(text, width)
	}
	out, err := r.Render(escapeTags(text))
	if err != nil {
		return Wrap(text, width)
	}
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = trimRight(l)
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// escapeTags backslash-escapes each < that would open an HTML tag,
// comment or autolink, outside code spans and fenced code blocks. Glamour
// renders inline HTML through a sanitizer that removes tags, so "open <url>"
// in a reply became "open " and Vec<String> became Vec; a chat shows the
// text the model wrote, and has no use for HTML. Code keeps its < as it is,
// since a backslash there would show.
func escapeTags(text string) string {
	if !strings.Contains(text, "<") {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + 8)
	fence := "" // the fence that opened the current code block, if any
	for _, line := range strings.SplitAfter(text, "\n") {
		// Fences may be indented (inside a list item) or quoted (> ```).
		trimmed := strings.TrimLeft(line, " \t>")
		if f := fenceOf(trimmed); f != "" {
			rest := strings.TrimSpace(trimmed[len(f):])
			switch {
			case fence == "" && !(f[0] == '`' && strings.Contains(rest, "`")):
				// (A backtick in the info string makes it inline code on
				// one line, ```ls <dir>```, not a fence.)
				fence = f
				b.WriteString(line)
				continue
			case fence != "" && f[0] == fence[0] && len(f) >= len(fence) && rest == "":
				fence = ""
				b.WriteString(line)
				continue
			}
		}
		if fence != "" {
			b.WriteString(line)
			continue
		}
		escapeLineTags(&b, line)
	}
	return b.String()
}

// fenceOf returns the run of three or more backticks or tildes a line
// starts with, or "".
func fenceOf(line string) string {
	if len(line) < 3 || (line[0] != '`' && line[0] != '~') {
		return ""
	}
	n := 0
	for n < len(line) && line[n] == line[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return line[:n]
}

// escapeLineTags writes line with a backslash before each < that starts a
// tag (a letter, /, ! or ? follows), except inside code spans and where
// the < is already escaped.
func escapeLineTags(b *strings.Builder, line string) {
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line):
			b.WriteString(line[i : i+2]) // an escape: both bytes as they are
			i += 2
			continue
		case c == '`':
			n := 0
			for i+n < len(line) && line[i+n] == '`' {
				n++
			}
			ticks := line[i : i+n]
			// The span ends at the next run of exactly as many backticks;
			// without one, the backticks are literal text.
			if end := closingTicks(line[i+n:], n); end >= 0 {
				b.WriteString(line[i : i+n+end+n])
				i += n + end + n
			} else {
				b.WriteString(ticks)
				i += n
			}
			continue
		case c == '<' && i+1 < len(line) && opensTag(line[i+1]):
			b.WriteByte('\\')
		}
		b.WriteByte(c)
		i++
	}
}

// closingTicks returns the index in s of the first run of exactly n
// backticks, or -1.
func closingTicks(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == '`' {
			j++
		}
		if j-i == n {
			return i
		}
		i = j
	}
	return -1
}

// opensTag reports whether c after a < makes Markdown read it as HTML or
// an autolink.
func opensTag(c byte) bool {
	return c == '/' || c == '!' || c == '?' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// trimRight drops trailing spaces (and the styles wrapped around them) so
// cached lines stay small; a line of spaces becomes "".
func trimRight(line string) string {
	plain := ansi.Strip(line)
	keep := ansi.StringWidth(strings.TrimRight(plain, " "))
	if keep == 0 {
		return ""
	}
	if keep == ansi.StringWidth(plain) {
		return line
	}
	return ansi.Truncate(line, keep, "") + "\x1b[m"
}

// Wrap wraps plain text at width, breaking long words, keeping blank lines
// and expanding tabs. It only lays text out: text from outside must be
// made safe first (termtext.Text), since Wrap also takes styled text.
func Wrap(text string, width int) []string {
	width = max(width, 1)
	var out []string
	for _, para := range strings.Split(expandTabs(text), "\n") {
		if para == "" {
			out = append(out, "")
			continue
		}
		out = append(out, strings.Split(ansi.Wrap(para, width, ""), "\n")...)
	}
	return out
}

// tabWidth is the distance between tab stops, as Markdown counts them.
const tabWidth = 4

// expandTabs replaces each tab with spaces up to the next tab stop. The
// screen is drawn cell by cell and a tab has no cell: left in, it would
// vanish (and "a\tb" read "ab"). Columns are cells, so wide characters
// and styles before a tab count as they are drawn.
func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		col := 0
		for {
			before, after, found := strings.Cut(line, "\t")
			b.WriteString(before)
			if !found {
				break
			}
			col += ansi.StringWidth(before)
			n := tabWidth - col%tabWidth
			b.WriteString(strings.Repeat(" ", n))
			col += n
			line = after
		}
	}
	return b.String()
}

// neutralizeRefs rewrites each character reference that Markdown would
// decode into a character termtext escapes ("&#27;", "&#x202e;", "&rlm;")
// as that escape ("\x1b", "\u202e", "\u200f"): Glamour decodes
// references, so "&#27;[8m" would reach the screen as a raw ESC that
// conceals what follows. A reference reads the same as the character it
// names would. It is rewritten in code spans and blocks too, where
// Markdown would have shown it as written: telling code from text
// again here is where a mistake would let the character through.
func neutralizeRefs(text string) string {
	if !strings.Contains(text, "&") {
		return text
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(text); i++ {
		if text[i] != '&' {
			continue
		}
		r, n := charRef(text[i:])
		if n == 0 {
			continue
		}
		esc := termtext.Text(string(r))
		if esc == string(r) {
			continue // a harmless character: Markdown may decode it
		}
		if b.Len() == 0 {
			b.Grow(len(text) + 16)
		}
		b.WriteString(text[last:i])
		b.WriteString(esc)
		last = i + n
		i += n - 1
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// charRef decodes the character reference s starts with, as CommonMark
// reads one: "&#" and 1–7 digits, "&#x" and 1–6 hex digits, or a name,
// then ";". Only the names of characters termtext escapes are known (in
// HTML5's list those are the two bidi marks). n is 0 when s does not start
// with one; a code point Markdown replaces with U+FFFD yields that.
func charRef(s string) (r rune, n int) {
	// The longest one, "&#1114111;", is 10 bytes: look no further.
	end := strings.IndexByte(s[:min(len(s), 11)], ';')
	if end < 3 {
		return 0, 0
	}
	body := s[1:end]
	switch body {
	case "lrm":
		return 0x200e, end + 1
	case "rlm":
		return 0x200f, end + 1
	}
	digits, ok := strings.CutPrefix(body, "#")
	if !ok {
		return 0, 0
	}
	base, maxLen := 10, 7
	if hex, ok := strings.CutPrefix(digits, "x"); ok {
		digits, base, maxLen = hex, 16, 6
	} else if hex, ok := strings.CutPrefix(digits, "X"); ok {
		digits, base, maxLen = hex, 16, 6
	}
	if digits == "" || len(digits) > maxLen {
		return 0, 0
	}
	v, err := strconv.ParseUint(digits, base, 32)
	if err != nil {
		return 0, 0
	}
	if v == 0 || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) {
		return 0xfffd, end + 1
	}
	return rune(v), end + 1
}
