package sim

import (
	"bytes"
	"context"
	"encoding/base64"
	"image/png"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/bridge/wire"
)

// scriptedPanel is a test double of bridge.Panel that answers like a tiny
// workspace and records what it was told.
type scriptedPanel struct {
	mu    sync.Mutex
	mode  string
	model string
	told  []string
	seen  chan string
}

func newScriptedPanel() *scriptedPanel {
	return &scriptedPanel{mode: "standard", model: "offline/demo", seen: make(chan string, 100)}
}

func (p *scriptedPanel) note(s string) {
	p.mu.Lock()
	p.told = append(p.told, s)
	p.mu.Unlock()
	p.seen <- s
}

func (p *scriptedPanel) wait(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(guard)
	for {
		select {
		case s := <-p.seen:
			if s == want {
				return
			}
		case <-timeout:
			t.Fatalf("panel never told %q", want)
		}
	}
}

var models = []string{"offline/demo", "openai/gpt-4o"}

func (p *scriptedPanel) Connected(s bridge.Sender, v string) {
	p.mu.Lock()
	mode := p.mode
	p.mu.Unlock()
	s.SendMode(mode)
}
func (p *scriptedPanel) ListConversations(s bridge.Sender) {
	s.SendConversations([]wire.ConversationInfo{{ID: "c1", Title: "Fix the flaky test", UpdatedAt: "2026-08-16T12:00:00Z", MessageCount: 4}})
}
func (p *scriptedPanel) ResumeConversation(s bridge.Sender, id string) {
	if id != "c1" {
		return // the contract: unknown ids get no snapshot
	}
	s.SendSnapshot(wire.ConversationSnapshot{Messages: []wire.Message{{Role: "user", Content: "fix it"}, {Role: "assistant", Content: "done"}}})
}
func (p *scriptedPanel) NewSession(s bridge.Sender) { s.SendSnapshot(wire.ConversationSnapshot{}) }
func (p *scriptedPanel) UserMessage(s bridge.Sender, content string) {
	p.note("user_message " + content)
	s.SendChatEvent([]byte(`{"type":"TEXT_MESSAGE_CONTENT","delta":"echo: ` + content + `"}`))
}
func (p *scriptedPanel) Interrupt(s bridge.Sender) {
	p.note("interrupt")
	s.SendInterrupted()
}
func (p *scriptedPanel) ListHistory(s bridge.Sender) {
	s.SendHistory([]string{"fix the tests", "a\nb"})
}
func (p *scriptedPanel) ListSkills(s bridge.Sender) {
	s.SendSkills([]wire.Skill{{Name: "tmux", Description: "Drive tmux", Scope: "user"}})
}
func (p *scriptedPanel) ListModels(s bridge.Sender) {
	p.mu.Lock()
	defer p.mu.Unlock()
	s.SendModels(models, p.model)
}
func (p *scriptedPanel) SelectModel(s bridge.Sender, model string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if slices.Contains(models, model) {
		p.model = model
	}
	s.SendModels(models, p.model)
}
func (p *scriptedPanel) SetMode(s bridge.Sender, mode string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if slices.Contains([]string{"standard", "plan", "auto", "auto-with-judge"}, mode) {
		p.mode = mode
	}
	s.SendMode(p.mode)
}
func (p *scriptedPanel) ApprovalResponse(s bridge.Sender, id, action string) {
	p.note("approval " + id + " " + action)
	s.SendApprovalResolved(id)
}
func (p *scriptedPanel) ToolRequest(s bridge.Sender, req wire.ToolRequest) {
	if req.ToolName != "Bash" {
		s.SendToolResult(wire.ToolResult{ID: req.ID, Error: "unknown tool " + req.ToolName})
		return
	}
	s.SendToolResult(wire.ToolResult{ID: req.ID, Success: true, Output: "ok"})
}

func TestPanelCallsRoundTripThroughTheBridge(t *testing.T) {
	t.Parallel()
	panel := newScriptedPanel()
	srv := startBridge(t, 0, panel, nil)
	c := newTestClient(srv.URL(), testToken, &Minimal{})
	sub := c.Subscribe()
	defer sub.Close()
	runClient(t, c)
	ctx := ctxGuard(t)
	// The mode frame sent on connect comes first; wait for it so it cannot
	// answer SetMode below.
	if m, err := WaitFor[wire.Mode](ctx, sub, nil); err != nil || m.Mode != "standard" {
		t.Fatalf("mode on connect: %+v %v", m, err)
	}

	convs, err := c.ListConversations(ctx)
	if err != nil || len(convs.Conversations) != 1 || convs.Conversations[0].ID != "c1" {
		t.Fatalf("ListConversations: %+v %v", convs, err)
	}
	snap, err := c.Resume(ctx, "c1")
	if err != nil || len(snap.Messages) != 2 || snap.Messages[1].Content != "done" {
		t.Fatalf("Resume: %+v %v", snap, err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = c.Resume(short, "unknown")
	cancel()
	if err == nil {
		t.Fatal("Resume of an unknown id got a snapshot")
	}
	snap, err = c.NewSession(ctx)
	if err != nil || len(snap.Messages) != 0 {
		t.Fatalf("NewSession: %+v %v", snap, err)
	}
	hist, err := c.ListHistory(ctx)
	if err != nil || !slices.Equal(hist.History, []string{"fix the tests", "a\nb"}) {
		t.Fatalf("ListHistory: %q %v", hist.History, err)
	}
	skills, err := c.ListSkills(ctx)
	if err != nil || len(skills.Skills) != 1 || skills.Skills[0].Scope != "user" {
		t.Fatalf("ListSkills: %+v %v", skills, err)
	}
	ms, err := c.ListModels(ctx)
	if err != nil || ms.Current != "offline/demo" {
		t.Fatalf("ListModels: %+v %v", ms, err)
	}
	ms, err = c.SelectModel(ctx, "openai/gpt-4o")
	if err != nil || ms.Current != "openai/gpt-4o" {
		t.Fatalf("SelectModel: %+v %v", ms, err)
	}
	mode, err := c.SetMode(ctx, "auto")
	if err != nil || mode.Mode != "auto" {
		t.Fatalf("SetMode(auto): %+v %v", mode, err)
	}
	mode, err = c.SetMode(ctx, "yolo")
	if err != nil || mode.Mode != "auto" {
		t.Fatalf("SetMode(yolo): %+v %v, want the mode unchanged", mode, err)
	}
	res, err := c.ToolRequest(ctx, "Bash", `{"command":"gh api user"}`)
	if err != nil || !res.Success || res.Output != "ok" {
		t.Fatalf("ToolRequest(Bash): %+v %v", res, err)
	}
	res, err = c.ToolRequest(ctx, "Nope", `{}`)
	if err != nil || res.Success || res.Error == "" {
		t.Fatalf("ToolRequest(Nope): %+v %v, want one failed result", res, err)
	}

	if err := c.SendUserMessage(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	panel.wait(t, "user_message hello")
	ev, err := WaitFor(ctx, sub, func(e wire.ChatEvent) bool { return bytes.Contains(e.Event, []byte("echo: hello")) })
	if err != nil {
		t.Fatalf("chat event: %s %v", ev.Event, err)
	}
	if err := c.Interrupt(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := WaitFor[wire.Interrupted](ctx, sub, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Approve(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	panel.wait(t, "approval r1 approve")
	if err := c.Reject(ctx, "r2"); err != nil {
		t.Fatal(err)
	}
	panel.wait(t, "approval r2 reject")
	if r, err := WaitFor(ctx, sub, func(r wire.ApprovalResolved) bool { return r.RequestID == "r2" }); err != nil {
		t.Fatalf("approval_resolved: %+v %v", r, err)
	}
}

func TestMinimalBrowserAnswersEveryAction(t *testing.T) {
	t.Parallel()
	var m Minimal
	ctx := context.Background()
	if r := m.Do(ctx, wire.BrowserCommand{Action: wire.ActionTabs}); r.Error != "" || len(r.Tabs) != 1 || r.Tabs[0].URL != "about:blank" {
		t.Errorf("tabs before navigate: %+v", r)
	}
	if r := m.Do(ctx, wire.BrowserCommand{Action: wire.ActionNavigate}); r.Error != "navigate requires url" {
		t.Errorf("navigate without url: %+v", r)
	}
	if r := m.Do(ctx, wire.BrowserCommand{Action: wire.ActionNavigate, URL: "https://example.com/"}); r.Error != "" || r.URL != "https://example.com/" || r.Title != "https://example.com/" {
		t.Errorf("navigate: %+v", r)
	}
	if r := m.Do(ctx, wire.BrowserCommand{Action: wire.ActionRead, Selector: "h1"}); r.Content == nil || *r.Content != MinimalPageText {
		t.Errorf("read: %+v", r)
	}
	for _, a := range []string{wire.ActionClick, wire.ActionType} {
		if r := m.Do(ctx, wire.BrowserCommand{Action: a, Selector: "#q", Text: "x"}); r.Error != "" || r.URL != "https://example.com/" {
			t.Errorf("%s: %+v", a, r)
		}
	}
	r := m.Do(ctx, wire.BrowserCommand{Action: wire.ActionScreenshot})
	raw, err := base64.StdEncoding.DecodeString(r.Image)
	if err != nil || r.ImageMIMEType != "image/png" {
		t.Fatalf("screenshot: %v %q", err, r.ImageMIMEType)
	}
	if _, err := png.Decode(bytes.NewReader(raw)); err != nil {
		t.Errorf("screenshot is not a PNG: %v", err)
	}
	if r := m.Do(ctx, wire.BrowserCommand{Action: "scroll"}); r.Error != "unknown action: scroll" {
		t.Errorf("scroll: %+v", r)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if r := m.Do(cancelled, wire.BrowserCommand{Action: wire.ActionRead}); r.Error == "" {
		t.Error("a cancelled command succeeded")
	}
}
