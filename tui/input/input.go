// Package input is the message editor: a multi-line textarea where enter
// sends and shift+enter (or ctrl+j) breaks the line, arrow keys on the
// first or last line walk the shared input history, and "/" opens a
// completion menu of commands and skills.
package input

import (
	"sort"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/internal/termtext"
	"github.com/infer-workspace/infer/tui/frame"
	"github.com/infer-workspace/infer/tui/theme"
)

// KeyMap is the editor's own keys (the textarea's editing keys aside). The
// help screen is drawn from the same bindings the editor matches.
type KeyMap struct {
	// Send sends the message, or runs the command chosen in the menu.
	Send key.Binding
	// Newline breaks the line (the textarea's InsertNewline).
	Newline key.Binding
	// Up and Down walk the input history from the first or last line, or
	// move through the open menu.
	Up, Down key.Binding
	// Fill puts the chosen command or skill in the editor.
	Fill key.Binding
	// Dismiss closes the menu.
	Dismiss key.Binding
	// ClearLine deletes the line up to the cursor, as ctrl+u does in a
	// shell (the textarea's DeleteBeforeCursor).
	ClearLine key.Binding
	// Commands and Shell are typed, not pressed: "/" opens the menu and
	// "!" marks a shell command as the text is read. They are bindings
	// only so the help lists them beside the keys.
	Commands, Shell key.Binding
}

// Keys are the editor's keys.
var Keys = KeyMap{
	Send:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "send (queued while the agent works)")),
	Newline:   key.NewBinding(key.WithKeys("shift+enter", "ctrl+j"), key.WithHelp("shift+enter / ctrl+j", "new line")),
	Up:        key.NewBinding(key.WithKeys("up", "ctrl+p"), key.WithHelp("↑ / ↓", "input history (on the first / last line)")),
	Down:      key.NewBinding(key.WithKeys("down", "ctrl+n")),
	Fill:      key.NewBinding(key.WithKeys("tab")),
	ClearLine: key.NewBinding(key.WithKeys("ctrl+u"), key.WithHelp("ctrl+u", "delete the line up to the cursor")),
	Dismiss:   key.NewBinding(key.WithKeys("esc")),
	Commands:  key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "commands and skills; tab fills, enter runs")),
	Shell:     key.NewBinding(key.WithKeys("!"), key.WithHelp("!command", "run a shell command (asks like Bash would)")),
}

// Help lists the editor's keys for the help screen, in order.
func (m *Model) Help() []key.Binding {
	return []key.Binding{Keys.Send, Keys.Newline, Keys.Up, Keys.ClearLine, Keys.Commands, Keys.Shell}
}

// Completion is one entry of the "/" menu.
type Completion struct {
	Name        string // without the slash
	Description string
	// Command is true for the TUI's own commands (enter runs them); skills
	// are filled in so arguments can follow.
	Command bool
}

// ActionKind says what a key did.
type ActionKind int

// Editor actions.
const (
	// None: the editor used the key.
	None ActionKind = iota
	// Submit: the person sent Text.
	Submit
	// Unhandled: the key means nothing to the editor.
	Unhandled
)

// Action is the editor's answer to a key.
type Action struct {
	Kind ActionKind
	Text string
}

// maxMenu is how many completions show at once.
const maxMenu = 8

// Model is the editor.
type Model struct {
	th *theme.Theme
	ta textarea.Model
	w  int

	history []string
	histIdx int // index into history while browsing; len(history) when not
	draft   string

	completions []Completion
	matches     []Completion
	menuSel     int
	dismissed   string // the value at which esc closed the menu

	pending tea.Cmd // the textarea's command from the last key

	notice string // shown in the rule instead of the key hints

	view string // cached View; "" when the editor changed since
}

// New returns an empty, focused editor.
func New(th *theme.Theme) *Model {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Placeholder = "Message the agent · / for commands · ? for keys"
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = 10
	ta.MaxContentHeight = 1 << 20 // big pastes are fine; only the view is capped
	ta.CharLimit = 0
	ta.SetVirtualCursor(false)
	ta.SetPromptFunc(2, func(p textarea.PromptInfo) string {
		if p.LineNumber == 0 {
			return "› "
		}
		return "  "
	})
	km := textarea.DefaultKeyMap()
	// enter sends; a newline needs shift+enter or ctrl+j. ctrl+u clears
	// the line up to the cursor, as in a shell, which is what fingers
	// expect in a prompt; ctrl+d scrolls the chat, so it is taken out.
	km.InsertNewline = Keys.Newline
	km.DeleteBeforeCursor = Keys.ClearLine
	km.DeleteCharacterForward = key.NewBinding(key.WithKeys("delete"))
	km.PageUp = key.NewBinding(key.WithDisabled())
	km.PageDown = key.NewBinding(key.WithDisabled())
	ta.KeyMap = km
	ta.Focus()
	m := &Model{th: th, ta: ta}
	m.SetTheme(th)
	return m
}

// SetTheme switches styles.
func (m *Model) SetTheme(th *theme.Theme) {
	m.view = ""
	m.th = th
	s := textarea.DefaultStyles(th.Dark)
	if th.NoColor {
		plain := lipgloss.NewStyle()
		st := textarea.StyleState{Base: plain, Text: plain, LineNumber: plain, CursorLineNumber: plain,
			CursorLine: plain, EndOfBuffer: plain, Placeholder: plain, Prompt: plain, Selection: plain.Reverse(true)}
		s.Focused, s.Blurred = st, st
		s.Cursor.Color = nil
	} else {
		s.Focused.CursorLine = lipgloss.NewStyle()
		s.Focused.Prompt = th.Accent
	}
	m.ta.SetStyles(s)
}

// SetSize sets the width and the most lines the editor may grow to; its
// height follows the content.
func (m *Model) SetSize(w, maxLines int) {
	if w == m.w && max(maxLines, 1) == m.ta.MaxHeight {
		return
	}
	m.view = ""
	m.w = w
	m.ta.MaxHeight = max(maxLines, 1)
	m.ta.SetWidth(max(w, 4))
	m.ta.SetHeight(m.ta.Height())
}

// Lines is how many text lines the editor wants now.
func (m *Model) Lines() int { return max(m.ta.Height(), 1) }

// SetFocused gives the editor the keyboard focus or takes it away.
func (m *Model) SetFocused(f bool) {
	if f {
		m.ta.Focus()
	} else {
		m.ta.Blur()
	}
	m.view = ""
}

// Focused reports whether the editor has the focus.
func (m *Model) Focused() bool { return m.ta.Focused() }

// Value is the text being edited.
func (m *Model) Value() string { return m.ta.Value() }

// SetValue replaces the text and puts the cursor at its end.
func (m *Model) SetValue(s string) {
	m.view = ""
	m.ta.SetValue(s)
	m.ta.MoveToEnd()
	m.refreshMenu()
}

// Reset empties the editor.
func (m *Model) Reset() {
	m.view = ""
	m.ta.Reset()
	m.histIdx = len(m.history)
	m.draft = ""
	m.refreshMenu()
}

// SetHistory replaces the history (oldest first).
func (m *Model) SetHistory(h []string) {
	browsing := m.histIdx < len(m.history)
	m.history = h
	if !browsing {
		m.histIdx = len(h)
	} else {
		m.histIdx = min(m.histIdx, len(h))
	}
}

// SetCompletions sets what "/" offers.
func (m *Model) SetCompletions(c []Completion) {
	m.completions = append([]Completion(nil), c...)
	sort.SliceStable(m.completions, func(i, j int) bool { return m.completions[i].Name < m.completions[j].Name })
	m.refreshMenu()
}

// MenuOpen reports whether the completion menu shows.
func (m *Model) MenuOpen() bool { return len(m.matches) > 0 }

// HandlePaste inserts pasted text as it is, newlines included.
func (m *Model) HandlePaste(msg tea.PasteMsg) tea.Cmd {
	m.view = ""
	var cmd tea.Cmd
	m.ta, cmd = m.ta.Update(msg)
	m.refreshMenu()
	return cmd
}

// HandleKey answers a key press. The command is the textarea's own (a
// clipboard read for ctrl+v, for instance).
func (m *Model) HandleKey(k tea.KeyPressMsg) (Action, tea.Cmd) {
	a := m.handleKey(k)
	cmd := m.pending
	m.pending = nil
	return a, cmd
}

func (m *Model) handleKey(k tea.KeyPressMsg) Action {
	m.view = ""
	switch {
	case key.Matches(k, Keys.Send):
		if m.MenuOpen() {
			c := m.matches[m.menuSel]
			if c.Command {
				m.Reset()
				return Action{Kind: Submit, Text: "/" + c.Name}
			}
			m.SetValue("/" + c.Name + " ")
			return Action{}
		}
		text := m.ta.Value()
		if strings.TrimSpace(text) == "" {
			return Action{}
		}
		m.Reset()
		return Action{Kind: Submit, Text: text}
	case key.Matches(k, Keys.Fill):
		if m.MenuOpen() {
			m.SetValue("/" + m.matches[m.menuSel].Name + " ")
			return Action{}
		}
		return Action{Kind: Unhandled}
	case key.Matches(k, Keys.Dismiss):
		if m.MenuOpen() {
			m.dismissed = m.ta.Value()
			m.matches = nil
			return Action{}
		}
		return Action{Kind: Unhandled}
	case key.Matches(k, Keys.Up):
		if m.MenuOpen() {
			m.menuSel = (m.menuSel - 1 + len(m.matches)) % len(m.matches)
			return Action{}
		}
		if m.ta.Line() == 0 && m.historyStep(-1) {
			return Action{}
		}
	case key.Matches(k, Keys.Down):
		if m.MenuOpen() {
			m.menuSel = (m.menuSel + 1) % len(m.matches)
			return Action{}
		}
		if m.ta.Line() == m.ta.LineCount()-1 && m.historyStep(1) {
			return Action{}
		}
	}
	m.ta, m.pending = m.ta.Update(k)
	m.refreshMenu()
	return Action{}
}

// historyStep moves through the history; it reports false at either end so
// the key can move the cursor instead.
func (m *Model) historyStep(d int) bool {
	next := m.histIdx + d
	if next < 0 || next > len(m.history) || (d > 0 && m.histIdx == len(m.history)) {
		return false
	}
	if m.histIdx == len(m.history) {
		m.draft = m.ta.Value()
	}
	m.histIdx = next
	if next == len(m.history) {
		m.ta.SetValue(m.draft)
	} else {
		m.ta.SetValue(m.history[next])
	}
	if d < 0 {
		// Land on the first line so the next up keeps walking back.
		m.ta.MoveToBegin()
	} else {
		m.ta.MoveToEnd()
	}
	m.refreshMenu()
	return true
}

// refreshMenu recomputes the completions for the current text: prefix
// matches first, then names containing the text.
func (m *Model) refreshMenu() {
	v := m.ta.Value()
	m.matches = nil
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \n\t") || v == m.dismissed {
		m.menuSel = 0
		return
	}
	m.dismissed = ""
	q := strings.ToLower(v[1:])
	var rest []Completion
	for _, c := range m.completions {
		n := strings.ToLower(c.Name)
		switch {
		case strings.HasPrefix(n, q):
			m.matches = append(m.matches, c)
		case strings.Contains(n, q):
			rest = append(rest, c)
		}
	}
	m.matches = append(m.matches, rest...)
	m.menuSel = min(m.menuSel, max(len(m.matches)-1, 0))
}

// SetNotice shows s in the editor's rule instead of the key hints; ""
// brings the hints back.
func (m *Model) SetNotice(s string) {
	if s != m.notice {
		m.notice = s
		m.view = ""
	}
}

// View draws the editor: a rule with the key hints (or the notice), then
// the text.
func (m *Model) View() string {
	if m.view != "" {
		return m.view
	}
	th := m.th
	var rule string
	if m.notice != "" {
		// A notice replaces the key hints: it says what will happen next,
		// which matters more than keys the person already knows.
		notice := ansi.Truncate(" "+m.notice+" ", max(m.w-2, 1), "…")
		rule = th.Border.Render("─") + th.Warn.Render(notice) + th.Border.Render(strings.Repeat("─", max(m.w-1-ansi.StringWidth(notice), 0)))
	} else {
		hint := " enter send · shift+enter newline · ↑ history "
		rule = "─" + hint
		rule = th.Border.Render(frame.Pad(rule+strings.Repeat("─", max(m.w-ansi.StringWidth(rule), 0)), m.w))
	}
	m.view = rule + "\n" + frame.Block(strings.Split(m.ta.View(), "\n"), m.w, m.Lines())
	return m.view
}

// Cursor is the real cursor's position relative to the editor's top-left
// corner (the rule is line 0), or nil when it is hidden.
func (m *Model) Cursor() *tea.Cursor {
	c := m.ta.Cursor()
	if c == nil {
		return nil
	}
	c.Y++
	return c
}

// MenuView draws the completion menu (nil when closed), at most w wide.
func (m *Model) MenuView(w int) []string {
	if !m.MenuOpen() {
		return nil
	}
	th := m.th
	start := 0
	if m.menuSel >= maxMenu {
		start = m.menuSel - maxMenu + 1
	}
	// Skills are files in the project (a cloned repository, perhaps): their
	// names and descriptions are drawn through termtext.Line.
	nameW := 0
	for _, c := range m.matches {
		nameW = max(nameW, ansi.StringWidth(termtext.Line(c.Name))+1)
	}
	var body []string
	for i := start; i < len(m.matches) && i < start+maxMenu; i++ {
		c := m.matches[i]
		line := frame.Pad("/"+termtext.Line(c.Name), nameW+1) + " " + th.Faint.Render(termtext.Line(c.Description))
		line = ansi.Truncate(line, w-4, "…")
		if i == m.menuSel {
			body = append(body, th.Accent.Render("›")+" "+th.Selected.Render(frame.Pad(line, w-4)))
		} else {
			body = append(body, "  "+line)
		}
	}
	return strings.Split(frame.Box(th, "/ commands and skills", true, w, len(body)+2, body, "tab fill · enter run · esc close"), "\n")
}

// Forward passes any other message to the textarea (its own clipboard
// results, for instance).
func (m *Model) Forward(msg tea.Msg) tea.Cmd {
	m.view = ""
	var cmd tea.Cmd
	m.ta, cmd = m.ta.Update(msg)
	m.refreshMenu()
	return cmd
}
