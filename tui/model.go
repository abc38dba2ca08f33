package tui

import (
	"context"
	"image"
	"path/filepath"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/infer-workspace/infer/internal/termtext"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/skills"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
	"github.com/infer-workspace/infer/tui/approvals"
	"github.com/infer-workspace/infer/tui/browserpane"
	"github.com/infer-workspace/infer/tui/chat"
	"github.com/infer-workspace/infer/tui/dialog"
	"github.com/infer-workspace/infer/tui/input"
	"github.com/infer-workspace/infer/tui/layout"
	"github.com/infer-workspace/infer/tui/pane"
	"github.com/infer-workspace/infer/tui/theme"
)

// Focus says which pane receives keys.
type Focus int

// Focus targets, in tab order.
const (
	FocusInput Focus = iota
	FocusChat
	FocusApprovals
	FocusBrowser
	// focusCount is how many panes there are.
	focusCount
)

// String names the focus target, for messages and tests.
func (f Focus) String() string {
	switch f {
	case FocusChat:
		return "chat"
	case FocusApprovals:
		return "approvals"
	case FocusBrowser:
		return "browser"
	}
	return "input"
}

// Frame timing. Deltas are applied as they arrive but drawn at most once
// per flushEvery; the spinner turns every spinEvery while anything runs.
const (
	flushEvery = 30 * time.Millisecond
	spinEvery  = 100 * time.Millisecond
)

// Model is the root and only tea.Model. Panes are plain structs it drives.
type Model struct {
	ws   Workspace
	sub  *session.Subscription
	opts Options

	ctx    context.Context // ends listening when the TUI closes
	cancel context.CancelFunc

	// Effects that tests replace: listen waits for workspace events, after
	// delivers a message later.
	listen func() tea.Cmd
	after  func(d time.Duration, msg tea.Msg) tea.Cmd

	th      *theme.Theme
	keyHint string // the header's reminder, drawn from keys once per theme
	bgKnown bool

	width, height int
	lay           layout.Layout
	focus         Focus
	prevFocus     Focus      // where focus returns after the last approval
	prevTab       layout.Tab // and the narrow layout's tab
	tab           layout.Tab

	chat      *chat.Model
	approvals *approvals.Model
	browser   *browserpane.Model
	input     *input.Model
	dialog    dialog.Dialog

	loaded bool
	busy   bool
	mode   string
	model  string
	effort string
	convID string
	title  string
	skills []skills.Skill

	now func() time.Time

	// lastTyped is when the person last pressed a key in the editor. A
	// request for approval that arrives while they type does not take the
	// focus (their next keys would answer it): it waits, deferred, until
	// they send the message.
	lastTyped        time.Time
	deferredApproval bool

	flash      string // a one-line message in the status bar
	flashWarn  bool
	mcp        mcpMsg // the MCP servers' part of the status bar
	mcpWait    func() tea.Cmd
	ctrlC      bool // the previous key was ctrl+c
	dirty      bool // events arrived since the last compose
	flushing   bool // a flush tick is scheduled
	spinning   bool // a spinner tick is scheduled
	guardTimer bool // a redraw for the approval guard is scheduled
	shotSeq    int  // the latest screenshot decode; older results are dropped

	// usage sums the tokens of each conversation's turns seen while the
	// TUI runs (the store keeps no counts).
	usage map[string]llm.Usage

	frame  string
	cursor *tea.Cursor
}

// New builds the root model and subscribes to ws at once, so no event is
// lost between now and the first state read. Close releases it; Run does
// that itself.
func New(ws Workspace, opts Options) *Model {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	dark := opts.Background != "light"
	th := theme.New(dark, opts.NoColor)
	ctx, cancel := context.WithCancel(context.Background())
	m := &Model{
		ws: ws, opts: opts, ctx: ctx, cancel: cancel, now: now,
		th: th, bgKnown: opts.Background != "",
		chat:      chat.New(th),
		approvals: approvals.New(th, now),
		browser:   browserpane.New(th, opts.Port),
		input:     input.New(th),
		width:     80, height: 24,
		usage: map[string]llm.Usage{},
	}
	m.browser.SetOff(opts.BrowserOff)
	m.sub = ws.Subscribe()
	m.listen = m.listenCmd
	m.after = func(d time.Duration, msg tea.Msg) tea.Cmd {
		return tea.Tick(d, func(time.Time) tea.Msg { return msg })
	}
	m.input.SetCompletions(commandCompletions(nil))
	m.compose()
	return m
}

// Close stops listening and releases the subscription.
func (m *Model) Close() {
	m.cancel()
	m.sub.Close()
}

// Init loads the workspace state and asks the terminal for its background.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.loadState(), m.watchMCP(true)}
	if !m.bgKnown {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	return tea.Batch(cmds...)
}

// Messages of the TUI's own effects.
type (
	stateMsg struct {
		snap      session.Snapshot
		approvals []session.Approval
		browser   browser.Status
		view      session.BrowserView
		mode      string
		model     string
		effort    string
		queue     []string
		busy      bool
		history   []string
		skills    []skills.Skill
	}
	eventsMsg []session.Event
	flushMsg  struct{}
	spinMsg   struct{}
	guardMsg  struct{}
	flashMsg  struct {
		text string
		warn bool
	}
	historyMsg []string
	skillsMsg  []skills.Skill
	fileMsg    struct {
		id, content string
		exists      bool
		err         error
	}
	screenshotMsg struct {
		seq int
		url string
		at  time.Time
		img *image.RGBA
		err error
	}
)

// Update is a type switch; each arm calls a handler.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	compose := true
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 1), max(msg.Height, 1)
	case tea.BackgroundColorMsg:
		m.handleBackground(msg.IsDark())
	case tea.KeyPressMsg:
		cmd = m.handleKey(msg)
	case tea.PasteMsg:
		cmd = m.handlePaste(msg)
	case tea.MouseWheelMsg:
		m.handleWheel(msg)
	case stateMsg:
		cmd = m.handleState(msg)
	case eventsMsg:
		cmd = m.handleEvents(msg)
		compose = false // drawn by the next flush tick
	case flushMsg:
		m.flushing = false
		compose = m.dirty
	case spinMsg:
		m.spinning = false
		m.chat.Tick()
		cmd = m.ensureSpinner()
	case guardMsg:
		m.guardTimer = false
		cmd = m.ensureGuardTimer()
	case flashMsg:
		m.flash, m.flashWarn = msg.text, msg.warn
	case mcpMsg:
		m.mcp = msg
		cmd = m.watchMCP(false)
	case effortMsg:
		m.flash, m.flashWarn = "reasoning effort: "+string(msg), false
	case historyMsg:
		m.input.SetHistory(msg)
	case skillsMsg:
		m.openSkills(msg)
	case fileMsg:
		m.approvals.SetFile(msg.id, msg.exists, msg.content, msg.err)
	case screenshotMsg:
		if msg.seq == m.shotSeq {
			m.browser.SetScreenshot(msg.img, msg.url, msg.at, msg.err)
		}
	case modelsMsg:
		m.openModelPicker(msg)
	case conversationsListMsg:
		m.handleConversations(msg)
	case grantsMsg:
		if p, ok := m.dialog.(*dialog.Permissions); ok {
			p.SetGrants(msg.grants, msg.err)
		}
	default:
		cmd = m.input.Forward(msg)
	}
	if compose {
		m.compose()
	}
	return m, cmd
}

// View returns the frame composed by the last Update.
func (m *Model) View() tea.View {
	v := tea.NewView(m.frame)
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.Cursor = m.cursor
	title := "infer"
	if m.title != "" {
		// Bubble Tea writes the title into an OSC sequence as it is: a BEL
		// or ESC in it would end the sequence and start another.
		title += " · " + termtext.Line(m.title)
	}
	v.WindowTitle = title
	return v
}

func (m *Model) handleBackground(dark bool) {
	if m.bgKnown && m.opts.Background != "" {
		return
	}
	m.bgKnown = true
	if dark == m.th.Dark && m.loaded {
		return
	}
	m.setTheme(theme.New(dark, m.opts.NoColor))
}

func (m *Model) setTheme(th *theme.Theme) {
	m.th = th
	m.keyHint = ""
	for _, p := range m.panes() {
		p.SetTheme(th)
	}
	if m.dialog != nil {
		m.dialog.SetTheme(th)
	}
}

func (m *Model) handleState(s stateMsg) tea.Cmd {
	first := !m.loaded
	m.loaded = true
	m.busy, m.mode, m.model, m.effort = s.busy, s.mode, s.model, s.effort
	m.chat.SetEmptyHint(modelHint(m.model))
	m.skills = s.skills
	m.loadSnapshot(s.snap)
	if first {
		for _, n := range m.opts.Notices {
			m.chat.AddNotice(n, true)
		}
	}
	var cmds []tea.Cmd
	m.chat.SetQueue(s.queue)
	m.browser.SetStatus(s.browser)
	if s.view.Tabs != nil {
		m.browser.SetTabs(s.view.Tabs)
	}
	if p := s.view.Page; p != nil {
		m.browser.SetPage(p.URL, p.Title)
	}
	if sh := s.view.Screenshot; sh != nil {
		cmds = append(cmds, m.decodeScreenshot(*sh))
	}
	hadApprovals := m.approvals.Len() > 0
	for _, r := range m.approvals.Replace(s.approvals) {
		cmds = append(cmds, m.readFile(r))
	}
	m.approvalsChanged(hadApprovals)
	m.input.SetHistory(s.history)
	m.input.SetCompletions(commandCompletions(s.skills))
	cmds = append(cmds, m.listen(), m.ensureSpinner(), m.ensureGuardTimer())
	return tea.Batch(cmds...)
}

// loadSnapshot shows a conversation. The browser pane keeps what it
// shows: tabs and screenshots belong to the browser, not to a conversation.
func (m *Model) loadSnapshot(s session.Snapshot) {
	m.chat.Load(s.Title, s.Transcript.Settled())
	m.convID, m.title = s.ID, s.Title
	m.chat.SetTitle(s.Title)
}

func (m *Model) handleEvents(evs eventsMsg) tea.Cmd {
	var cmds []tea.Cmd
	resync := false
	for _, e := range evs {
		switch e := e.(type) {
		case session.TranscriptChanged:
			m.applyChange(e.Change)
		case session.QueueChanged:
			m.chat.SetQueue(e.Queue)
		case session.ConversationChanged:
			if !e.Same { // the stream already showed it
				m.loadSnapshot(e.Snapshot)
			}
		case session.BusyChanged:
			if e.Interrupted {
				m.chat.Interrupted()
			}
			m.busy = e.Busy
		case session.ApprovalOpened:
			had := m.approvals.Len() > 0
			if r := m.approvals.Add(e.Approval); r != nil {
				cmds = append(cmds, m.readFile(*r))
			}
			m.approvalsChanged(had)
		case session.ApprovalResolved:
			had := m.approvals.Len() > 0
			m.approvals.Resolve(e.Approval.ID)
			m.approvalsChanged(had)
			if by := e.Approval.By; by != "" && by != tools.OriginTerminal {
				m.flash, m.flashWarn = e.Approval.Call.Name+" was answered in the "+by.Label(), false
			}
		case session.SettingsChanged:
			switch e.Changed {
			case session.SettingMode:
				m.mode = string(e.Settings.Mode)
			case session.SettingModel, session.SettingModels:
				m.model = e.Settings.Model
				m.chat.SetEmptyHint(modelHint(m.model))
			case session.SettingEffort:
				m.effort = string(e.Settings.Effort)
			}
		case session.TitleChanged:
			if e.Conversation == m.convID || m.convID == "" {
				m.convID, m.title = e.Conversation, e.Title
				m.chat.SetTitle(e.Title)
			}
		case session.BrowserStatusChanged:
			m.browser.SetStatus(e.Status)
		case session.BrowserCommandDone:
			m.browser.AddCommand(e.Record)
		case session.TabsChanged:
			m.browser.SetTabs(e.Tabs)
		case session.PageChanged:
			m.browser.SetPage(e.Page.URL, e.Page.Title)
		case session.ScreenshotTaken:
			cmds = append(cmds, m.decodeScreenshot(e.Screenshot))
		case session.UsageReported:
			m.usage[e.Conversation] = m.usage[e.Conversation].Add(e.Usage)
		case session.OutsideCall:
			m.chat.Outside(e)
		case session.Resync:
			resync = true
		}
	}
	m.dirty = true
	if resync {
		// Stop listening until the fresh state is read; the state read
		// drains what was queued.
		cmds = append(cmds, m.loadState())
	} else {
		cmds = append(cmds, m.listen())
	}
	cmds = append(cmds, m.ensureFlush(), m.ensureSpinner(), m.ensureGuardTimer())
	return tea.Batch(cmds...)
}

// applyChange shows one change of a transcript.
func (m *Model) applyChange(c transcript.Change) {
	it := c.Item
	m.chat.Apply(c)
	if c.Op == transcript.ItemDone && it.Kind == transcript.User && m.convID == "" {
		m.convID = c.Conversation // stored on its first message
	}
}

// typingPause is how long after the person's last key in the editor a
// request for approval may take the focus.
const typingPause = 2 * time.Second

// deferredNotice is the editor's notice while a request waits for the
// person to finish typing.
const deferredNotice = "a tool call waits for your approval: it comes up when you send this (or tab to it)"

// approvalsChanged marks the chat rows that wait for an answer, and moves
// focus to the approvals when the first request arrives, and back when the
// last one goes. While the person is typing, the request waits instead of
// taking the focus, so that a y, a or n meant for the message cannot
// answer it.
func (m *Model) approvalsChanged(had bool) {
	m.chat.SetAwaiting(m.approvals.CallIDs())
	has := m.approvals.Len() > 0
	switch {
	case has && !had:
		if m.focus == FocusInput && (m.input.Value() != "" || m.now().Sub(m.lastTyped) < typingPause) {
			m.deferApproval(true)
			return
		}
		m.focusApprovals()
	case !has:
		m.deferApproval(false)
		if !had || m.focus != FocusApprovals {
			return
		}
		f := m.prevFocus
		if f == FocusApprovals {
			f = FocusInput
		}
		m.setFocus(f)
		if m.prevTab != layout.TabApprovals {
			m.tab = m.prevTab
		} else {
			m.tab = layout.TabChat
		}
	}
}

// deferApproval records whether a request waits for the person to send
// their message, and says so in the editor's rule.
func (m *Model) deferApproval(on bool) {
	m.deferredApproval = on
	if on {
		m.input.SetNotice(deferredNotice)
	} else {
		m.input.SetNotice("")
	}
}

// focusApprovals gives the focus to the approvals pane, remembering where
// it was so it can go back once the last request is answered.
func (m *Model) focusApprovals() {
	if m.focus != FocusApprovals {
		m.prevFocus, m.prevTab = m.focus, m.tab
	}
	m.setFocus(FocusApprovals)
}

func (m *Model) setFocus(f Focus) {
	if f == FocusApprovals {
		m.deferApproval(false)
	}
	m.focus = f
	for i, p := range m.panes() {
		p.SetFocused(Focus(i) == f)
	}
	switch f {
	case FocusChat:
		m.tab = layout.TabChat
	case FocusApprovals:
		m.tab = layout.TabApprovals
	case FocusBrowser:
		m.tab = layout.TabBrowser
	}
}

// panes lists the panes indexed by the Focus that selects them, which is
// also the tab order.
func (m *Model) panes() [focusCount]pane.Pane {
	return [focusCount]pane.Pane{FocusInput: m.input, FocusChat: m.chat, FocusApprovals: m.approvals, FocusBrowser: m.browser}
}

// cycleFocus moves to the next pane; the approvals pane is skipped when
// nothing waits.
func (m *Model) cycleFocus(dir int) {
	order := []Focus{FocusInput, FocusChat, FocusApprovals, FocusBrowser}
	i := int(m.focus)
	for range order {
		i = (i + dir + len(order)) % len(order)
		if order[i] == FocusApprovals && m.approvals.Len() == 0 {
			continue
		}
		break
	}
	m.setFocus(order[i])
}

// ensureFlush schedules the next frame if none is pending.
func (m *Model) ensureFlush() tea.Cmd {
	if m.flushing {
		return nil
	}
	m.flushing = true
	return m.after(flushEvery, flushMsg{})
}

// ensureSpinner keeps the spinner turning while something runs.
func (m *Model) ensureSpinner() tea.Cmd {
	if m.spinning || !(m.busy || m.chat.Running()) {
		return nil
	}
	m.spinning = true
	return m.after(spinEvery, spinMsg{})
}

// ensureGuardTimer redraws when the head approval starts taking keys, so
// the "a moment…" hint goes away on time.
func (m *Model) ensureGuardTimer() tea.Cmd {
	d := m.approvals.ArmedIn()
	if m.guardTimer || d <= 0 {
		return nil
	}
	m.guardTimer = true
	return m.after(d, guardMsg{})
}

func (m *Model) resolvePath(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	root := m.opts.Root
	if root == "" {
		root = "."
	}
	return filepath.Join(root, p)
}

// modelHint is the empty conversation's suggestion for the current model:
// offline/demo understands only a few commands, so it shows one to try.
func modelHint(model string) string {
	if model == "offline/demo" {
		return "offline/demo is not an LLM: try “open demo.infer.localhost; read h1; screenshot” or “run ls”."
	}
	return ""
}
