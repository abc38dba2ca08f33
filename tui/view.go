package tui

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/internal/termtext"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/tui/frame"
	"github.com/infer-workspace/infer/tui/layout"
)

// maxInputLines mirrors the layout's cap on the editor's height.
func maxInputLines(h int) int { return max(1, min(10, h/4)) }

// compose lays out the panes for the current size and joins their views
// into the frame View returns. Panes draw from their caches, so this costs
// about one screen of string work.
func (m *Model) compose() {
	w, h := m.width, m.height
	m.input.SetSize(w, maxInputLines(h))
	if w < layout.ColumnsMinWidth {
		// The approvals pane needs its real width to measure its wish.
		m.approvals.SetSize(w, h)
	} else {
		m.approvals.SetSize(w-w*3/5, h)
	}
	l := layout.Compute(w, h, layout.Params{
		InputLines:    m.input.Lines(),
		ApprovalLines: m.approvals.DesiredLines(),
		Tab:           m.tab,
	})
	m.lay = l
	m.chat.SetSize(l.Chat.W, l.Chat.H)
	m.approvals.SetSize(l.Approvals.W, l.Approvals.H)
	m.browser.SetSize(l.Browser.W, l.Browser.H)

	rows := make([]string, 0, h)
	rows = append(rows, m.header(w))
	body := l.Input.Y - 1
	if l.Columns {
		left := lines(m.chat.View())
		right := append(lines(m.approvals.View()), lines(m.browser.View())...)
		// The panes' views are exact rectangles: join them unmeasured.
		for i := 0; i < body; i++ {
			rows = append(rows, at(left, i)+at(right, i))
		}
	} else {
		if body > 0 {
			rows = append(rows, m.tabBar(w))
		}
		var pane []string
		switch {
		case !l.Approvals.Empty():
			pane = lines(m.approvals.View())
		case !l.Browser.Empty():
			pane = lines(m.browser.View())
		default:
			pane = lines(m.chat.View())
		}
		for i := 0; i < body-1; i++ {
			rows = append(rows, at(pane, i))
		}
	}
	rows = append(rows, lines(m.input.View())...)
	rows = append(rows, m.statusBar(w))
	for len(rows) < h {
		rows = append(rows, strings.Repeat(" ", w))
	}
	out := strings.Join(rows[:h], "\n")

	var layers []*lipgloss.Layer
	if menu := m.input.MenuView(min(w, 72)); len(menu) > 0 && m.dialog == nil && m.focus == FocusInput {
		layers = append(layers, lipgloss.NewLayer(strings.Join(menu, "\n")).X(0).Y(max(l.Input.Y-len(menu), 0)))
	}
	m.cursor = nil
	if m.dialog != nil {
		layers = append(layers, centered(m.dialog.View(max(w-4, 10), max(h-2, 3)), w, h))
	} else if m.focus == FocusInput {
		if c := m.input.Cursor(); c != nil {
			c.Y += l.Input.Y
			m.cursor = c
		}
	}
	out = layered(out, w, h, layers...)
	if m.opts.NoColor {
		out = ansi.Strip(out)
	}
	m.frame = out
	m.dirty = false
}

func lines(s string) []string { return strings.Split(s, "\n") }

func at(ls []string, i int) string {
	if i < len(ls) {
		return ls[i]
	}
	return ""
}

// centered places a box in the middle of a w×h screen.
func centered(box string, w, h int) *lipgloss.Layer {
	return lipgloss.NewLayer(box).
		X(max((w-lipgloss.Width(box))/2, 0)).
		Y(max((h-lipgloss.Height(box))/2, 0))
}

// layered draws layers over base, an exact w×h block, with Lip Gloss's
// compositor, and returns an exact w×h block again: the canvas trims the
// spaces that end a row, and the panes and goldens count on full rows.
// Only the rows the layers cover go through the canvas (a cell buffer
// costs about as much per row as the rest of a frame); the others are
// kept as they are. Without layers base is returned untouched. The
// layers' Y is moved to the band's top: they are made for one call.
func layered(base string, w, h int, layers ...*lipgloss.Layer) string {
	if len(layers) == 0 || w <= 0 || h <= 0 {
		return base
	}
	top, bottom := h, 0
	for _, l := range layers {
		top, bottom = min(top, l.GetY()), max(bottom, l.GetY()+l.Height())
	}
	top, bottom = max(top, 0), min(bottom, h)
	if top >= bottom {
		return base
	}
	rows := strings.Split(base, "\n")
	if len(rows) != h {
		rows = frame.Fit(rows, w, h)
	}
	for _, l := range layers {
		l.Y(l.GetY() - top)
	}
	canvas := lipgloss.NewCanvas(w, bottom-top)
	// The band is drawn first and on its own: in the compositor it would
	// be measured again for bounds it does not need.
	canvas.Compose(lipgloss.NewLayer(strings.Join(rows[top:bottom], "\n")))
	canvas.Compose(lipgloss.NewCompositor(layers...))
	copy(rows[top:bottom], frame.Fit(frame.Lines(canvas.Render()), w, bottom-top))
	return strings.Join(rows, "\n")
}

func (m *Model) header(w int) string {
	th := m.th
	title := termtext.Line(m.title) // often the model's words
	if title == "" {
		title = "new conversation"
	}
	left := th.Accent.Render("infer") + th.Faint.Render(" · ") + th.Title.Render(title)
	if m.keyHint == "" {
		r := help.New()
		r.ShortSeparator = " · "
		r.Styles.ShortKey, r.Styles.ShortDesc, r.Styles.ShortSeparator = th.Faint, th.Faint, th.Faint
		m.keyHint = r.ShortHelpView(keys.ShortHelp())
	}
	right := m.keyHint
	gap := w - ansi.StringWidth(left) - ansi.StringWidth(right)
	if gap < 1 {
		return frame.Pad(left, w)
	}
	return left + strings.Repeat(" ", gap) + right
}

// tabBar names the panes of the narrow layout; the shown one is bracketed
// so the choice does not rest on colour.
func (m *Model) tabBar(w int) string {
	th := m.th
	name := func(t layout.Tab, label string) string {
		if m.tab == t {
			return th.Accent.Render("[" + label + "]")
		}
		return th.Faint.Render(" " + label + " ")
	}
	ap := "Approvals"
	if n := m.approvals.Len(); n > 0 {
		ap += " ⚠" + strconv.Itoa(n)
	}
	br := "Browser " + browserMark(m.browser.Status().State)
	bar := name(layout.TabChat, "Chat") + " " + name(layout.TabApprovals, ap) + " " + name(layout.TabBrowser, br) +
		th.Faint.Render("  tab switches")
	return frame.Pad(bar, w)
}

func browserMark(s browser.State) string {
	switch s {
	case browser.Connected:
		return "●"
	case browser.Disconnected:
		return "✗"
	}
	return "○"
}

// statusBar shows mode, model, the browser, the turn, and any flash.
func (m *Model) statusBar(w int) string {
	th := m.th
	// Mode and model names come from configuration and providers, and a
	// flash often quotes an error (a provider's, a file's): all are drawn
	// through termtext.Line.
	mode := termtext.Line(m.mode)
	if mode == "" {
		mode = "…"
	}
	model := termtext.Line(m.model)
	st := m.browser.Status().State
	mark, state := browserMark(st), st.String()
	if m.browser.Off() {
		mark, state = "○", "off"
	}
	wide := w >= 90
	var parts []string
	if wide {
		parts = append(parts, th.Key.Render("mode: "+mode)+th.Faint.Render(" (shift+tab)"))
		if model != "" {
			parts = append(parts, "model: "+model)
		}
		parts = append(parts, "browser: "+mark+" "+state)
	} else {
		// Narrow: the same facts, fewer words.
		parts = append(parts, th.Key.Render(mode))
		if model != "" {
			parts = append(parts, model)
		}
		parts = append(parts, mark+" browser")
	}
	if u := m.opts.Unconfined; u != "" {
		parts = append(parts, th.Warn.Render("⚠ "+termtext.Line(u)))
	}
	if t := termtext.Line(m.mcp.text); t != "" {
		if m.mcp.warn {
			t = th.Warn.Render("⚠ " + t)
		}
		parts = append(parts, t)
	}
	if m.busy {
		parts = append(parts, th.Accent.Render(spinner(m.spinFrame()))+" working · esc stops")
	}
	if n := m.approvals.Len(); n > 0 {
		parts = append(parts, th.Warn.Render("⚠ "+strconv.Itoa(n)+" to approve"))
	}
	// Tokens come last: when the bar is cut, they go first.
	if u := m.usage[m.convID]; u != (llm.Usage{}) {
		parts = append(parts, th.Faint.Render(usageText(u, wide)))
	}
	left := strings.Join(parts, th.Faint.Render(" · "))
	if m.flash == "" {
		return frame.Pad(left, w)
	}
	style := th.Faint
	if m.flashWarn {
		style = th.Warn
	}
	flash := style.Render(termtext.Line(m.flash))
	// The flash matters more than the tail of the status: it keeps its
	// room and the status is cut.
	fw := ansi.StringWidth(flash)
	if fw+3 >= w {
		return frame.Pad(flash, w)
	}
	return frame.Pad(ansi.Truncate(left, w-fw-3, "…")+" · "+flash, w)
}

// usageText names a conversation's token counts: "tokens 1.2k in · 340
// out" (reasoning, when reported, is part of the output).
func usageText(u llm.Usage, wide bool) string {
	if !wide {
		return tokens(u.InputTokens) + "/" + tokens(u.OutputTokens) + " tok"
	}
	s := "tokens " + tokens(u.InputTokens) + " in · " + tokens(u.OutputTokens) + " out"
	if u.ReasoningTokens > 0 {
		s += " (" + tokens(u.ReasoningTokens) + " reasoning)"
	}
	return s
}

// tokens writes a count in at most five characters, rounding down so a
// count never looks larger than it is.
func tokens(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n)
	case n < 10_000:
		return strconv.Itoa(n/1000) + "." + strconv.Itoa(n%1000/100) + "k"
	case n < 1_000_000:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n/1_000_000) + "." + strconv.Itoa(n%1_000_000/100_000) + "M"
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func spinner(i int) string { return spinnerFrames[i%len(spinnerFrames)] }

// spinFrame reads the chat's spinner frame so both spin in step.
func (m *Model) spinFrame() int { return m.chat.Frame() }

var _ tea.Model = (*Model)(nil)
