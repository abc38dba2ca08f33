// Package browserpane is the pane about the person's browser: whether the
// extension is connected (and how to pair it when it is not), the page the
// agent controls, the open tabs with the controlled and focused ones
// marked, the latest browser commands with their latency and outcome, and
// the latest screenshot drawn with half-block cells. Everything comes from
// workspace events; nothing is read back from tool output.
package browserpane

import (
	"image"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/internal/termtext"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/tui/frame"
	"github.com/infer-workspace/infer/tui/theme"
	"github.com/infer-workspace/infer/tui/toolfmt"
)

// maxLog bounds the command log.
const maxLog = 50

// Model is the browser pane.
type Model struct {
	th *theme.Theme

	w, h    int
	focused bool
	port    int    // for the pairing hint; 0 when unknown
	off     string // why the bridge is not running; "" when it is

	status  browser.Status
	page    browser.Tab // URL and Title of the controlled tab's page
	hasPage bool
	tabs    []browser.Tab
	hasTab  bool
	log     []browser.CommandRecord // newest last
	scroll  int                     // log lines scrolled past the newest

	shotURL string
	shotAt  time.Time
	shotErr string
	shot    *image.RGBA
	// The drawn screenshot, cached for one size and theme.
	shotKey   [3]int
	shotLines []string
}

// New returns the pane; port (0 if unknown) goes into the pairing hint.
func New(th *theme.Theme, port int) *Model { return &Model{th: th, port: port} }

// KeyMap is the browser pane's keys while it has the focus; the root
// matches them and the help screen lists them.
type KeyMap struct {
	// Up and Down scroll the command log.
	Up, Down key.Binding
}

// Keys are the browser pane's keys.
var Keys = KeyMap{
	Up:   key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑ / ↓  k / j", "scroll the browser pane's command log")),
	Down: key.NewBinding(key.WithKeys("down", "j")),
}

// Help lists the pane's keys for the help screen.
func (m *Model) Help() []key.Binding { return []key.Binding{Keys.Up} }

// SetTheme switches styles.
func (m *Model) SetTheme(th *theme.Theme) { m.th, m.shotLines = th, nil }

// SetSize sets the outer size, border included.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// SetFocused marks the pane as the one receiving keys.
func (m *Model) SetFocused(f bool) { m.focused = f }

// SetStatus records the extension connection state.
func (m *Model) SetStatus(s browser.Status) { m.status = s }

// Status returns the connection state the pane shows.
func (m *Model) Status() browser.Status { return m.status }

// SetOff says the bridge is not running and why (with what to do); the
// pane shows that instead of the pairing hint. "" means it runs.
func (m *Model) SetOff(why string) { m.off = why }

// Off reports whether the bridge is not running.
func (m *Model) Off() bool { return m.off != "" }

// AddCommand logs a finished browser command.
func (m *Model) AddCommand(r browser.CommandRecord) {
	m.log = append(m.log, r)
	if len(m.log) > maxLog {
		m.log = append(m.log[:0:0], m.log[len(m.log)-maxLog:]...)
	}
}

// SetTabs shows the tabs the extension reported last. When the list marks
// a controlled tab, it is the freshest word on it and the page line
// follows. A list without the mark says nothing about it (opentask 1.12.1
// never sends the mark), so the page line stays.
func (m *Model) SetTabs(tabs []browser.Tab) {
	m.tabs, m.hasTab = append([]browser.Tab(nil), tabs...), true
	for _, t := range tabs {
		if t.Controlled {
			m.page, m.hasPage = browser.Tab{URL: t.URL, Title: t.Title}, true
			break
		}
	}
}

// SetPage shows the controlled tab's page. The tab list is only as fresh
// as the last time the agent asked for it, so the controlled tab's entry
// follows the page too.
func (m *Model) SetPage(url, title string) {
	m.page, m.hasPage = browser.Tab{URL: url, Title: title}, true
	for i := range m.tabs {
		if m.tabs[i].Controlled {
			m.tabs[i].URL, m.tabs[i].Title = url, title
		}
	}
}

// Page titles and URLs, tab lists, the extension's version and reasons, the
// commands' targets and errors all come from the browser or the pages in
// it (and the bridge-off reason quotes a config error), so every one goes
// through termtext where it is drawn: Line for what is one row, Text for
// what may have lines.

// SetScreenshot shows a decoded screenshot of url taken at at, or why it
// could not be decoded.
func (m *Model) SetScreenshot(img *image.RGBA, url string, at time.Time, err error) {
	m.shot, m.shotURL, m.shotAt, m.shotLines, m.shotErr = img, url, at, nil, ""
	if err != nil {
		m.shot, m.shotErr = nil, err.Error()
	}
}

// ScrollBy scrolls the command log.
func (m *Model) ScrollBy(n int) { m.scroll = min(max(m.scroll+n, 0), max(len(m.log)-1, 0)) }

// View draws the pane at its size, border included.
func (m *Model) View() string {
	inner := max(m.w-4, 1) // a cell of padding on either side
	bodyH := max(m.h-2, 0)
	th := m.th
	head := m.statusLines(inner)
	if m.hasPage && m.off == "" {
		head = append(head, m.pageLine(inner))
	}
	// A screenshot is what a person looks at most: when the pane is short
	// the command log and then the tab list give up rows so that at least
	// minPicture rows of it show (at 80×24 it used to get none).
	shotNeed := 0
	if m.shot != nil {
		shotNeed = 2 + minPicture
	}
	tabs, logN, showLog := 6, 5, true
	for shotNeed > 0 && len(head)+len(m.tabLines(inner, tabs))+len(m.logLines(inner, logN, showLog))+shotNeed > bodyH {
		switch {
		case logN > 1 && showLog:
			logN--
		case tabs > 1:
			tabs--
		case showLog && len(m.log) > 0:
			showLog = false
		default:
			shotNeed = 0 // too short even so: the picture gets what is left
		}
	}
	body := append(head, m.tabLines(inner, tabs)...)
	body = append(body, m.logLines(inner, logN, showLog)...)

	// The screenshot takes what is left, if that is enough to see.
	if m.shot != nil || m.shotErr != "" {
		room := bodyH - len(body) - 2
		label := "Screenshot"
		if !m.shotAt.IsZero() {
			label += " · " + m.shotAt.Format("15:04:05")
		}
		if m.shotURL != "" {
			label += " · " + termtext.Line(m.shotURL)
		}
		switch {
		case m.shotErr != "":
			body = append(body, "", th.Title.Render(ansi.Truncate(label, inner, "…")))
			body = append(body, th.Warn.Render(ansi.Truncate("⚠ "+termtext.Line(m.shotErr), inner, "…")))
		case room >= 3:
			body = append(body, "", th.Title.Render(ansi.Truncate(label, inner, "…")))
			body = append(body, m.picture(inner, room)...)
		}
	}
	footer := ""
	if m.focused && showLog && len(m.log) > logN {
		footer = "↑↓ scroll log"
	}
	return frame.Box(th, "Browser", m.focused, m.w, m.h, frame.Indent(body), footer)
}

// minPicture is the fewest rows a screenshot preview is worth drawing in.
const minPicture = 4

// tabLines is the tab list, at most max tabs, with its title and legend.
func (m *Model) tabLines(inner, most int) []string {
	if !m.hasTab {
		return nil
	}
	th := m.th
	lines := []string{"", th.Title.Render("Tabs")}
	if len(m.tabs) == 0 {
		lines = append(lines, th.Faint.Render("no tabs open"))
	}
	for i, t := range m.tabs {
		if i == most {
			lines = append(lines, th.Faint.Render("… "+strconv.Itoa(len(m.tabs)-most)+" more"))
			break
		}
		lines = append(lines, m.tabLine(t, inner))
	}
	if len(m.tabs) > 0 {
		lines = append(lines, th.Faint.Render("▶ controlled · • focused"))
	}
	return lines
}

// logLines is the newest n commands (from the scroll position) under a
// title, or nothing when show is false.
func (m *Model) logLines(inner, n int, show bool) []string {
	if !show || len(m.log) == 0 {
		return nil
	}
	lines := []string{"", m.th.Title.Render("Recent commands")}
	for i := len(m.log) - 1 - m.scroll; i >= 0 && len(lines) < n+2; i-- {
		lines = append(lines, m.logLine(m.log[i], inner))
	}
	return lines
}

func (m *Model) statusLines(w int) []string {
	th := m.th
	s := m.status
	var lines []string
	switch {
	case m.off != "":
		lines = append(lines, th.Warn.Render("○ browser use is off"))
		lines = append(lines, wrap(th.Faint.Render(termtext.Text(m.off)), w)...)
	case s.State == browser.Connected:
		head := th.OK.Render("● connected")
		if s.ExtensionVersion != "" {
			head += " · extension " + termtext.Line(s.ExtensionVersion)
		}
		lines = append(lines, head)
		var detail []string
		if !s.Since.IsZero() {
			detail = append(detail, "since "+s.Since.Format("15:04:05"))
		}
		if s.RTT > 0 {
			detail = append(detail, "ping "+toolfmt.Duration(s.RTT))
		}
		if len(detail) > 0 {
			lines = append(lines, th.Faint.Render(strings.Join(detail, " · ")))
		}
		if s.Via != "" {
			lines = append(lines, wrap(th.Faint.Render("through "+termtext.Line(s.Via)+", which holds the port"), w)...)
		}
		lines = append(lines, m.flappingLines(w)...)
	case s.State == browser.Disconnected:
		head := th.Err.Render("✗ disconnected")
		if !s.Since.IsZero() {
			head += th.Faint.Render(" since " + s.Since.Format("15:04:05"))
		}
		lines = append(lines, head)
		if s.Reason != "" {
			lines = append(lines, wrap(th.Faint.Render("reason: "+termtext.Line(s.Reason)), w)...)
		}
		lines = append(lines, wrap(th.Faint.Render("It reconnects by itself; if not, type /pair."), w)...)
		lines = append(lines, m.flappingLines(w)...)
	default:
		lines = append(lines, th.Warn.Render("○ waiting for the browser extension"))
		// /pair, not `infer pair`: it shows the port this infer listens
		// on, which --port may have set apart from browser_use.yaml's.
		hint := "To pair it, type /pair"
		if m.port > 0 {
			hint += " (port " + strconv.Itoa(m.port) + ")"
		}
		lines = append(lines, wrap(th.Faint.Render(hint+" and paste the token into the extension's options."), w)...)
		if s.Reason != "" {
			lines = append(lines, wrap(th.Warn.Render("⚠ "+termtext.Line(s.Reason)), w)...)
		}
	}
	for i := range lines {
		lines[i] = ansi.Truncate(lines[i], w, "…")
	}
	return lines
}

// flappingLines warn, while the bridge reports it, that two browsers keep
// replacing each other's connection and that the bridge sends neither a
// command meanwhile; nil otherwise.
func (m *Model) flappingLines(w int) []string {
	if m.status.Flapping <= 0 {
		return nil
	}
	return wrap(m.th.Warn.Render("⚠ two browsers with the extension and this token keep replacing each other ("+
		strconv.Itoa(m.status.Flapping)+" times lately), so browser commands are paused: disconnect it in one of them."), w)
}

func wrap(s string, w int) []string {
	return strings.Split(ansi.Wrap(s, max(w, 1), ""), "\n")
}

func (m *Model) pageLine(w int) string {
	title := termtext.Line(m.page.Title)
	if title == "" {
		title = "(untitled)"
	}
	line := m.th.Faint.Render("page ") + title
	if m.page.URL != "" && m.page.URL != m.page.Title {
		line += m.th.Faint.Render(" — " + termtext.Line(m.page.URL))
	}
	return ansi.Truncate(line, w, "…")
}

func (m *Model) tabLine(t browser.Tab, w int) string {
	mark := " "
	if t.Controlled {
		mark = "▶"
	}
	focus := " "
	if t.Active {
		focus = "•"
	}
	title := termtext.Line(t.Title)
	if title == "" {
		title = "(untitled)"
	}
	line := mark + focus + " " + title
	if t.URL != "" {
		line += m.th.Faint.Render(" — " + termtext.Line(t.URL))
	}
	if t.Controlled {
		line = m.th.Bold.Render(mark+focus+" "+title) + strings.TrimPrefix(line, mark+focus+" "+title)
	}
	return ansi.Truncate(line, w, "…")
}

func (m *Model) logLine(r browser.CommandRecord, w int) string {
	th := m.th
	sym := th.OK.Render("✓")
	if r.Err != "" {
		sym = th.Err.Render("✗")
	}
	line := sym + " " + termtext.Line(string(r.Action))
	if r.Target != "" {
		line += " " + termtext.Line(r.Target)
	}
	line += th.Faint.Render(" · " + toolfmt.Duration(r.Latency))
	if r.Err != "" {
		line += th.Err.Render(" · " + termtext.Line(toolfmt.OneLine(r.Err)))
	}
	return ansi.Truncate(line, w, "…")
}

func (m *Model) picture(w, h int) []string {
	mode := 0
	if m.th.NoColor {
		mode = 1
	}
	key := [3]int{w, h, mode}
	if m.shotLines != nil && key == m.shotKey {
		return m.shotLines
	}
	if mode == 1 {
		m.shotLines = Shades(m.shot, w, h)
	} else {
		m.shotLines = HalfBlocks(m.shot, w, h)
	}
	m.shotKey = key
	return m.shotLines
}
