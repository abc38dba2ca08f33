package tui

import (
	tea "charm.land/bubbletea/v2"
	"time"

	"github.com/infer-workspace/infer/tui/approvals"
	"github.com/infer-workspace/infer/tui/dialog"
	"github.com/infer-workspace/infer/tui/input"
	"github.com/infer-workspace/infer/tui/workspace"
)

// helpSections is the one list of keys: the help overlay shows it and a
// test checks that every key handled here is in it.
func helpSections() []dialog.HelpSection {
	return []dialog.HelpSection{
		{Title: "Anywhere", Keys: [][2]string{
			{"esc", "stop the running turn (or close what is open)"},
			{"ctrl+c", "stop the running turn; twice in a row quits"},
			{"shift+tab", "next mode: standard → plan → auto → auto-with-judge"},
			{"tab", "next pane: editor → chat → approvals → browser"},
			{"pgup / pgdown", "scroll the chat by a page"},
			{"ctrl+u / ctrl+d", "scroll the chat by half a page"},
			{"home / end", "chat top / latest (from the chat, or an empty editor)"},
			{"mouse wheel", "scroll the pane under the pointer"},
			{"? / f1", "this help (? when the editor is empty)"},
		}},
		{Title: "Editor", Keys: [][2]string{
			{"enter", "send (queued while the agent works)"},
			{"shift+enter / ctrl+j", "new line"},
			{"↑ / ↓", "input history (on the first / last line)"},
			{"/", "commands and skills; tab fills, enter runs"},
			{"!command", "run a shell command (asks like Bash would)"},
		}},
		{Title: "Chat", Keys: [][2]string{
			{"↑ / ↓  k / j", "select a tool call or reasoning"},
			{"enter / space", "expand or collapse the selection"},
		}},
		{Title: "Approvals", Keys: [][2]string{
			{"y / enter", "allow once"},
			{"a", "always allow (saves a permission)"},
			{"n", "reject, with an optional reason"},
			{"↑ / ↓", "scroll a long request"},
		}},
		{Title: "Commands", Keys: [][2]string{
			{"/new  /clear", "start a new conversation"},
			{"/resume", "open, rename, pin or delete a conversation"},
			{"/model  /mode  /effort", "pick the model, mode, reasoning effort"},
			{"/temperature", "0–2, or default"},
			{"/skills  /permissions", "list skills · review and revoke permissions"},
			{"/pair", "pair the browser extension"},
			{"/help  /quit", "this help · quit"},
		}},
	}
}

func (m *Model) handleKey(k tea.KeyPressMsg) tea.Cmd {
	key := k.String()
	if key != "ctrl+c" {
		// A flash lasts until the next key: long enough to read, and it
		// never hides what the person does next.
		m.ctrlC = false
		m.flash = ""
	}
	switch key {
	case "ctrl+c":
		return m.handleCtrlC()
	case "f1":
		m.toggleHelp()
		return nil
	}
	if m.dialog != nil {
		return m.handleDialogAction(m.dialog.HandleKey(k))
	}
	if m.focus == FocusApprovals && m.approvals.Capturing() {
		return m.handleApprovalKey(k) // the reason line takes every key
	}
	switch key {
	case "shift+tab":
		ws := m.ws
		return func() tea.Msg { ws.CycleMode(); return nil }
	case "esc":
		return m.handleEsc(k)
	case "pgup", "pgdown":
		if m.focus == FocusApprovals {
			break
		}
		if key == "pgup" {
			m.chat.PageUp()
		} else {
			m.chat.PageDown()
		}
		return nil
	case "ctrl+u":
		m.chat.HalfPageUp()
		return nil
	case "ctrl+d":
		m.chat.HalfPageDown()
		return nil
	case "home", "end":
		if m.focus == FocusChat || (m.focus == FocusInput && m.input.Value() == "") {
			if key == "home" {
				m.chat.Top()
			} else {
				m.chat.Bottom()
			}
			return nil
		}
	case "tab":
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
		switch key {
		case "up", "k":
			m.browser.ScrollBy(1)
			return nil
		case "down", "j":
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
	m.dialog = dialog.NewHelp(m.th, helpSections())
}

func (m *Model) handleInputKey(k tea.KeyPressMsg) tea.Cmd {
	m.lastTyped = m.now()
	if k.String() == "?" && m.input.Value() == "" {
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
	switch k.String() {
	case "up", "k":
		m.chat.SelectPrev()
	case "down", "j":
		m.chat.SelectNext()
	case "enter", "space":
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
		if !ws.Answer(id, d) {
			return flashMsg{text: "that request was already answered elsewhere"}
		}
		if d.Kind == workspace.AllowAlways {
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
