package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/internal/leaks"

	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/demo"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
)

// demoOnlyCatalog is a test double of llm.Catalog offering offline/demo and
// an "other/model" id that fails at once.
type demoOnlyCatalog struct{ m *demo.Model }

func (c demoOnlyCatalog) Models() []string { return []string{demo.ID} }
func (c demoOnlyCatalog) Resolve(id string) (llm.Provider, string, error) {
	if id == demo.ID {
		return c.m, "demo", nil
	}
	return nil, "", fmt.Errorf("unknown model %q", id)
}

type fixture struct {
	w     *Workspace
	st    *store.Store
	dir   string
	model *demo.Model
}

func newFixture(t *testing.T, dir string, mutate ...func(*Options)) *fixture {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	st, err := store.Open(dir+"/conversations", store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	m := &demo.Model{Delay: 0}
	opts := Options{
		Store:   st,
		History: store.MemoryHistory(),
		Catalog: demoOnlyCatalog{m},
		Tools:   tools.PipelineConfig{Env: &tools.Env{Root: dir, ArtifactsDir: dir + "/artifacts"}},
	}
	for _, f := range mutate {
		f(&opts)
	}
	w, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return &fixture{w: w, st: st, dir: dir, model: m}
}

// collect reads events until pred returns true or the guard expires.
func collect(t *testing.T, sub *Subscription, pred func(Event) bool) []Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []Event
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for event: %v (got %d events)", err, len(got))
		}
		got = append(got, e)
		if pred(e) {
			return got
		}
	}
}

func idle(e Event) bool { b, ok := e.(BusyChanged); return ok && !b.Busy }

func opened(e Event) bool { _, ok := e.(ApprovalOpened); return ok }

func busy(e Event) bool { b, ok := e.(BusyChanged); return ok && b.Busy }

// change is e's transcript change, if it is one.
func change(e Event) (transcript.Change, bool) {
	c, ok := e.(TranscriptChanged)
	return c.Change, ok
}

// textDelta reports whether e adds to the text of an item.
func textDelta(e Event) bool {
	c, ok := change(e)
	return ok && c.Op == transcript.DeltaAppended
}

// userMessage returns the conversation of the person's message e tells.
func userMessage(e Event) (conversation string, ok bool) {
	c, ok := change(e)
	if !ok || c.Op != transcript.ItemDone || c.Item.Kind != transcript.User {
		return "", false
	}
	return c.Conversation, true
}

// chatText is what the model answered in evs: the text of the Text items
// they build.
func chatText(evs []Event) string {
	var tr transcript.Transcript
	for _, e := range evs {
		if c, ok := change(e); ok {
			_ = tr.Apply(c)
		}
	}
	var b strings.Builder
	for _, it := range tr.Items {
		if it.Kind == transcript.Text {
			b.WriteString(it.Text)
		}
	}
	return b.String()
}

// messagesOf is snap's conversation as the model reads it.
func messagesOf(snap Snapshot) []llm.Message { return snap.Transcript.Messages() }

// outcomes maps each answered call of snap to whether it succeeded.
func outcomes(snap Snapshot) map[string]bool {
	out := map[string]bool{}
	for _, it := range snap.Transcript.Items {
		if it.Kind == transcript.Tool && it.Done && !it.Call.Unreported {
			out[it.ID] = it.Call.OK
		}
	}
	return out
}

// noticesOf is snap's notices, each with how many messages precede it.
func noticesOf(snap Snapshot) []store.Notice {
	var out []store.Notice
	var before transcript.Transcript
	for _, it := range snap.Transcript.Items {
		if it.Kind == transcript.Notice {
			out = append(out, store.Notice{Text: it.Text, Origin: string(it.Origin), Warn: it.Level == transcript.Warn, At: it.At, After: len(before.Messages())})
		}
		before.Items = append(before.Items, it)
	}
	return out
}

// runNotices is the text of the notices told during a run in evs.
func runNotices(evs []Event) string {
	var b strings.Builder
	for _, e := range evs {
		if c, ok := change(e); ok && c.Op == transcript.ItemDone && c.Item.Kind == transcript.Notice && c.Run != "" {
			b.WriteString(c.Item.Text)
		}
	}
	return b.String()
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, leaks.Options()...) }

func TestSendRunsATurnAndSavesIt(t *testing.T) {
	f := newFixture(t, "")
	sub := f.w.Subscribe()
	defer sub.Close()
	if err := f.w.Send("hello there", tools.OriginTerminal); err != nil {
		t.Fatal(err)
	}
	evs := collect(t, sub, idle)
	if !strings.Contains(chatText(evs), "“hello there”") {
		t.Fatalf("answer: %q", chatText(evs))
	}
	snap := f.w.Snapshot()
	if len(messagesOf(snap)) != 2 || messagesOf(snap)[0].Content != "hello there" || snap.Title != "hello there" {
		t.Fatalf("snapshot %+v", snap)
	}
	c, err := f.st.Load(snap.ID)
	if err != nil || len(c.Messages) != 2 {
		t.Fatalf("stored %+v %v", c, err)
	}
	if h := f.w.History(); len(h) != 1 || h[0] != "hello there" {
		t.Fatalf("history %q", h)
	}
}

func TestMessagesSentWhileBusyAreQueuedInOrder(t *testing.T) {
	f := newFixture(t, "")
	f.model.Delay = 2 * time.Millisecond
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("stream 200", tools.OriginTerminal)
	// Wait for the turn to be running before queueing.
	collect(t, sub, busy)
	f.w.Send("first queued", tools.OriginPanel)
	f.w.Send("second queued", tools.OriginTerminal)
	var users []string
	sawQueue := false
	collect(t, sub, func(e Event) bool {
		switch e := e.(type) {
		case QueueChanged:
			sawQueue = sawQueue || len(e.Queue) == 2
		case TranscriptChanged:
			if _, ok := userMessage(e); ok {
				users = append(users, e.Change.Item.Text)
			}
		}
		return len(users) == 3
	})
	if !sawQueue {
		t.Fatal("no queue event listing both waiting messages")
	}
	if users[0] != "stream 200" || users[1] != "first queued" || users[2] != "second queued" {
		t.Fatalf("order %q", users)
	}
	collect(t, sub, idle)
	msgs := messagesOf(f.w.Snapshot())
	var order []string
	for _, m := range msgs {
		if m.Role == "user" {
			order = append(order, m.Content)
		}
	}
	if strings.Join(order, "|") != "stream 200|first queued|second queued" {
		t.Fatalf("stored order %q", order)
	}
}

func TestInterruptMidStreamKeepsPartialAndSignals(t *testing.T) {
	f := newFixture(t, "")
	f.model.Delay = time.Millisecond
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("stream 100000", tools.OriginTerminal)
	collect(t, sub, textDelta)
	f.w.Interrupt()
	evs := collect(t, sub, idle)
	sawInterrupted := false
	for _, e := range evs {
		if b, ok := e.(BusyChanged); ok && b.Interrupted {
			sawInterrupted = true
		}
	}
	if !sawInterrupted {
		t.Fatal("no interrupted BusyChanged")
	}
	msgs := messagesOf(f.w.Snapshot())
	if len(msgs) != 2 || !strings.HasPrefix(msgs[1].Content, "1 ") || strings.Contains(msgs[1].Content, "100000") {
		t.Fatalf("partial text not kept: %+v", msgs)
	}
	stored, _ := f.st.Load(f.w.ActiveConversation())
	if len(stored.Messages) != 2 || stored.Messages[1].Content != msgs[1].Content {
		t.Fatalf("partial text not saved: %+v", stored.Messages)
	}
	f.w.Interrupt() // no-op when idle
}

func TestClearStartsAFreshConversation(t *testing.T) {
	f := newFixture(t, "")
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("hello", tools.OriginPanel)
	collect(t, sub, idle)
	first := f.w.ActiveConversation()
	for _, cmd := range []string{"/clear", " /CLS ", "/new"} {
		f.w.Send(cmd, tools.OriginPanel)
		evs := collect(t, sub, func(e Event) bool { _, ok := e.(ConversationChanged); return ok })
		snap := evs[len(evs)-1].(ConversationChanged).Snapshot
		if len(messagesOf(snap)) != 0 || snap.ID != "" {
			t.Fatalf("%q: snapshot %+v", cmd, snap)
		}
	}
	f.w.Send("again", tools.OriginPanel)
	collect(t, sub, idle)
	if f.w.ActiveConversation() == first {
		t.Fatal("new message landed in the old conversation")
	}
	list, _ := f.w.Conversations()
	if len(list) != 2 {
		t.Fatalf("want 2 stored conversations (empty sessions are not stored), got %d", len(list))
	}
	if h := f.w.History(); len(h) != 2 {
		t.Fatalf("/clear should not enter the history: %q", h)
	}
}

func TestResumeAfterRestart(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, dir)
	sub := f.w.Subscribe()
	f.w.Send("tabs", tools.OriginTerminal) // read-only: runs, and fails with no browser
	collect(t, sub, idle)
	sub.Close()
	before := f.w.Snapshot()
	f.w.Close()

	g := newFixture(t, dir)
	snap, err := g.w.Resume(before.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(messagesOf(snap)) != len(messagesOf(before)) || len(outcomes(snap)) != 1 {
		t.Fatalf("resumed %+v\nbefore %+v", snap, before)
	}
	for id, ok := range outcomes(snap) {
		if ok {
			t.Fatalf("tool result %s recorded as success without a browser", id)
		}
	}
	if _, err := g.w.Resume(""); !errors.Is(err, ErrUnknownConversation) {
		t.Fatalf("empty id: %v", err)
	}
	if _, err := g.w.Resume("00000000-0000-4000-8000-000000000000"); !errors.Is(err, ErrUnknownConversation) {
		t.Fatalf("unknown id: %v", err)
	}
	// The resumed history feeds the next turn.
	sub2 := g.w.Subscribe()
	defer sub2.Close()
	g.w.Send("tabs", tools.OriginTerminal)
	collect(t, sub2, idle)
	if n := len(messagesOf(g.w.Snapshot())); n <= len(messagesOf(before)) {
		t.Fatalf("resumed conversation did not grow: %d", n)
	}
}

// TestSlowSubscriberNeitherStallsNorLosesText streams while one subscriber
// reads nothing: the turn must finish, and the subscriber must then get
// every word (merged into few events).
func TestSlowSubscriberNeitherStallsNorLosesText(t *testing.T) {
	f := newFixture(t, "")
	slow := f.w.Subscribe()
	defer slow.Close()
	fast := f.w.Subscribe()
	defer fast.Close()
	f.w.Send("stream 20000", tools.OriginTerminal)
	collect(t, fast, idle) // the turn finished while slow read nothing
	evs := slow.Drain()
	text := chatText(evs)
	var want strings.Builder
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(&want, "%d ", i)
	}
	if text != want.String() {
		t.Fatalf("slow subscriber lost text: got %d bytes, want %d", len(text), want.Len())
	}
	if len(evs) > 100 {
		t.Fatalf("deltas were not coalesced: %d events", len(evs))
	}
}

func TestOverflowingSubscriberGetsResync(t *testing.T) {
	var h Feed
	s := h.Subscribe()
	defer s.Close()
	for i := 0; i < maxQueued+10; i++ {
		h.Publish(QueueChanged{Queue: []string{"x"}})
	}
	evs := s.Drain()
	if _, ok := evs[0].(Resync); !ok {
		t.Fatalf("first event %T, want resync", evs[0])
	}
	if len(evs) > maxQueued {
		t.Fatalf("backlog %d beyond bound", len(evs))
	}
}

func TestApprovalFirstAnswerWins(t *testing.T) {
	f := newFixture(t, "")
	sub := f.w.Subscribe()
	defer sub.Close()
	for i := 0; i < 20; i++ {
		f.w.Send("run touch file-"+fmt.Sprint(i), tools.OriginTerminal)
		evs := collect(t, sub, opened)
		id := evs[len(evs)-1].(ApprovalOpened).Approval.ID
		var wins atomic.Int32
		var wg sync.WaitGroup
		for _, by := range []Origin{tools.OriginPanel, tools.OriginTerminal} {
			wg.Add(1)
			go func(by Origin) {
				defer wg.Done()
				d := tools.Decision{Kind: tools.AllowOnce}
				if by == tools.OriginPanel {
					d = tools.Decision{Kind: tools.Deny, Reason: "no"}
				}
				if f.w.Answer(id, d, by) {
					wins.Add(1)
				}
			}(by)
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("round %d: %d winners", i, wins.Load())
		}
		evs = collect(t, sub, idle)
		resolved := 0
		for _, e := range evs {
			if r, ok := e.(ApprovalResolved); ok && r.Approval.ID == id {
				resolved++
			}
		}
		if resolved != 1 {
			t.Fatalf("round %d: %d resolved events", i, resolved)
		}
		if f.w.Answer(id, tools.Decision{Kind: tools.AllowOnce}, tools.OriginPanel) {
			t.Fatal("a late answer must be a no-op")
		}
	}
}

func TestInterruptRejectsPendingApproval(t *testing.T) {
	f := newFixture(t, "")
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("run touch x", tools.OriginTerminal)
	collect(t, sub, opened)
	f.w.Interrupt()
	evs := collect(t, sub, idle)
	var resolved *Approval
	for _, e := range evs {
		if r, ok := e.(ApprovalResolved); ok {
			resolved = &r.Approval
		}
	}
	if resolved == nil || resolved.Decision.Kind != tools.Deny {
		t.Fatalf("pending approval not rejected: %+v", resolved)
	}
	if len(f.w.PendingApprovals()) != 0 {
		t.Fatal("approval still pending")
	}
}

func TestShellMessageAsksLikeBash(t *testing.T) {
	f := newFixture(t, "")
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("!touch made-by-shell", tools.OriginPanel)
	evs := collect(t, sub, opened)
	a := evs[len(evs)-1].(ApprovalOpened).Approval
	if a.Call.Name != "Bash" || a.Call.Origin != tools.OriginShell {
		t.Fatalf("approval %+v", a)
	}
	f.w.Answer(a.ID, tools.Decision{Kind: tools.AllowOnce}, tools.OriginTerminal)
	collect(t, sub, idle)
	snap := f.w.Snapshot()
	if len(messagesOf(snap)) != 3 || messagesOf(snap)[2].Role != "tool" {
		t.Fatalf("shell run not recorded: %+v", messagesOf(snap))
	}
	if ok := outcomes(snap)[messagesOf(snap)[2].ToolCallID]; !ok {
		t.Fatalf("tool result %+v", outcomes(snap))
	}
	// A read-only allowlisted command runs without asking.
	f.w.Send("!pwd", tools.OriginTerminal)
	for _, e := range collect(t, sub, idle) {
		if opened(e) {
			t.Fatal("pwd should not ask")
		}
	}
}

func TestModeAndModelIntents(t *testing.T) {
	f := newFixture(t, "")
	if m, ok := f.w.SetMode("plan", tools.OriginTerminal); !ok || m != tools.Plan {
		t.Fatalf("%v %v", m, ok)
	}
	if m, ok := f.w.SetMode("yolo", tools.OriginTerminal); ok || m != tools.Plan {
		t.Fatalf("unknown mode changed it: %v %v", m, ok)
	}
	if f.w.CycleMode() != tools.Auto {
		t.Fatal("cycle from plan should reach auto")
	}
	if err := f.w.SelectModel("other/model"); err == nil || f.w.Model() != demo.ID {
		t.Fatalf("bad model accepted: %v %s", err, f.w.Model())
	}
	if err := f.w.SetEffort("extreme"); err == nil {
		t.Fatal("bad effort accepted")
	}
	bad := 3.0
	if err := f.w.SetTemperature(&bad); err == nil {
		t.Fatal("bad temperature accepted")
	}
}

func TestPlanModeRefusesWritesWithoutAsking(t *testing.T) {
	f := newFixture(t, "")
	f.w.SetMode("plan", tools.OriginTerminal)
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("run touch x", tools.OriginTerminal)
	for _, e := range collect(t, sub, idle) {
		if opened(e) {
			t.Fatal("plan mode asked instead of refusing")
		}
	}
	msgs := messagesOf(f.w.Snapshot())
	if !strings.Contains(msgs[2].Content, "plan mode") {
		t.Fatalf("refusal reason not given to the model: %q", msgs[2].Content)
	}
}

func TestStorageDisabledListsNothing(t *testing.T) {
	f := newFixture(t, "", func(o *Options) { o.Store = store.OpenMemory() })
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("hi", tools.OriginTerminal)
	collect(t, sub, idle)
	list, err := f.w.Conversations()
	if err != nil || len(list) != 0 {
		t.Fatalf("list %v %v", list, err)
	}
	if len(messagesOf(f.w.Snapshot())) != 2 {
		t.Fatal("memory store lost the conversation")
	}
}

func TestTitlerRunsAfterFirstExchange(t *testing.T) {
	f := newFixture(t, "", func(o *Options) {
		o.Titler = func(ctx context.Context, model, user, answer string) (string, error) {
			return demo.Title(user), nil
		}
	})
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("please open the demo site and read it", tools.OriginTerminal)
	collect(t, sub, func(e Event) bool {
		tc, ok := e.(TitleChanged)
		return ok && tc.Title == "Please open the demo site and"
	})
	list, _ := f.w.Conversations()
	if list[0].Title != "Please open the demo site and" {
		t.Fatalf("stored title %q", list[0].Title)
	}
}

// fakeDriver is a test double of browser.Driver.
type fakeDriver struct{}

func (fakeDriver) Do(ctx context.Context, cmd browser.Command) (browser.Result, error) {
	switch cmd.Action {
	case browser.Tabs:
		return browser.Result{URL: "http://demo.infer.localhost/", Title: "Demo", Tabs: []browser.Tab{{Index: 0, URL: "http://demo.infer.localhost/", Title: "Demo", Controlled: true}}}, nil
	case browser.Screenshot:
		return browser.Result{URL: "http://demo.infer.localhost/", Image: []byte("\x89PNG fake"), ImageMIME: "image/png"}, nil
	}
	return browser.Result{}, errors.New("unsupported")
}

func TestWatchedBrowserPublishesTabsPagesAndScreenshots(t *testing.T) {
	f := newFixture(t, "")
	d := f.w.WatchBrowser(fakeDriver{})
	sub := f.w.Subscribe()
	defer sub.Close()
	d.Do(context.Background(), browser.Command{Action: browser.Tabs})
	d.Do(context.Background(), browser.Command{Action: browser.Screenshot})
	long := "#" + strings.Repeat("x", 200)
	d.Do(context.Background(), browser.Command{Action: browser.Click, Selector: long})
	evs := sub.Drain()
	var kinds []string
	for _, e := range evs {
		kinds = append(kinds, fmt.Sprintf("%T", e))
	}
	want := []string{"session.BrowserCommandDone", "session.PageChanged", "session.TabsChanged",
		"session.BrowserCommandDone", "session.PageChanged", "session.ScreenshotTaken", "session.BrowserCommandDone"}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Fatalf("events %v want %v", kinds, want)
	}
	tabs, shot := evs[2].(TabsChanged), evs[5].(ScreenshotTaken)
	if len(tabs.Tabs) != 1 || !tabs.Tabs[0].Controlled || string(shot.Screenshot.Image) != "\x89PNG fake" {
		t.Fatalf("%+v %+v", tabs, shot)
	}
	// Every command is logged once, a failed one with its error and a
	// long target cut for the pane.
	tabsRec, click := evs[0].(BrowserCommandDone).Record, evs[6].(BrowserCommandDone).Record
	if tabsRec.Action != browser.Tabs || tabsRec.Err != "" || tabsRec.Started.IsZero() {
		t.Fatalf("tabs record %+v", tabsRec)
	}
	if click.Action != browser.Click || click.Err != "unsupported" || len([]rune(click.Target)) != 80 || !strings.HasPrefix(long, strings.TrimSuffix(click.Target, "…")) {
		t.Fatalf("click record %+v", click)
	}
	v := f.w.BrowserView()
	if len(v.Tabs) != 1 || v.Page == nil || v.Page.Title != "" || v.Screenshot == nil {
		t.Fatalf("browser view %+v", v)
	}
}

func TestToolDoneAndUsageEvents(t *testing.T) {
	f := newFixture(t, "")
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("tabs", tools.OriginTerminal)
	evs := collect(t, sub, idle)
	var done *transcript.Item
	usage := false
	for _, e := range evs {
		switch e := e.(type) {
		case TranscriptChanged:
			if c := e.Change; c.Op == transcript.ItemDone && c.Item.Kind == transcript.Tool {
				done = &c.Item
			}
		case UsageReported:
			usage = usage || e.Usage.OutputTokens > 0
		}
	}
	if done == nil || done.Call.Name != "BrowserTabs" || done.Call.OK {
		t.Fatalf("tool done %+v (no browser: must fail)", done)
	}
	if !usage {
		t.Fatal("no usage event")
	}
}

func TestConversationEdits(t *testing.T) {
	f := newFixture(t, "")
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("stream 3", tools.OriginTerminal)
	collect(t, sub, idle)
	id := f.w.ActiveConversation()
	if err := f.w.RenameConversation(id, "  My title "); err != nil {
		t.Fatal(err)
	}
	if f.w.Snapshot().Title != "My title" {
		t.Fatalf("active title %q", f.w.Snapshot().Title)
	}
	if err := f.w.RenameConversation(id, " "); err == nil {
		t.Fatal("empty title accepted")
	}
	if err := f.w.PinConversation(id, true); err != nil {
		t.Fatal(err)
	}
	list, _ := f.w.Conversations()
	if !list[0].Pinned || list[0].Title != "My title" {
		t.Fatalf("%+v", list[0])
	}
	f.model.Delay = time.Millisecond
	f.w.Send("stream 100000", tools.OriginTerminal)
	collect(t, sub, busy)
	if err := f.w.DeleteConversation(id); err != nil {
		t.Fatal(err)
	}
	// Nothing is listed: not the deleted conversation written back by its
	// turn, and not a new one that the interrupted turn's message landed in.
	if list, _ := f.w.Conversations(); len(list) != 0 {
		t.Fatalf("after deleting %s: %+v", id, list)
	}
	if f.w.ActiveConversation() == id {
		t.Fatal("deleted conversation still active")
	}
}

// recordingProvider is a test double that remembers the requests it got.
type recordingProvider struct {
	mu   sync.Mutex
	reqs []llm.Request
}

func (p *recordingProvider) Stream(ctx context.Context, req llm.Request, emit func(llm.Delta)) (llm.Completion, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.mu.Unlock()
	return llm.Completion{Text: "ok"}, nil
}

type oneCatalog struct{ p llm.Provider }

func (c oneCatalog) Models() []string { return []string{"x/m"} }
func (c oneCatalog) Resolve(id string) (llm.Provider, string, error) {
	if id != "x/m" {
		return nil, "", fmt.Errorf("unknown %q", id)
	}
	return c.p, "m", nil
}

func TestProviderOverridesYieldToThePersonsChoice(t *testing.T) {
	rp := &recordingProvider{}
	half := 0.5
	f := newFixture(t, "", func(o *Options) {
		o.Catalog = oneCatalog{rp}
		o.Effort = llm.EffortLow
		o.Overrides = func(model string) (llm.Effort, *float64) { return llm.EffortHigh, &half }
	})
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("one", tools.OriginTerminal)
	collect(t, sub, idle)
	f.w.SetEffort("none")
	zero := 0.0
	f.w.SetTemperature(&zero)
	f.w.Send("two", tools.OriginTerminal)
	collect(t, sub, idle)
	if r := rp.reqs[0]; r.Effort != llm.EffortHigh || r.Temperature == nil || *r.Temperature != 0.5 || r.Model != "m" {
		t.Fatalf("provider override not applied: %+v", r)
	}
	if r := rp.reqs[1]; r.Effort != llm.EffortNone || *r.Temperature != 0 {
		t.Fatalf("the person's choice must win: %+v", r)
	}
}
