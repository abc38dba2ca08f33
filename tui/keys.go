package tui

import (
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/tui/approvals"
	"github.com/infer-workspace/infer/tui/browserpane"
	"github.com/infer-workspace/infer/tui/chat"
	"github.com/infer-workspace/infer/tui/dialog"
	"github.com/infer-workspace/infer/tui/input"
	"github.com/infer-workspace/infer/tui/pane"
)

// keyMap is every key the root answers. The help screen is drawn from
// these bindings and each pane's own (pane.Pane's Help), the same values
// the handlers match, so a key cannot work without being listed or be
// listed without working.
type keyMap struct {
	Quit, Help, HelpMark, Stop, CycleMode, NextPane key.Binding
	PageUp, PageDown, HalfUp, HalfDown, Top, Bottom key.Binding
	// Wheel is not a key: it stands in the help for the mouse handler.
	Wheel key.Binding
}

// keys are the root's bindings; helpKeys lists them with the panes'.
var keys = keyMap{
	Stop:      key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "stop the running turn (or close what is open)")),
	Quit:      key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "stop the running turn; twice in a row quits")),
	CycleMode: key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "next mode: standard → plan → auto → auto-with-judge")),
	NextPane:  key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next pane: editor → chat → approvals → browser")),
	PageUp:    key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup / pgdown", "scroll the chat by a page")),
	PageDown:  key.NewBinding(key.WithKeys("pgdown")),
	HalfUp:    key.NewBinding(key.WithKeys("ctrl+u"), key.WithHelp("ctrl+u / ctrl+d", "scroll the chat by half a page (in the editor ctrl+u deletes the line)")),
	HalfDown:  key.NewBinding(key.WithKeys("ctrl+d")),
	Top:       key.NewBinding(key.WithKeys("home"), key.WithHelp("home / end", "chat top / latest (from the chat, or an empty editor)")),
	Bottom:    key.NewBinding(key.WithKeys("end")),
	Wheel:     key.NewBinding(key.WithKeys("wheel"), key.WithHelp("mouse wheel", "scroll the pane under the pointer")),
	Help:      key.NewBinding(key.WithKeys("f1"), key.WithHelp("? / f1", "this help (? when the editor is empty)")),
	HelpMark:  key.NewBinding(key.WithKeys("?")),
}

// ShortHelp is the header's reminder.
func (k keyMap) ShortHelp() []key.Binding {
	h, q := k.HelpMark, k.Quit
	h.SetHelp("?", "help")
	q.SetHelp("ctrl+c", "quit")
	return []key.Binding{h, q}
}

// helpKeys is the help screen's key map: the root's keys, then each
// pane's own in tab order (helpTitles names the groups), then the slash
// commands.
type helpKeys struct{ panes [focusCount]pane.Pane }

// ShortHelp is the root's reminder.
func (h helpKeys) ShortHelp() []key.Binding { return keys.ShortHelp() }

// FullHelp is the help screen's key groups.
func (h helpKeys) FullHelp() [][]key.Binding {
	k := keys
	groups := [][]key.Binding{{k.Stop, k.Quit, k.CycleMode, k.NextPane, k.PageUp, k.HalfUp, k.Top, k.Wheel, k.Help}}
	for _, p := range h.panes {
		groups = append(groups, p.Help())
	}
	return append(groups, commandBindings())
}

// paneTitles name the panes' groups in the help, by the Focus that
// selects each pane (the order helpKeys lists them in).
var paneTitles = [focusCount]string{FocusInput: "Editor", FocusChat: "Chat", FocusApprovals: "Approvals", FocusBrowser: "Browser"}

// helpTitles name helpKeys' groups.
var helpTitles = slices.Concat([]string{"Anywhere"}, paneTitles[:], []string{"Commands"})

// commandBindings lists the slash commands for the help from the same
// table the "/" menu completes, joining names that do the same thing
// ("/new  /clear").
func commandBindings() []key.Binding {
	var out []key.Binding
	var names []string
	for i, c := range commands {
		names = append(names, "/"+c.Name)
		if i+1 < len(commands) && commands[i+1].Description == c.Description {
			continue
		}
		out = append(out, key.NewBinding(key.WithKeys(names...), key.WithHelp(strings.Join(names, "  "), c.Description)))
		names = nil
	}
	return out
}

func (m *Model) handleKey(k tea.KeyPressMsg) tea.Cmd {
	if !key.Matches(k, keys.Quit) {
		// A flash lasts until the next key: long enough to read, and it
		// never hides what the person does next.
		m.ctrlC = false
		m.flash = ""
	}
	switch {
	case key.Matches(k, keys.Quit):
		return m.handleCtrlC()
	case key.Matches(k, keys.Help):
		m.toggleHelp()
		return nil
	}
	if m.dialog != nil {
		return m.handleDialogAction(m.dialog.HandleKey(k))
	}
	if m.focus == FocusApprovals && m.approvals.Capturing() {
		return m.handleApprovalKey(k) // the reason line takes every key
	}
	switch {
	case key.Matches(k, keys.CycleMode):
		ws := m.ws
		return func() tea.Msg { ws.CycleMode(); return nil }
	case key.Matches(k, keys.Stop):
		return m.handleEsc(k)
	case key.Matches(k, keys.PageUp, keys.PageDown):
		if m.focus == FocusApprovals {
			break
		}
		if key.Matches(k, keys.PageUp) {
			m.chat.PageUp()
		} else {
			m.chat.PageDown()
		}
		return nil
	case key.Matches(k, keys.HalfUp):
		// In the editor ctrl+u is the shell's: it deletes the line
		// up to the cursor.
		if m.focus == FocusInput {
			break
		}
		m.chat.HalfPageUp()
		return nil
	case key.Matches(k, keys.HalfDown):
		m.chat.HalfPageDown()
		return nil
	case key.Matches(k, keys.Top, keys.Bottom):
		if m.focus == FocusChat || (m.focus == FocusInput && m.input.Value() == "") {
			if key.Matches(k, keys.Top) {
				m.chat.Top()
			} else {
				m.chat.Bottom()
			}
			return nil
		}
	case key.Matches(k, keys.NextPane):
		if !(m.focus == FocusInput && m.input.MenuOpen()) {
			m.cycleFocus(1)
			return nil
		}
	}
	switch m.focus {
	case FocusChat:
		return m.handleChatKey(k)
	case FocusApprovals:
		return m.handleApprovalKey(k)
	case FocusBrowser:
		switch {
		case key.Matches(k, browserpane.Keys.Up):
			m.browser.ScrollBy(1)
			return nil
		case key.Matches(k, browserpane.Keys.Down):
			m.browser.ScrollBy(-1)
			return nil
		}
		return m.typeIntoInput(k)
	}
	return m.handleInputKey(k)
}

const ctrlCHint = "press ctrl+c again to quit"

func (m *Model) handleCtrlC() tea.Cmd {
	if m.ctrlC {
		return tea.Quit
	}
	m.ctrlC = true
	m.flash, m.flashWarn = ctrlCHint, true
	if m.busy {
		ws := m.ws
		return func() tea.Msg { ws.Interrupt(); return nil }
	}
	return nil
}

func (m *Model) handleEsc(k tea.KeyPressMsg) tea.Cmd {
	switch {
	case m.focus == FocusInput && m.input.MenuOpen():
		return m.handleInputKey(k)
	case m.busy:
		ws := m.ws
		return func() tea.Msg { ws.Interrupt(); return nil }
	case m.focus == FocusChat && m.chat.Selected():
		m.chat.ClearSelection()
	case m.focus != FocusInput && !(m.focus == FocusApprovals && m.approvals.Len() > 0):
		m.setFocus(FocusInput)
	}
	return nil
}

func (m *Model) toggleHelp() {
	if _, open := m.dialog.(*dialog.Help); open {
		m.dialog = nil
		return
	}
	m.dialog = dialog.NewHelp(m.th, helpTitles, helpKeys{m.panes()})
}

func (m *Model) handleInputKey(k tea.KeyPressMsg) tea.Cmd {
	m.lastTyped = m.now()
	if key.Matches(k, keys.HelpMark) && m.input.Value() == "" {
		m.toggleHelp()
		return nil
	}
	a, cmd := m.input.HandleKey(k)
	if a.Kind == input.Submit {
		// Sending ends the typing: a request that the message leads to
		// may take the focus at once.
		m.lastTyped = time.Time{}
		cmd = tea.Batch(cmd, m.submit(a.Text))
		if m.deferredApproval && m.approvals.Len() > 0 {
			// The message is sent: the request that waited for it comes
			// up now, guarded afresh against the keys that follow.
			m.focusApprovals()
			m.approvals.Rearm()
			cmd = tea.Batch(cmd, m.ensureGuardTimer())
		}
	}
	return cmd
}

// typeIntoInput moves focus to the editor when someone starts typing
// elsewhere, so the first character is not lost.
func (m *Model) typeIntoInput(k tea.KeyPressMsg) tea.Cmd {
	if k.Text == "" || k.Mod != 0 && k.Mod != tea.ModShift {
		return nil
	}
	m.setFocus(FocusInput)
	return m.handleInputKey(k)
}

func (m *Model) handleChatKey(k tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(k, chat.Keys.Up):
		m.chat.SelectPrev()
	case key.Matches(k, chat.Keys.Down):
		m.chat.SelectNext()
	case key.Matches(k, chat.Keys.Toggle):
		m.chat.ToggleSelected()
	default:
		return m.typeIntoInput(k)
	}
	return nil
}

func (m *Model) handleApprovalKey(k tea.KeyPressMsg) tea.Cmd {
	had := m.approvals.Len() > 0
	a := m.approvals.HandleKey(k)
	if a.Kind == approvals.Unhandled {
		// A key that answers nothing, or comes too soon after the request
		// appeared, is typing: it goes to the editor (which takes the
		// focus) rather than being lost, and the request waits until the
		// message is sent, as one that arrives while the person types.
		cmd := m.typeIntoInput(k)
		if m.focus == FocusInput {
			m.deferApproval(true)
		}
		return cmd
	}
	if a.Kind != approvals.Answer {
		return m.ensureGuardTimer()
	}
	m.approvalsChanged(had)
	ws, id, d := m.ws, a.ID, a.Decision
	return tea.Batch(m.ensureGuardTimer(), func() tea.Msg {
		if !ws.Answer(id, d, tools.OriginTerminal) {
			return flashMsg{text: "that request was already answered elsewhere"}
		}
		if d.Kind == tools.AllowAlways {
			return flashMsg{text: "saved: calls like this one will not ask again (/permissions to review)"}
		}
		return nil
	})
}

func (m *Model) handlePaste(p tea.PasteMsg) tea.Cmd {
	if m.dialog != nil {
		m.dialog.HandlePaste(p.Content)
		return nil
	}
	if m.focus == FocusApprovals && m.approvals.Capturing() {
		m.approvals.HandlePaste(p.Content)
		return nil
	}
	if m.focus != FocusInput {
		if m.focus == FocusApprovals && m.approvals.Len() > 0 {
			// Pasting is typing: the request waits for the message, as
			// when a key that answers nothing moves to the editor.
			m.deferApproval(true)
		}
		m.setFocus(FocusInput)
	}
	m.lastTyped = m.now()
	return m.input.HandlePaste(p)
}

func (m *Model) handleWheel(w tea.MouseWheelMsg) {
	mouse := w.Mouse()
	step := 0
	switch mouse.Button {
	case tea.MouseWheelUp:
		step = -3
	case tea.MouseWheelDown:
		step = 3
	default:
		return
	}
	switch {
	case m.lay.Browser.Contains(mouse.X, mouse.Y):
		m.browser.ScrollBy(-step / 3)
	case m.lay.Approvals.Contains(mouse.X, mouse.Y):
		m.approvals.ScrollBy(step)
	default:
		m.chat.ScrollBy(step)
	}
}
