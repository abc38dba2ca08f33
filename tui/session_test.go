package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/demo"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/tui/approvals"
)

// demoCatalog offers only offline/demo, streaming without delay.
type demoCatalog struct{}

func (demoCatalog) Models() []string { return []string{demo.ID} }
func (demoCatalog) Resolve(id string) (llm.Provider, string, error) {
	return &demo.Model{}, "demo", nil
}

// liveHarness drives the TUI against a real session workspace with the
// offline demo model: the events are the real ones, in the real order.
type liveHarness struct {
	*harness
	real *session.Workspace
}

func newLiveHarness(t *testing.T) *liveHarness {
	t.Helper()
	st, err := store.Open(t.TempDir(), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	env := &tools.Env{Root: t.TempDir(), ArtifactsDir: t.TempDir()}
	real, err := session.New(session.Options{
		Store: st, History: store.MemoryHistory(), Catalog: demoCatalog{},
		Tools: tools.PipelineConfig{Env: env},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Bound as assemble binds the bridge, before any call: the workspace
	// watches the driver, so tabs, pages and screenshots reach the TUI as
	// events.
	env.Browser = real.WatchBrowser(&fakeBrowser{png: screenshotPNG(t)})
	t.Cleanup(func() { real.Close() })
	c := &clock{t: epoch}
	m := New(real, Options{Now: c.Now, Background: "dark", Port: 52789})
	m.listen = func() tea.Cmd { return nil }
	m.after = func(time.Duration, tea.Msg) tea.Cmd { return nil }
	t.Cleanup(m.Close)
	h := &harness{t: t, m: m, clock: c}
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	h.run(m.Init())
	return &liveHarness{harness: h, real: real}
}

// waitFor feeds the workspace's events to the model until the screen shows
// want. The deadline only guards against a hang.
func (h *liveHarness) waitFor(want string) {
	h.t.Helper()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(h.screen(), want) {
		select {
		case <-h.m.sub.Ready():
			h.send(eventsMsg(h.m.sub.Drain()))
			h.send(flushMsg{})
		case <-deadline:
			h.t.Fatalf("the screen never showed %q:\n%s", want, h.screen())
		}
	}
}

func TestLiveTurnWithReasoning(t *testing.T) {
	t.Parallel()
	h := newLiveHarness(t)
	h.typeText("think about cats")
	h.key("enter")
	h.waitFor("I am the offline demo model")
	s := h.screen()
	mustContain(t, s, "You", "think about cats", "▸ Thought")
	mustNotContain(t, s, "Thinking about: cats") // reasoning starts collapsed
}

func TestLiveApprovalRejectedWithReason(t *testing.T) {
	t.Parallel()
	h := newLiveHarness(t)
	h.typeText("run rm -rf build")
	h.key("enter")
	h.waitFor("⚠ Bash · from the agent")
	if h.m.focus != FocusApprovals {
		t.Fatalf("focus %v", h.m.focus)
	}
	h.clock.Advance(approvals.Guard)
	h.key("n")
	h.typeText("not today")
	h.key("enter")
	h.waitFor("✗ Bash rm -rf build")
	h.waitFor("Done.")
	mustContain(t, h.screen(), "not today")
	if n := len(h.real.PendingApprovals()); n != 0 {
		t.Fatalf("%d approvals still pending in the workspace", n)
	}
}

// fakeBrowser answers browser commands the way a connected extension
// would, with one tab and a real PNG.
type fakeBrowser struct{ png []byte }

func (f *fakeBrowser) Do(ctx context.Context, cmd browser.Command) (browser.Result, error) {
	const url, title = "https://example.com/", "Example Domain"
	switch cmd.Action {
	case browser.Tabs:
		return browser.Result{URL: url, Title: title, Tabs: []browser.Tab{
			{Index: 0, URL: url, Title: title, Controlled: true, Active: true},
			{Index: 1, URL: "https://docs.example.com/", Title: "Docs"},
		}}, nil
	case browser.Screenshot:
		return browser.Result{URL: url, Title: title, Image: f.png, ImageMIME: "image/png"}, nil
	case browser.Navigate:
		return browser.Result{URL: cmd.URL, Title: "Opened"}, nil
	}
	return browser.Result{}, errors.New("the fake browser does not " + string(cmd.Action))
}

func TestLiveBrowserEventsReachThePane(t *testing.T) {
	t.Parallel()
	h := newLiveHarness(t)
	h.typeText("tabs; screenshot")
	h.key("enter")
	h.waitFor("Screenshot · ")
	h.waitFor("Done.")
	h.waitFor("tokens ") // the turn's usage comes after its last word
	s := h.screen()
	mustContain(t, s, "✓ BrowserTabs", "✓ BrowserScreenshot", "page Example Domain — https://example.com/",
		"▶• Example Domain — https://example.com/", "Docs — https://docs.example.com/", "▀▀▀")
	mustNotContain(t, s, "· BrowserTabs") // the outcome is reported, not missing
	h.typeText("open https://example.org/")
	h.key("enter")
	h.waitFor("⚠ BrowserNavigate · from the agent")
	h.clock.Advance(approvals.Guard)
	h.key("y")
	h.waitFor("page Opened — https://example.org/")
	mustContain(t, h.screen(), "▶• Opened — https://example.org/")
}

func TestLiveConversationEditsGoThroughTheWorkspace(t *testing.T) {
	t.Parallel()
	h := newLiveHarness(t)
	h.typeText("hello there")
	h.key("enter")
	h.waitFor("I am infer's offline demo model")
	id := h.real.ActiveConversation()
	if err := h.real.RenameConversation(id, "Greetings"); err != nil {
		t.Fatal(err)
	}
	h.waitFor("infer · Greetings")
	if err := h.real.PinConversation(id, true); err != nil {
		t.Fatal(err)
	}
	metas, err := h.real.Conversations()
	if err != nil || len(metas) != 1 || !metas[0].Pinned || metas[0].Title != "Greetings" {
		t.Fatalf("%+v %v", metas, err)
	}
	if err := h.real.DeleteConversation(id); err != nil {
		t.Fatal(err)
	}
	h.waitFor("No messages yet")
	if metas, _ := h.real.Conversations(); len(metas) != 0 {
		t.Fatalf("still stored: %+v", metas)
	}
}
