package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/skills"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/tui/dialog"
	"github.com/infer-workspace/infer/tui/input"
	"github.com/infer-workspace/infer/tui/toolfmt"
)

// commands are the TUI's own slash commands. Anything else starting with
// "/" goes to the workspace as a message (skills, and /clear from habit).
var commands = []input.Completion{
	{Name: "new", Description: "start a new conversation", Command: true},
	{Name: "clear", Description: "start a new conversation", Command: true},
	{Name: "resume", Description: "open, rename, pin or delete a conversation", Command: true},
	{Name: "model", Description: "pick the model", Command: true},
	{Name: "mode", Description: "pick the agent mode", Command: true},
	{Name: "effort", Description: "pick the reasoning effort", Command: true},
	{Name: "temperature", Description: "set the sampling temperature (0–2, or default)", Command: true},
	{Name: "skills", Description: "list the skills", Command: true},
	{Name: "permissions", Description: "review and revoke saved permissions", Command: true},
	{Name: "pair", Description: "pair the browser extension", Command: true},
	{Name: "mcp", Description: "list the MCP servers, their state and tools (restart <name>)", Command: true},
	{Name: "help", Description: "every key and command", Command: true},
	{Name: "quit", Description: "leave infer", Command: true},
}

// efforts are the reasoning efforts, as the workspace spells them.
var efforts = []string{"auto", "none", "low", "medium", "high"}

// modeNotes describe each mode in the /mode picker.
var modeNotes = map[string]string{
	"standard":        "reads run; changes ask first",
	"plan":            "read-only: the agent plans, nothing changes",
	"auto":            "everything runs except the deny list",
	"auto-with-judge": "a judge model reviews what would ask; doubts go to you",
}

func commandCompletions(list []skills.Skill) []input.Completion {
	out := append([]input.Completion(nil), commands...)
	for _, s := range list {
		if slices.ContainsFunc(commands, func(c input.Completion) bool { return c.Name == s.Name }) {
			continue
		}
		d := s.Description
		if s.Scope != "" {
			d = "[" + string(s.Scope) + "] " + d
		}
		out = append(out, input.Completion{Name: s.Name, Description: toolfmt.OneLine(d)})
	}
	return out
}

// submit handles a line the person sent.
func (m *Model) submit(text string) tea.Cmd {
	ws := m.ws
	trimmed := strings.TrimSpace(text)
	name, arg, _ := strings.Cut(strings.TrimPrefix(trimmed, "/"), " ")
	arg = strings.TrimSpace(arg)
	if !strings.HasPrefix(trimmed, "/") {
		name = ""
	}
	switch strings.ToLower(name) {
	case "new", "clear", "cls":
		m.chat.Bottom()
		return func() tea.Msg { ws.NewSession(); return nil }
	case "resume":
		return m.conversations(nil, true)
	case "model":
		if arg != "" {
			return call("switching the model", func() error { return ws.SelectModel(arg) })
		}
		return m.fetchModels()
	case "mode":
		if arg != "" {
			return func() tea.Msg {
				if _, ok := ws.SetMode(arg, tools.OriginTerminal); !ok {
					return flashMsg{text: "unknown mode “" + arg + "”: use " + strings.Join(modeNames(), ", "), warn: true}
				}
				return nil
			}
		}
		m.openModePicker()
		return nil
	case "effort":
		if arg != "" {
			return m.setEffort(arg)
		}
		rows := make([]dialog.Row, len(efforts))
		for i, e := range efforts {
			rows[i] = dialog.Row{ID: e, Title: e}
			if e == m.effort {
				rows[i].Mark = "●"
			}
		}
		m.dialog = dialog.NewPicker(m.th, "Reasoning effort · ● current", rows, m.effort, dialog.SetEffort, "")
		return nil
	case "temperature", "temp":
		return m.setTemperature(arg)
	case "skills":
		// Read afresh: skills added while infer runs belong in the list.
		ws := m.ws
		return func() tea.Msg { return skillsMsg(ws.Skills()) }
	case "permissions":
		if m.opts.Grants == nil {
			m.flash, m.flashWarn = "saved permissions are not available in this session", true
			return nil
		}
		m.dialog = dialog.NewPermissions(m.th)
		return m.grants("")
	case "mcp":
		return m.mcpCommand(arg)
	case "pair":
		token := m.opts.Token
		if m.opts.CurrentToken != nil {
			token = m.opts.CurrentToken()
		}
		m.dialog = dialog.NewPair(m.th, m.opts.Port, token, connectionLine(m.browser.Status()))
		return nil
	case "help":
		m.toggleHelp()
		return nil
	case "quit", "exit":
		return tea.Quit
	}
	m.chat.Bottom()
	// One command, in this order: the workspace records the message in the
	// input history as it accepts it, so the history read after Send has
	// it and ↑ recalls the message just sent. (Read alongside Send, it was
	// one message behind.)
	return func() tea.Msg {
		if err := ws.Send(text, tools.OriginTerminal); err != nil {
			return flashMsg{text: "sending: " + err.Error(), warn: true}
		}
		return historyMsg(ws.History())
	}
}

func (m *Model) setEffort(level string) tea.Cmd {
	ws := m.ws
	return func() tea.Msg {
		if err := ws.SetEffort(level); err != nil {
			return flashMsg{text: "effort: " + err.Error(), warn: true}
		}
		return effortMsg(level)
	}
}

// effortMsg reports a reasoning effort the workspace accepted. It only
// says so: the current effort comes from the workspace's SettingsChanged,
// which the panel's changes publish too, so a late answer here cannot
// show an effort that a newer change replaced.
type effortMsg string

// setTemperature sets the sampling temperature from "/temperature ARG":
// a number from 0 to 2, or "default"; with no argument it shows the
// current value.
func (m *Model) setTemperature(arg string) tea.Cmd {
	ws := m.ws
	return func() tea.Msg {
		switch strings.ToLower(arg) {
		case "":
			if t := ws.Temperature(); t != nil {
				return flashMsg{text: fmt.Sprintf("temperature: %g (/temperature default restores the provider's)", *t)}
			}
			return flashMsg{text: "temperature: the provider's default (/temperature 0.2 sets one)"}
		case "default", "auto", "none":
			if err := ws.SetTemperature(nil); err != nil {
				return flashMsg{text: "temperature: " + err.Error(), warn: true}
			}
			return flashMsg{text: "temperature: the provider's default"}
		}
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil {
			return flashMsg{text: "temperature: “" + arg + "” is not a number; use 0 to 2, or default", warn: true}
		}
		if err := ws.SetTemperature(&v); err != nil {
			return flashMsg{text: "temperature: " + err.Error(), warn: true}
		}
		return flashMsg{text: fmt.Sprintf("temperature: %g", v)}
	}
}

func connectionLine(s browser.Status) string {
	switch s.State {
	case browser.Connected:
		if s.ExtensionVersion != "" {
			return "● connected (extension " + s.ExtensionVersion + ")"
		}
		return "● connected"
	case browser.Disconnected:
		return "✗ disconnected"
	}
	return "○ waiting for the extension"
}

// modeNames lists the modes in cycling order.
func modeNames() []string {
	var out []string
	for _, md := range tools.Modes() {
		out = append(out, string(md))
	}
	return out
}

func (m *Model) openModePicker() {
	modes := modeNames()
	rows := make([]dialog.Row, len(modes))
	for i, md := range modes {
		rows[i] = dialog.Row{ID: md, Title: md, Detail: modeNotes[md]}
		if md == m.mode {
			rows[i].Mark = "●"
		}
	}
	m.dialog = dialog.NewPicker(m.th, "Mode · ● current · shift+tab cycles", rows, m.mode, dialog.SetMode, "")
}

func (m *Model) openModelPicker(msg modelsMsg) {
	rows := make([]dialog.Row, len(msg.models))
	for i, id := range msg.models {
		rows[i] = dialog.Row{ID: id, Title: id}
		if id == msg.current {
			rows[i].Mark = "●"
		}
		var detail []string
		if i == 0 {
			detail = append(detail, "default")
		}
		// What the model rejected this session, and is no longer sent
		// as asked: why a temperature or effort seems to have no effect.
		detail = append(detail, msg.rejections[id]...)
		rows[i].Detail = strings.Join(detail, " · ")
	}
	m.dialog = dialog.NewPicker(m.th, "Model · ● current", rows, msg.current, dialog.SelectModel, "")
}

func (m *Model) handleConversations(msg conversationsListMsg) {
	r, open := m.dialog.(*dialog.Resume)
	if !open {
		if !msg.opened {
			return // closed meanwhile
		}
		if msg.err != nil {
			m.flash, m.flashWarn = "listing conversations: "+msg.err.Error(), true
			return
		}
		r = dialog.NewResume(m.th, msg.metas, m.convID)
		m.dialog = r
		return
	}
	r.SetConversations(msg.metas)
	err := msg.opErr
	if err == nil {
		err = msg.err
	}
	r.SetError(err)
}

// handleDialogAction turns a dialog's answer into workspace calls.
func (m *Model) handleDialogAction(a dialog.Action) tea.Cmd {
	ws := m.ws
	switch a.Kind {
	case dialog.Close:
		m.dialog = nil
	case dialog.Open:
		m.dialog = nil
		id := a.ID
		m.chat.Bottom()
		return call("resuming", func() error { _, err := ws.Resume(id); return err })
	case dialog.Rename:
		id, title := a.ID, a.Text
		return m.conversations(func() error { return ws.RenameConversation(id, title) }, false)
	case dialog.Pin:
		id, pin := a.ID, a.Flag
		return m.conversations(func() error { return ws.PinConversation(id, pin) }, false)
	case dialog.Delete:
		id := a.ID
		return m.conversations(func() error { return ws.DeleteConversation(id) }, false)
	case dialog.SelectModel:
		m.dialog = nil
		id := a.ID
		return call("switching the model", func() error { return ws.SelectModel(id) })
	case dialog.SetMode:
		m.dialog = nil
		mode := a.ID
		return func() tea.Msg { ws.SetMode(mode, tools.OriginTerminal); return nil }
	case dialog.SetEffort:
		m.dialog = nil
		return m.setEffort(a.ID)
	case dialog.Insert:
		m.dialog = nil
		m.setFocus(FocusInput)
		m.input.SetValue("/" + a.ID + " ")
	case dialog.Revoke:
		return m.grants(a.ID)
	case dialog.Copy:
		m.flash, m.flashWarn = "token sent to the terminal's clipboard (OSC 52)", false
		return tea.SetClipboard(a.Text)
	}
	return nil
}

// openSkills shows the skills picker over a freshly read list and keeps the
// editor's completions in step with it.
func (m *Model) openSkills(list []skills.Skill) {
	m.skills = list
	m.input.SetCompletions(commandCompletions(list))
	rows := make([]dialog.Row, 0, len(list))
	for _, s := range list {
		rows = append(rows, dialog.Row{ID: s.Name, Title: s.Name, Detail: strings.TrimSpace("[" + string(s.Scope) + "] " + toolfmt.OneLine(s.Description))})
	}
	m.dialog = dialog.NewPicker(m.th, "Skills · enter puts one in the editor", rows, "", dialog.Insert, "put in the editor")
}
