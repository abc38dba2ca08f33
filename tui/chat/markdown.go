package chat

import (
	"strings"

	"charm.land/glamour/v2"
	gansi "charm.land/glamour/v2/ansi"
	"charm.land/glamour/v2/styles"
	"github.com/charmbracelet/x/ansi"
)

// Markdown renders Markdown with Glamour. It keeps one renderer per width
// because a renderer's wrap width is fixed at creation and renderers are
// not safe for concurrent use (all calls happen on the Update goroutine).
type Markdown struct {
	style     string
	renderers map[int]*glamour.TermRenderer
	order     []int // widths, oldest first, to bound the cache
}

// maxRenderers bounds the per-width cache: a resize drag visits many
// widths, and only the latest few matter.
const maxRenderers = 4

// NewMarkdown returns a renderer for a Glamour standard style ("dark",
// "light" or "notty").
func NewMarkdown(style string) *Markdown {
	return &Markdown{style: style, renderers: map[int]*glamour.TermRenderer{}}
}

// Style names the Glamour style in use.
func (m *Markdown) Style() string { return m.style }

func (m *Markdown) renderer(width int) *glamour.TermRenderer {
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
func (m *Markdown) Render(text string, width int) []string {
	width = max(width, 8)
	r := m.renderer(width)
	if r == nil {
		return Wrap(text, width)
	}
	out, err := r.Render(text)
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

// Wrap wraps plain text at width, breaking long words, keeping blank lines.
func Wrap(text string, width int) []string {
	width = max(width, 1)
	var out []string
	for _, para := range strings.Split(text, "\n") {
		if para == "" {
			out = append(out, "")
			continue
		}
		out = append(out, strings.Split(ansi.Wrap(para, width, ""), "\n")...)
	}
	return out
}
