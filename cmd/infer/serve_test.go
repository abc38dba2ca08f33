package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/assemble"
	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/sim"
)

// served is infer serve's wiring running in-process with a simulated
// extension connected to it.
type served struct {
	t       *testing.T
	home    string
	project string
	app     *assemble.Infer
	client  *sim.Client
	frames  *sim.Subscription
	// stop disconnects the simulated extension; stopServer stops infer.
	stop, stopServer context.CancelFunc
	done             chan struct{}
}

// serveInProcess starts the same wiring `infer serve` uses, on a free port,
// with home and project directories of the test's own.
func serveInProcess(t *testing.T, home, project string) *served {
	t.Helper()
	if home == "" {
		home = t.TempDir()
	}
	if project == "" {
		project = t.TempDir()
	}
	if _, err := os.Stat(config.BrowserUsePath(home)); err != nil {
		if err := config.EnsureDir(home); err != nil {
			t.Fatal(err)
		}
		if err := config.CreateBrowserUse(config.BrowserUsePath(home), config.NewBrowserUse(config.DefaultPort)); err != nil {
			t.Fatal(err)
		}
	}
	a, err := openApp(home, project, appOptions{Bridge: true, BridgeRequired: true, PortSet: true, Port: 0})
	if err != nil {
		t.Fatal(err)
	}
	srvCtx, stopServer := context.WithCancel(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{t: t, home: home, project: project, app: a, stop: cancel, stopServer: stopServer, done: make(chan struct{})}
	go func() { a.Serve(srvCtx) }()
	s.client = sim.NewClient(sim.ClientOptions{URL: a.Seat.URL(), Token: a.BrowserUse.Extension.Token, Browser: &sim.Minimal{}, MinBackoff: 10 * time.Millisecond})
	s.frames = s.client.Subscribe()
	hello := s.client.Subscribe()
	defer hello.Close()
	go func() { defer close(s.done); s.client.Run(ctx) }()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := s.client.WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}
	// infer says the mode right after the hello; wait for it so that it
	// cannot be taken for the answer to a later set_mode.
	if _, err := sim.WaitFor[wire.Mode](wctx, hello, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return s
}

func (s *served) close() {
	s.stop()
	<-s.done
	s.stopServer()
	s.frames.Close()
	s.app.Close()
}

func (s *served) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	s.t.Cleanup(cancel)
	return ctx
}

type chatEvent struct {
	Type      string  `json:"type"`
	Delta     string  `json:"delta"`
	MessageID string  `json:"messageId"`
	Code      *string `json:"code"`
	Name      string  `json:"name"`
}

func decodeChat(t *testing.T, f wire.ChatEvent) chatEvent {
	t.Helper()
	var e chatEvent
	if err := json.Unmarshal(f.Event, &e); err != nil {
		t.Fatalf("chat event %s: %v", f.Event, err)
	}
	return e
}

// runUntilEnd collects chat events up to the run's terminal event.
func (s *served) runUntilEnd() []chatEvent {
	s.t.Helper()
	var out []chatEvent
	for {
		f, err := sim.WaitFor[wire.ChatEvent](s.ctx(), s.frames, nil)
		if err != nil {
			s.t.Fatal(err)
		}
		e := decodeChat(s.t, f)
		out = append(out, e)
		if e.Type == "RUN_FINISHED" || e.Type == "RUN_ERROR" {
			return out
		}
	}
}

func textOf(evs []chatEvent) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Type == "TEXT_MESSAGE_CONTENT" {
			b.WriteString(e.Delta)
		}
	}
	return b.String()
}

func TestServePanelChatsAndListsTheConversation(t *testing.T) {
	t.Parallel()
	s := serveInProcess(t, "", "")
	if m, err := sim.WaitFor[wire.Mode](s.ctx(), s.frames, nil); err != nil || m.Mode != "standard" {
		t.Fatalf("no mode frame after hello: %+v %v", m, err)
	}
	if err := s.client.SendUserMessage(s.ctx(), "hello from the panel"); err != nil {
		t.Fatal(err)
	}
	evs := s.runUntilEnd()
	if evs[0].Type != "RUN_STARTED" || evs[len(evs)-1].Type != "RUN_FINISHED" {
		t.Fatalf("run not bracketed: %+v", evs)
	}
	if !strings.Contains(textOf(evs), "hello from the panel") {
		t.Fatalf("answer %q", textOf(evs))
	}
	for _, e := range evs {
		if e.Type == "CUSTOM" {
			t.Fatal("the panel's own message was echoed back")
		}
	}
	list, err := s.client.ListConversations(s.ctx())
	if err != nil || len(list.Conversations) != 1 {
		t.Fatalf("%+v %v", list, err)
	}
	c := list.Conversations[0]
	// The preview, or offline/demo's generated title if it already landed.
	if !strings.EqualFold(c.Title, "hello from the panel") || c.MessageCount != 2 {
		t.Fatalf("%+v", c)
	}
	if _, err := time.Parse(time.RFC3339, c.UpdatedAt); err != nil {
		t.Fatalf("updated_at %q: %v", c.UpdatedAt, err)
	}
	h, err := s.client.ListHistory(s.ctx())
	if err != nil || len(h.History) != 1 || h.History[0] != "hello from the panel" {
		t.Fatalf("history %+v %v", h, err)
	}
}

func TestServeQueuedMessageRunsAfterTheCurrentTurn(t *testing.T) {
	t.Parallel()
	s := serveInProcess(t, "", "")
	s.client.SendUserMessage(s.ctx(), "stream 60")
	s.client.SendUserMessage(s.ctx(), "tabs")
	first := s.runUntilEnd()
	second := s.runUntilEnd()
	if !strings.HasSuffix(textOf(first), "60 ") {
		t.Fatalf("first turn %q", textOf(first))
	}
	if !strings.Contains(textOf(second), "BrowserTabs") {
		t.Fatalf("queued turn %q", textOf(second))
	}
}

func TestServeInterruptMidStream(t *testing.T) {
	t.Parallel()
	s := serveInProcess(t, "", "")
	s.client.SendUserMessage(s.ctx(), "stream 100000")
	if _, err := sim.WaitFor(s.ctx(), s.frames, func(f wire.ChatEvent) bool { return decodeChat(t, f).Type == "TEXT_MESSAGE_CONTENT" }); err != nil {
		t.Fatal(err)
	}
	s.client.Interrupt(s.ctx())
	evs := s.runUntilEnd()
	last := evs[len(evs)-1]
	if last.Type != "RUN_ERROR" || last.Code == nil || *last.Code != "interrupted" {
		t.Fatalf("terminal %+v", last)
	}
	if evs[len(evs)-2].Type != "TEXT_MESSAGE_END" {
		t.Fatalf("no closing notice before the end: %+v", evs[len(evs)-3:])
	}
	if _, err := sim.WaitFor[wire.Interrupted](s.ctx(), s.frames, nil); err != nil {
		t.Fatalf("no interrupted frame: %v", err)
	}
	list, _ := s.client.ListConversations(s.ctx())
	snap, err := s.client.Resume(s.ctx(), list.Conversations[0].ID)
	if err != nil || len(snap.Messages) != 2 || !strings.HasPrefix(snap.Messages[1].Content, "1 ") || strings.Contains(snap.Messages[1].Content, "100000") {
		t.Fatalf("partial text not saved: %+v %v", snap, err)
	}
}

func TestServeClearAnswersWithAnEmptySnapshot(t *testing.T) {
	t.Parallel()
	s := serveInProcess(t, "", "")
	s.client.SendUserMessage(s.ctx(), "hello")
	s.runUntilEnd()
	for _, clear := range []string{"/clear", "/cls"} {
		s.client.SendUserMessage(s.ctx(), clear)
		snap, err := sim.WaitFor[wire.ConversationSnapshot](s.ctx(), s.frames, nil)
		if err != nil || len(snap.Messages) != 0 {
			t.Fatalf("%s: %+v %v", clear, snap, err)
		}
	}
	snap, err := s.client.NewSession(s.ctx())
	if err != nil || len(snap.Messages) != 0 {
		t.Fatalf("new_session: %+v %v", snap, err)
	}
	// A message right after new_session lands in the new conversation.
	s.client.SendUserMessage(s.ctx(), "fresh start")
	s.runUntilEnd()
	list, _ := s.client.ListConversations(s.ctx())
	if len(list.Conversations) != 2 || !strings.EqualFold(list.Conversations[0].Title, "fresh start") {
		t.Fatalf("%+v", list)
	}
}

func TestServeResumeOfAStoredConversationAfterARestart(t *testing.T) {
	t.Parallel()
	home, project := t.TempDir(), t.TempDir()
	s := serveInProcess(t, home, project)
	s.client.SendUserMessage(s.ctx(), "think about resumes")
	s.runUntilEnd()
	list, _ := s.client.ListConversations(s.ctx())
	id := list.Conversations[0].ID
	s.close()

	r := serveInProcess(t, home, project)
	snap, err := r.client.Resume(r.ctx(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Messages) != 2 || snap.Messages[1].Reasoning == "" || snap.Messages[0].Content != "think about resumes" {
		t.Fatalf("snapshot %+v", snap)
	}
	// Unknown and empty ids are ignored: no snapshot follows.
	later := r.client.Subscribe()
	defer later.Close()
	r.client.Send(r.ctx(), wire.ResumeConversation{ID: "nope"})
	r.client.Send(r.ctx(), wire.ResumeConversation{})
	if _, err := r.client.ListHistory(r.ctx()); err != nil {
		t.Fatal(err)
	}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		f, err := later.Next(ctx)
		cancel()
		if err != nil {
			break
		}
		if _, ok := f.(wire.ConversationSnapshot); ok {
			t.Fatal("a snapshot was sent for an unknown id")
		}
	}
}

func TestServeModelsAndModes(t *testing.T) {
	t.Parallel()
	s := serveInProcess(t, "", "")
	m, err := s.client.ListModels(s.ctx())
	if err != nil || len(m.Models) == 0 || m.Models[len(m.Models)-1] != "offline/demo" || m.Current != "offline/demo" {
		t.Fatalf("%+v %v", m, err)
	}
	m, err = s.client.SelectModel(s.ctx(), "nobody/nothing")
	if err != nil || m.Current != "offline/demo" {
		t.Fatalf("unusable model took effect: %+v %v", m, err)
	}
	mode, err := s.client.SetMode(s.ctx(), "plan")
	if err != nil || mode.Mode != "plan" {
		t.Fatalf("%+v %v", mode, err)
	}
	mode, err = s.client.SetMode(s.ctx(), "reckless")
	if err != nil || mode.Mode != "plan" {
		t.Fatalf("unknown mode must be answered with the current one: %+v %v", mode, err)
	}
}

func TestServeSkillsShadowAcrossScopes(t *testing.T) {
	t.Parallel()
	home, project := t.TempDir(), t.TempDir()
	write := func(dir, name, desc string) {
		p := filepath.Join(dir, name, "SKILL.md")
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("---\nname: "+name+"\ndescription: "+desc+"\n---\nbody\n"), 0o644)
	}
	write(filepath.Join(project, ".infer", "skills"), "tmux", "project tmux")
	write(filepath.Join(home, "skills"), "tmux", "user tmux")
	write(filepath.Join(home, "skills"), "mine", "user only")
	write(filepath.Join(project, ".agents", "skills"), "web-form", "agents web-form")
	write(filepath.Join(home, "plugins", "acme", "skills"), "deploy", "plugin deploy")
	s := serveInProcess(t, home, project)
	sk, err := s.client.ListSkills(s.ctx())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, k := range sk.Skills {
		if _, dup := got[k.Name]; dup {
			t.Fatalf("%s listed twice", k.Name)
		}
		got[k.Name] = k.Scope + ":" + k.Description
	}
	want := map[string]string{
		"tmux":            "project:project tmux",
		"mine":            "user:user only",
		"web-form":        "agents:agents web-form",
		"acme:deploy":     "plugin:plugin deploy",
		"browse-research": "catalog:",
	}
	for name, w := range want {
		if !strings.HasPrefix(got[name], w) {
			t.Errorf("%s = %q, want %q…", name, got[name], w)
		}
	}
}

// TestServeReconnectMidStreamReopensTheMessage: a panel that reconnects
// while the agent streams gets a TEXT_MESSAGE_START before the rest of
// the text, as every segment must open with one.
func TestServeReconnectMidStreamReopensTheMessage(t *testing.T) {
	t.Parallel()
	s := serveInProcess(t, "", "")
	s.client.SendUserMessage(s.ctx(), "stream 300")
	if _, err := sim.WaitFor(s.ctx(), s.frames, func(f wire.ChatEvent) bool { return decodeChat(t, f).Type == "TEXT_MESSAGE_CONTENT" }); err != nil {
		t.Fatal(err)
	}
	s.stop()
	<-s.done

	_, frames := connect(t, s.app.Seat.URL(), s.app.BrowserUse.Extension.Token)
	started := map[string]bool{}
	for {
		f, err := sim.WaitFor[wire.ChatEvent](s.ctx(), frames, nil)
		if err != nil {
			t.Fatal(err)
		}
		e := decodeChat(t, f)
		switch e.Type {
		case "TEXT_MESSAGE_START":
			started[e.MessageID] = true
		case "TEXT_MESSAGE_CONTENT":
			if !started[e.MessageID] {
				t.Fatalf("content for %s without its start after the reconnect", e.MessageID)
			}
		}
		if e.Type == "RUN_FINISHED" || e.Type == "RUN_ERROR" {
			break
		}
	}
	if len(started) == 0 {
		t.Fatal("the reconnected panel saw no text at all")
	}
}

// TestServeModeChangesReachThePanelOnce: the panel's own set_mode is
// answered once, and a change made in another front end is mirrored.
func TestServeModeChangesReachThePanelOnce(t *testing.T) {
	t.Parallel()
	s := serveInProcess(t, "", "")
	watch := s.client.Subscribe()
	defer watch.Close()
	if _, err := s.client.SetMode(s.ctx(), "plan"); err != nil {
		t.Fatal(err)
	}
	s.app.Workspace.SetMode("auto", tools.OriginTerminal) // the terminal's shift+tab
	var modes []string
	for len(modes) < 2 {
		m, err := sim.WaitFor[wire.Mode](s.ctx(), watch, nil)
		if err != nil {
			t.Fatal(err)
		}
		modes = append(modes, m.Mode)
	}
	if modes[0] != "plan" || modes[1] != "auto" {
		t.Fatalf("mode frames %v, want [plan auto]", modes)
	}
	// Nothing else follows: no echo of the panel's own change.
	s.client.ListHistory(s.ctx())
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		f, err := watch.Next(ctx)
		cancel()
		if err != nil {
			break
		}
		if m, ok := f.(wire.Mode); ok {
			t.Fatalf("an extra mode frame %+v", m)
		}
	}
}
