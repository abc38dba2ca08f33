// Package dialog holds the overlays opened by slash commands: pickers for
// conversations, models, modes and efforts, the skills and permissions
// lists, the pairing card and the help screen.
//
// A dialog never calls the workspace. It answers each key with an Action
// value saying what the person chose; the root model turns that into a
// workspace call in a tea.Cmd and, where needed, hands fresh data back.
package dialog

import (
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/internal/termtext"
	"github.com/infer-workspace/infer/tui/frame"
	"github.com/infer-workspace/infer/tui/theme"
)

// ActionKind says what a key did in a dialog.
type ActionKind int

// Dialog actions.
const (
	// None: the key was used inside the dialog.
	None ActionKind = iota
	// Close: the dialog is done.
	Close
	// Open the conversation ID.
	Open
	// Rename conversation ID to Text.
	Rename
	// Pin (Flag) or unpin conversation ID.
	Pin
	// Delete conversation ID.
	Delete
	// SelectModel switches to model ID.
	SelectModel
	// SetMode switches to mode ID.
	SetMode
	// SetEffort sets effort ID.
	SetEffort
	// Insert puts Text into the editor (a skill's command).
	Insert
	// Revoke grant ID.
	Revoke
	// Copy puts Text on the clipboard.
	Copy
	// TrustFolder trusts the project folder ID (the trust dialog).
	TrustFolder
)

// Action is a dialog's answer to a key.
type Action struct {
	Kind ActionKind
	ID   string
	Text string
	Flag bool
}

// Dialog is an overlay that takes every key while it is open.
type Dialog interface {
	// HandleKey answers a key press.
	HandleKey(k tea.KeyPressMsg) Action
	// HandlePaste takes pasted text (search fields); others ignore it.
	HandlePaste(text string)
	// View draws the dialog within maxW×maxH; it picks its own size.
	View(maxW, maxH int) string
	// SetTheme switches styles.
	SetTheme(th *theme.Theme)
}

// box draws a dialog frame sized to its content within the bounds, with a
// cell of padding on either side of the text: a line as wide as the box
// is cut before the right border rather than touching it.
func box(th *theme.Theme, title string, body []string, footer string, prefW, maxW, maxH int) string {
	w := min(prefW, maxW)
	for _, l := range body {
		w = max(w, min(ansi.StringWidth(l)+4, maxW))
	}
	w = min(max(w, min(24, maxW)), maxW)
	h := min(len(body)+2, maxH)
	fitted := make([]string, len(body))
	for i, l := range body {
		fitted[i] = frame.Pad(l, max(w-4, 1))
	}
	return frame.Box(th, title, true, w, h, frame.Indent(fitted), footer)
}

// Row is one entry of a list dialog.
type Row struct {
	ID     string
	Mark   string // a one-cell symbol before the title ("●" current, "★" pinned)
	Title  string
	Detail string
}

// Keys every list dialog shares. Letters are never among them: every
// list filters as the person types, so a letter is always part of the
// search (a picker that ignored typing once turned "/mode", enter,
// "plan", enter into choosing the current mode).
var (
	keyUp       = key.NewBinding(key.WithKeys("up", "ctrl+p"), key.WithHelp("↑↓", "move"))
	keyDown     = key.NewBinding(key.WithKeys("down", "ctrl+n"))
	keyPageUp   = key.NewBinding(key.WithKeys("pgup"))
	keyPageDown = key.NewBinding(key.WithKeys("pgdown"))
	keyChoose   = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "choose"))
	keyClose    = key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close"))
)

// chosen is what a shared key did in a chooser.
type chosen int

const (
	// chosenNone: the key moved the cursor or edited the search.
	chosenNone chosen = iota
	// chosenRow: enter on a row.
	chosenRow
	// chosenClose: esc.
	chosenClose
)

// chooser is the one picker behaviour: a search field over a list. Typing
// and pasting filter, the arrows (or ctrl+p/ctrl+n) and page keys move,
// enter chooses the row under the cursor, esc closes. Pickers, /resume
// and /permissions all embed it and add only their own keys.
type chooser struct {
	list
	search textinput.Model
}

func newChooser(rows []Row, current string) chooser {
	c := chooser{search: textinput.New()}
	c.search.Prompt = "search: "
	c.search.SetVirtualCursor(true)
	c.search.Focus()
	c.set(rows)
	c.selectID(current)
	return c
}

// handleKey applies a shared key; any other key is typing.
func (c *chooser) handleKey(k tea.KeyPressMsg) chosen {
	switch {
	case key.Matches(k, keyClose):
		return chosenClose
	case key.Matches(k, keyUp):
		c.move(-1)
	case key.Matches(k, keyDown):
		c.move(1)
	case key.Matches(k, keyPageUp):
		c.move(-10)
	case key.Matches(k, keyPageDown):
		c.move(10)
	case key.Matches(k, keyChoose):
		if _, ok := c.selected(); ok {
			return chosenRow
		}
	default:
		c.search, _ = c.search.Update(k)
		if c.search.Value() != c.query {
			c.filter(c.search.Value())
		}
	}
	return chosenNone
}

// paste adds pasted text, on one line, to the search.
func (c *chooser) paste(text string) {
	c.search.SetValue(c.search.Value() + strings.TrimSpace(strings.ReplaceAll(text, "\n", " ")))
	c.search.CursorEnd()
	c.filter(c.search.Value())
}

// searchLine draws the search field for a box w cells wide.
func (c *chooser) searchLine(w int) string {
	c.search.SetWidth(max(w-13, 4))
	return c.search.View()
}

// hint is a footer drawn from bindings by the bubbles help renderer, with
// "type to filter" first since typing is not a binding.
func hint(bindings ...key.Binding) string {
	r := help.New()
	r.ShortSeparator = " · "
	plain := lipgloss.NewStyle()
	r.Styles.ShortKey, r.Styles.ShortDesc, r.Styles.ShortSeparator = plain, plain, plain
	return "type to filter · " + r.ShortHelpView(bindings)
}

// with returns b with other help words.
func with(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// list is the scrolling, filterable list the pickers share.
type list struct {
	rows     []Row
	filtered []int
	cursor   int
	query    string
}

func (l *list) set(rows []Row) {
	sel := l.selectedID()
	l.rows = rows
	l.refilter()
	if sel != "" {
		for i, r := range l.filtered {
			if l.rows[r].ID == sel {
				l.cursor = i
			}
		}
	}
}

func (l *list) filter(q string) {
	l.query = q
	l.refilter()
	l.cursor = 0
	// A row whose title or ID is exactly what was typed is the one meant,
	// wherever it sorts: "auto" picks auto, not auto-with-judge.
	q = strings.ToLower(strings.TrimSpace(q))
	for i, r := range l.filtered {
		if q != "" && (strings.ToLower(l.rows[r].Title) == q || strings.ToLower(l.rows[r].ID) == q) {
			l.cursor = i
			break
		}
	}
}

func (l *list) refilter() {
	l.filtered = l.filtered[:0]
	q := strings.ToLower(strings.TrimSpace(l.query))
	for i, r := range l.rows {
		if q == "" || strings.Contains(strings.ToLower(r.Title), q) || strings.Contains(strings.ToLower(r.ID), q) {
			l.filtered = append(l.filtered, i)
		}
	}
	l.cursor = min(l.cursor, max(len(l.filtered)-1, 0))
}

func (l *list) move(d int) {
	if len(l.filtered) == 0 {
		return
	}
	l.cursor = min(max(l.cursor+d, 0), len(l.filtered)-1)
}

func (l *list) selected() (Row, bool) {
	if l.cursor < 0 || l.cursor >= len(l.filtered) {
		return Row{}, false
	}
	return l.rows[l.filtered[l.cursor]], true
}

func (l *list) selectedID() string {
	r, _ := l.selected()
	return r.ID
}

func (l *list) selectID(id string) {
	for i, r := range l.filtered {
		if l.rows[r].ID == id {
			l.cursor = i
		}
	}
}

// lines draws up to h rows around the cursor, w cells wide. The cursor
// row starts with "›" so selection does not rely on reverse video. Rows
// show conversation titles, model and skill names, grants that quote
// commands: each goes through termtext.Line as it is drawn.
func (l *list) lines(th *theme.Theme, w, h int) []string {
	if len(l.filtered) == 0 {
		return []string{th.Faint.Render("  nothing matches")}
	}
	h = max(h, 1)
	start := 0
	if l.cursor >= h {
		start = l.cursor - h + 1
	}
	var out []string
	for i := start; i < len(l.filtered) && len(out) < h; i++ {
		r := l.rows[l.filtered[i]]
		mark := termtext.Line(r.Mark)
		if mark == "" {
			mark = " "
		}
		// The box's borders and padding take 4 cells, the cursor column 2.
		cw := max(w-6, 1)
		line := mark + " " + termtext.Line(r.Title)
		if r.Detail != "" {
			room := cw - ansi.StringWidth(line) - 2
			if room > 6 {
				line += "  " + th.Faint.Render(ansi.Truncate(termtext.Line(r.Detail), room, "…"))
			}
		}
		line = ansi.Truncate(line, cw, "…")
		if i == l.cursor {
			out = append(out, th.Accent.Render("›")+" "+th.Selected.Render(frame.Pad(line, cw)))
		} else {
			out = append(out, "  "+line)
		}
	}
	return out
}
