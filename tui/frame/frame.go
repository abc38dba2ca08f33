// Package frame draws the few shapes every pane shares: lines fitted to an
// exact width, blocks fitted to an exact size, and a titled box. Panes
// produce exact-size strings with it so the root view only joins them.
//
// Widths are terminal cells measured with x/ansi, never bytes, so styled
// text and wide runes fit.
package frame

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/tui/theme"
)

// Pad truncates or pads one line to exactly w cells.
func Pad(line string, w int) string {
	if w <= 0 {
		return ""
	}
	n := ansi.StringWidth(line)
	if n > w {
		line = ansi.Truncate(line, w, "…")
		n = ansi.StringWidth(line)
	}
	if n < w {
		line += strings.Repeat(" ", w-n)
	}
	return line
}

// Fit returns exactly h lines of exactly w cells: extra lines are cut,
// missing ones are blank.
func Fit(lines []string, w, h int) []string {
	out := make([]string, h)
	for i := range out {
		if i < len(lines) {
			out[i] = Pad(lines[i], w)
		} else {
			out[i] = strings.Repeat(" ", max(w, 0))
		}
	}
	return out
}

// Block is Fit joined with newlines.
func Block(lines []string, w, h int) string {
	return strings.Join(Fit(lines, w, h), "\n")
}

// Lines splits rendered text into lines (one trailing newline is ignored).
func Lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Indent puts one cell of padding before each line.
func Indent(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = " " + l
	}
	return out
}

// Box draws body inside a w×h border with title in the top edge and
// footer in the bottom edge. A focused box has a heavy border and a "▸"
// before its title, so focus does not rely on colour.
func Box(t *theme.Theme, title string, focused bool, w, h int, body []string, footer string) string {
	if w >= 2 && h >= 2 {
		body = Fit(body, w-2, h-2)
	}
	return BoxExact(t, title, focused, w, h, body, footer)
}

// BoxExact is Box for a body whose lines are already exactly w-2 cells
// wide (missing lines are filled): it skips measuring every line, which is
// most of the cost of a frame.
func BoxExact(t *theme.Theme, title string, focused bool, w, h int, body []string, footer string) string {
	if w < 2 || h < 2 {
		return Block(nil, max(w, 0), max(h, 0))
	}
	b := lipgloss.RoundedBorder()
	style := t.Border
	mark := " "
	if focused {
		b = lipgloss.ThickBorder()
		style = t.FocusBorder
		mark = " ▸ "
	}
	inner := w - 2
	top := edge(b.TopLeft, b.Top, b.TopRight, mark+title+" ", inner, style, t.Title)
	bottom := edge(b.BottomLeft, b.Bottom, b.BottomRight, footerText(footer), inner, style, t.Faint)
	var sb strings.Builder
	sb.WriteString(top)
	left, right := style.Render(b.Left), style.Render(b.Right)
	blank := strings.Repeat(" ", inner)
	for i := 0; i < h-2; i++ {
		line := blank
		if i < len(body) {
			line = body[i]
		}
		sb.WriteByte('\n')
		sb.WriteString(left)
		sb.WriteString(line)
		sb.WriteString(right)
	}
	sb.WriteByte('\n')
	sb.WriteString(bottom)
	return sb.String()
}

func footerText(f string) string {
	if f == "" {
		return ""
	}
	return " " + f + " "
}

// edge draws one horizontal edge with a label after the first corner run.
func edge(l, fill, r, label string, inner int, style, labelStyle lipgloss.Style) string {
	if strings.TrimSpace(label) == "" {
		return style.Render(l + strings.Repeat(fill, inner) + r)
	}
	maxLabel := max(inner-1, 0)
	if ansi.StringWidth(label) > maxLabel {
		label = ansi.Truncate(label, maxLabel, "…")
	}
	rest := max(inner-1-ansi.StringWidth(label), 0)
	return style.Render(l+fill) + labelStyle.Render(label) + style.Render(strings.Repeat(fill, rest)+r)
}
