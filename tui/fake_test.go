package tui

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/skills"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
)

// fakeWS is an in-memory workspace that records every call. Like the real
// one, it publishes SettingsChanged for a setting it changes; the harness
// delivers published events when a test calls events.
type fakeWS struct {
	mu          sync.Mutex
	snap        session.Snapshot
	approvals   []session.Approval
	status      browser.Status
	view        session.BrowserView
	mode        string
	model       string
	models      []string
	rejections  map[string][]string
	effort      string
	temperature *float64
	queue       []string
	busy        bool
	history     []string
	skills      []skills.Skill
	metas       []store.Meta
	// feed stands in for the workspace's event stream; tests publish
	// into it.
	feed session.Feed
	sub  *session.Subscription
	// origins are the origins intents were made with; the harness checks
	// they are all the terminal's.
	origins []session.Origin

	sent        []string
	interrupts  int
	newSessions int
	resumed     []string
	cycles      int
	answers     []fakeAnswer
	renamed     map[string]string
	pinned      map[string]bool
	deleted     []string
	modelsSet   []string
	modesSet    []string
	effortsSet  []string
}

type fakeAnswer struct {
	id string
	d  tools.Decision
}

func newFakeWS() *fakeWS {
	return &fakeWS{
		mode: "standard", model: "offline/demo", models: []string{"offline/demo", "openai/gpt-4o"}, effort: "auto",
		renamed: map[string]string{}, pinned: map[string]bool{},
	}
}

func (f *fakeWS) Subscribe() *session.Subscription {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sub = f.feed.Subscribe()
	return f.sub
}

// fakeModes is the cycling order of the real modes, written out so the
// fake does not check the TUI against its own list.
var fakeModes = []string{"standard", "plan", "auto", "auto-with-judge"}

// settingsChanged publishes what the real workspace publishes when a
// setting changes. Callers hold f.mu.
func (f *fakeWS) settingsChanged(which session.Setting) {
	f.feed.Publish(session.SettingsChanged{Changed: which, Settings: session.Settings{
		Mode: tools.Mode(f.mode), Model: f.model, Effort: llm.Effort(f.effort), Temperature: f.temperature,
	}})
}

func (f *fakeWS) Send(text string, from session.Origin) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.origins = append(f.origins, from)
	f.sent = append(f.sent, text)
	f.history = append(f.history, text)
	return nil
}
func (f *fakeWS) Interrupt() { f.mu.Lock(); f.interrupts++; f.mu.Unlock() }
func (f *fakeWS) NewSession() session.Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.newSessions++
	return session.Snapshot{}
}
func (f *fakeWS) Resume(id string) (session.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resumed = append(f.resumed, id)
	return session.Snapshot{ID: id}, nil
}
func (f *fakeWS) Snapshot() session.Snapshot { f.mu.Lock(); defer f.mu.Unlock(); return f.snap }
func (f *fakeWS) Conversations() ([]store.Meta, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.metas), nil
}
func (f *fakeWS) RenameConversation(id, title string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.metas {
		if f.metas[i].ID == id {
			f.metas[i].Title = title
			f.renamed[id] = title
			return nil
		}
	}
	return errors.New("no such conversation")
}
func (f *fakeWS) PinConversation(id string, pinned bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.metas {
		if f.metas[i].ID == id {
			f.metas[i].Pinned = pinned
			f.pinned[id] = pinned
		}
	}
	return nil
}
func (f *fakeWS) DeleteConversation(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, id)
	f.metas = slices.DeleteFunc(f.metas, func(m store.Meta) bool { return m.ID == id })
	return nil
}
func (f *fakeWS) History() []string { f.mu.Lock(); defer f.mu.Unlock(); return slices.Clone(f.history) }
func (f *fakeWS) Skills() []skills.Skill {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.skills)
}
func (f *fakeWS) Mode() tools.Mode { f.mu.Lock(); defer f.mu.Unlock(); return tools.Mode(f.mode) }
func (f *fakeWS) SetMode(name string, from session.Origin) (tools.Mode, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.origins = append(f.origins, from)
	if !slices.Contains(fakeModes, name) {
		return tools.Mode(f.mode), false
	}
	f.mode = name
	f.modesSet = append(f.modesSet, name)
	f.settingsChanged(session.SettingMode)
	return tools.Mode(name), true
}
func (f *fakeWS) CycleMode() tools.Mode {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cycles++
	f.mode = fakeModes[(slices.Index(fakeModes, f.mode)+1)%len(fakeModes)]
	f.settingsChanged(session.SettingMode)
	return tools.Mode(f.mode)
}
func (f *fakeWS) Model() string    { f.mu.Lock(); defer f.mu.Unlock(); return f.model }
func (f *fakeWS) Models() []string { f.mu.Lock(); defer f.mu.Unlock(); return slices.Clone(f.models) }
func (f *fakeWS) Rejections(id string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.rejections[id])
}
func (f *fakeWS) SelectModel(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Contains(f.models, id) {
		return errors.New("unknown model " + id)
	}
	f.model = id
	f.modelsSet = append(f.modelsSet, id)
	f.settingsChanged(session.SettingModel)
	return nil
}
func (f *fakeWS) Effort() llm.Effort { f.mu.Lock(); defer f.mu.Unlock(); return llm.Effort(f.effort) }

func (f *fakeWS) Temperature() *float64 { f.mu.Lock(); defer f.mu.Unlock(); return f.temperature }

func (f *fakeWS) SetTemperature(t *float64) error {
	if t != nil && (*t < 0 || *t > 2) {
		return fmt.Errorf("temperature %v is out of range: use a number from 0 to 2", *t)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.temperature = t
	return nil
}
func (f *fakeWS) SetEffort(level string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Contains([]string{"auto", "none", "low", "medium", "high"}, level) {
		return fmt.Errorf("unknown reasoning effort %q", level)
	}
	f.effort = level
	f.effortsSet = append(f.effortsSet, level)
	f.settingsChanged(session.SettingEffort)
	return nil
}
func (f *fakeWS) BrowserStatus() browser.Status { f.mu.Lock(); defer f.mu.Unlock(); return f.status }

func (f *fakeWS) BrowserView() session.BrowserView {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.view
}
func (f *fakeWS) PendingApprovals() []session.Approval {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.approvals)
}
func (f *fakeWS) Answer(id string, d tools.Decision, from session.Origin) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.origins = append(f.origins, from)
	f.answers = append(f.answers, fakeAnswer{id, d})
	n := len(f.approvals)
	f.approvals = slices.DeleteFunc(f.approvals, func(a session.Approval) bool { return a.ID == id })
	return len(f.approvals) < n
}
func (f *fakeWS) Queue() []string { f.mu.Lock(); defer f.mu.Unlock(); return slices.Clone(f.queue) }
func (f *fakeWS) Busy() bool      { f.mu.Lock(); defer f.mu.Unlock(); return f.busy }

// clock is a fake time source.
type clock struct{ t time.Time }

func (c *clock) Now() time.Time          { return c.t }
func (c *clock) Advance(d time.Duration) { c.t = c.t.Add(d) }

var epoch = time.Date(2026, 9, 2, 14, 3, 5, 0, time.UTC)

// harness drives a Model without a terminal: commands run synchronously,
// timers are inert (tests deliver flush and guard messages themselves),
// and nothing listens in the background.
type harness struct {
	t     testing.TB
	m     *Model
	ws    *fakeWS
	clock *clock
	quit  bool
}

func newHarness(t testing.TB, ws *fakeWS, width, height int, mutate ...func(*Options)) *harness {
	t.Helper()
	c := &clock{t: epoch}
	opts := Options{Now: c.Now, Background: "dark", Port: 52789, Token: "0123456789abcdef0123456789abcdef", Root: t.TempDir()}
	for _, f := range mutate {
		f(&opts)
	}
	m := New(ws, opts)
	m.listen = func() tea.Cmd { return nil }
	m.after = func(time.Duration, tea.Msg) tea.Cmd { return nil }
	m.mcpWait = func() tea.Cmd { return nil }
	t.Cleanup(m.Close)
	t.Cleanup(func() {
		ws.mu.Lock()
		defer ws.mu.Unlock()
		for _, o := range ws.origins {
			if o != tools.OriginTerminal {
				t.Errorf("an intent was made from the %s, not the terminal", o.Label())
			}
		}
	})
	h := &harness{t: t, m: m, ws: ws, clock: c}
	h.send(tea.WindowSizeMsg{Width: width, Height: height})
	h.run(m.Init())
	return h
}

// send delivers one message and runs what it asks for.
func (h *harness) send(msg tea.Msg) {
	h.t.Helper()
	_, cmd := h.m.Update(msg)
	h.run(cmd)
}

// run executes a command and feeds its result back, recursively.
func (h *harness) run(cmd tea.Cmd) {
	h.t.Helper()
	if cmd == nil {
		return
	}
	msg := cmd()
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			h.run(c)
		}
	case tea.QuitMsg:
		h.quit = true
	default:
		h.send(msg)
	}
}

// events publishes es, then delivers every waiting event (those the fake
// published itself included) the way the listener would, then the flush
// tick that draws them.
func (h *harness) events(es ...session.Event) {
	h.t.Helper()
	for _, e := range es {
		h.ws.feed.Publish(e)
	}
	h.send(eventsMsg(h.ws.sub.Drain()))
	h.send(flushMsg{})
}

func (h *harness) key(keys ...string) {
	h.t.Helper()
	for _, k := range keys {
		h.send(keyMsg(k))
	}
}

func (h *harness) typeText(s string) {
	h.t.Helper()
	for _, r := range s {
		h.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// keyMsg builds a key press from its String() form.
func keyMsg(s string) tea.KeyPressMsg {
	var mod tea.KeyMod
	for {
		switch {
		case len(s) > 5 && s[:5] == "ctrl+":
			mod |= tea.ModCtrl
			s = s[5:]
			continue
		case len(s) > 6 && s[:6] == "shift+":
			mod |= tea.ModShift
			s = s[6:]
			continue
		case len(s) > 4 && s[:4] == "alt+":
			mod |= tea.ModAlt
			s = s[4:]
			continue
		}
		break
	}
	codes := map[string]rune{
		"enter": tea.KeyEnter, "esc": tea.KeyEscape, "tab": tea.KeyTab, "up": tea.KeyUp, "down": tea.KeyDown,
		"left": tea.KeyLeft, "right": tea.KeyRight, "pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown,
		"home": tea.KeyHome, "end": tea.KeyEnd, "f1": tea.KeyF1, "space": tea.KeySpace, "backspace": tea.KeyBackspace,
		"delete": tea.KeyDelete,
	}
	if c, ok := codes[s]; ok {
		return tea.KeyPressMsg{Code: c, Mod: mod}
	}
	r := []rune(s)[0]
	if mod == 0 {
		return tea.KeyPressMsg{Code: r, Text: s}
	}
	return tea.KeyPressMsg{Code: r, Mod: mod}
}

// screen is the frame without styles.
func (h *harness) screen() string {
	return stripANSI(h.m.View().Content)
}

func stripANSI(s string) string { return ansi.Strip(s) }
