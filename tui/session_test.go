package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/demo"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/tui/approvals"
	"github.com/infer-workspace/infer/tui/workspace"
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
	st := store.OpenMemory()
	real, err := session.New(session.Options{
		Store: st, History: store.MemoryHistory(), Catalog: demoCatalog{},
		Tools: tools.PipelineConfig{Env: &tools.Env{Root: t.TempDir()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { real.Close() })
	c := &clock{t: epoch}
	m := New(workspace.FromSession(real, st), Options{Now: c.Now, Background: "dark"})
	m.listen = func() tea.Cmd { return nil }
	m.after = func(time.Duration, tea.Msg) tea.Cmd { return nil }
	t.Cleanup(m.Close)
	h := &harness{t: t, m: m, clock: c}
	h.send(tea.WindowSizeMsg{Width: 140, Height: 44})
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
	h := newLiveHarness(t)
	h.typeText("think about cats")
	h.key("enter")
	h.waitFor("I am the offline demo model")
	s := h.screen()
	mustContain(t, s, "You", "think about cats", "▸ Thought")
	mustNotContain(t, s, "Thinking about: cats") // reasoning starts collapsed
}

func TestLiveApprovalRejectedWithReason(t *testing.T) {
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
