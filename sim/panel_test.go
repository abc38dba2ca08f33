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
	"github.com/infer-workspace/infer/session/browser"
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
	s.Send(wire.Mode{Mode: mode})
}

// Handle implements bridge.Panel.
func (p *scriptedPanel) Handle(s bridge.Sender, f wire.Frame) {
	switch f := f.(type) {
	case wire.ListConversations:
		s.Send(wire.Conversations{Conversations: []wire.ConversationInfo{{ID: "c1", Title: "Fix the flaky test", UpdatedAt: "2026-08-16T12:00:00Z", MessageCount: 4}}})
	case wire.ResumeConversation:
		if f.ID != "c1" {
			return // the contract: unknown ids get no snapshot
		}
		s.Send(wire.ConversationSnapshot{Messages: []wire.Message{{Role: "user", Content: "fix it"}, {Role: "assistant", Content: "done"}}})
	case wire.NewSession:
		s.Send(wire.ConversationSnapshot{})
	case wire.UserMessage:
		p.note("user_message " + f.Content)
		s.Send(wire.ChatEvent{Event: []byte(`{"type":"TEXT_MESSAGE_CONTENT","delta":"echo: ` + f.Content + `"}`)})
	case wire.Interrupt:
		p.note("interrupt")
		s.Send(wire.Interrupted{})
	case wire.ListHistory:
		s.Send(wire.History{History: []string{"fix the tests", "a\nb"}})
	case wire.ListSkills:
		s.Send(wire.Skills{Skills: []wire.Skill{{Name: "tmux", Description: "Drive tmux", Scope: "user"}}})
	case wire.ListModels:
		p.mu.Lock()
		defer p.mu.Unlock()
		s.Send(wire.Models{Models: models, Current: p.model})
	case wire.SelectModel:
		p.mu.Lock()
		defer p.mu.Unlock()
		if slices.Contains(models, f.Model) {
			p.model = f.Model
		}
		s.Send(wire.Models{Models: models, Current: p.model})
	case wire.SetMode:
		p.mu.Lock()
		defer p.mu.Unlock()
		if slices.Contains([]string{"standard", "plan", "auto", "auto-with-judge"}, f.Mode) {
			p.mode = f.Mode
		}
		s.Send(wire.Mode{Mode: p.mode})
	case wire.ApprovalResponse:
		p.note("approval " + f.RequestID + " " + f.Action)
		s.Send(wire.ApprovalResolved{RequestID: f.RequestID})
	case wire.ToolRequest:
		if f.ToolName != "Bash" {
			s.Send(wire.ToolResult{ID: f.ID, Error: "unknown tool " + f.ToolName})
			return
		}
		s.Send(wire.ToolResult{ID: f.ID, Success: true, Output: "ok"})
	}
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
	if r := m.Do(ctx, wire.BrowserCommand{Action: browser.Tabs}); r.Error != "" || len(r.Tabs) != 1 || r.Tabs[0].URL != "about:blank" {
		t.Errorf("tabs before navigate: %+v", r)
	}
	if r := m.Do(ctx, wire.BrowserCommand{Action: browser.Navigate}); r.Error != "navigate requires url" {
		t.Errorf("navigate without url: %+v", r)
	}
	if r := m.Do(ctx, wire.BrowserCommand{Action: browser.Navigate, URL: "https://example.com/"}); r.Error != "" || r.URL != "https://example.com/" || r.Title != "https://example.com/" {
		t.Errorf("navigate: %+v", r)
	}
	if r := m.Do(ctx, wire.BrowserCommand{Action: browser.Read, Selector: "h1"}); r.Content == nil || *r.Content != MinimalPageText {
		t.Errorf("read: %+v", r)
	}
	for _, a := range []browser.Action{browser.Click, browser.Type} {
		if r := m.Do(ctx, wire.BrowserCommand{Action: a, Selector: "#q", Text: "x"}); r.Error != "" || r.URL != "https://example.com/" {
			t.Errorf("%s: %+v", a, r)
		}
	}
	r := m.Do(ctx, wire.BrowserCommand{Action: browser.Screenshot})
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
	if r := m.Do(cancelled, wire.BrowserCommand{Action: browser.Read}); r.Error == "" {
		t.Error("a cancelled command succeeded")
	}
}
