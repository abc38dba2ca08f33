package sim

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
)

func openTaskClient(url string, b Browser, tap Tap) *Client {
	return NewClient(ClientOptions{URL: url, Token: "t", Browser: b, Profile: OpenTask, Tap: tap,
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond})
}

// headerTap records handshakes.
type headerTap struct {
	mu      sync.Mutex
	origins []string
}

func (h *headerTap) Handshake(hd http.Header) {
	h.mu.Lock()
	h.origins = append(h.origins, hd.Get("Origin"))
	h.mu.Unlock()
}
func (h *headerTap) Frame(Direction, []byte) {}
func (h *headerTap) Event(string)            {}

func TestOpenTaskListsAfterHelloAndResumesAfterReconnect(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	tap := &headerTap{}
	c := openTaskClient(rs.url, &Minimal{}, tap)
	runClient(t, c)
	ws := rs.accept(t)
	if h := <-rs.hello; h.ExtensionVersion != "1.12.1" {
		t.Errorf("hello %+v", h)
	}
	for _, want := range []string{(wire.ListConversations{}).FrameType(), (wire.ListSkills{}).FrameType()} {
		if f := readFrame(t, ws); f.FrameType() != want {
			t.Fatalf("got %s, want %s right after the hello", f.FrameType(), want)
		}
	}
	// The greeting goes out before the client counts as connected.
	if err := c.WaitConnected(ctxGuard(t)); err != nil {
		t.Fatal(err)
	}
	// infer greets with the mode (the contract: "sent on hello"); only
	// after it can a snapshot answer a request of the panel's.
	send(t, ws, `{"type":"mode","mode":"standard"}`)
	// The panel resumes a conversation; infer answers with its snapshot.
	resumed := make(chan error, 1)
	go func() {
		_, err := c.Resume(ctxGuard(t), "conv-1")
		resumed <- err
	}()
	if f := readFrame(t, ws); f != (wire.ResumeConversation{ID: "conv-1"}) {
		t.Fatalf("got %+v", f)
	}
	send(t, ws, `{"type":"conversation_snapshot","messages":[]}`)
	if err := <-resumed; err != nil {
		t.Fatal(err)
	}

	c.Disconnect()
	c.Reconnect()
	again := rs.accept(t)
	for _, want := range []wire.Frame{wire.ListConversations{}, wire.ListSkills{}, wire.ResumeConversation{ID: "conv-1"}} {
		if f := readFrame(t, again); f != want {
			t.Fatalf("after reconnecting got %+v, want %+v", f, want)
		}
	}
	tap.mu.Lock()
	defer tap.mu.Unlock()
	if len(tap.origins) < 2 || tap.origins[0] != OpenTask.Origin {
		t.Errorf("origins %v", tap.origins)
	}
}

func TestOpenTaskRefusesFramesItNeverSends(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	c := openTaskClient(rs.url, &Minimal{}, nil)
	runClient(t, c)
	ws := rs.accept(t)
	readFrame(t, ws)
	readFrame(t, ws)
	ctx := ctxGuard(t)
	if err := c.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		wire.NewSession{}.FrameType():  func() error { _, err := c.NewSession(ctx); return err },
		wire.Interrupt{}.FrameType():   func() error { return c.Interrupt(ctx) },
		wire.ListHistory{}.FrameType(): func() error { _, err := c.ListHistory(ctx); return err },
		wire.ListModels{}.FrameType():  func() error { _, err := c.ListModels(ctx); return err },
		wire.SelectModel{}.FrameType(): func() error { _, err := c.SelectModel(ctx, "a/b"); return err },
		wire.SetMode{}.FrameType():     func() error { _, err := c.SetMode(ctx, "auto"); return err },
		wire.ToolRequest{}.FrameType(): func() error { _, err := c.ToolRequest(ctx, "Bash", "{}"); return err },
	}
	for typ, call := range calls {
		var refused *RefusedError
		if err := call(); !errors.As(err, &refused) || refused.Type != typ || !strings.Contains(err.Error(), "opentask-1.12.1 never sends") {
			t.Errorf("%s: %v, want a RefusedError", typ, err)
		}
	}
	// Nothing reached the wire; what it does send still goes through.
	if err := c.SendUserMessage(ctx, "/clear"); err != nil {
		t.Fatal(err)
	}
	if f := readFrame(t, ws); f != (wire.UserMessage{Content: "/clear"}) {
		t.Fatalf("got %+v", f)
	}
	// SendRaw is the escape hatch for tests of a misbehaving extension.
	if err := c.SendRaw(ctx, []byte(`{"type":"interrupt"}`)); err != nil {
		t.Fatal(err)
	}
	if f := readFrame(t, ws); f.FrameType() != (wire.Interrupt{}).FrameType() {
		t.Fatalf("got %+v", f)
	}
}

func TestOpenTaskIgnoresNewerFramesAndShowsOneApproval(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	c := openTaskClient(rs.url, &Minimal{}, nil)
	sub := c.Subscribe()
	defer sub.Close()
	runClient(t, c)
	ws := rs.accept(t)
	for _, f := range []string{
		`{"type":"mode","mode":"auto"}`, `{"type":"history","history":["x"]}`,
		`{"type":"models","models":["a/b"],"current":"a/b"}`, `{"type":"interrupted"}`,
		`{"type":"tool_result","id":"x","success":true,"output":"","error":""}`,
		`{"type":"approval_request","request_id":"r1","tool_name":"Bash","tool_args":"{}"}`,
		`{"type":"approval_request","request_id":"r2","tool_name":"Bash","tool_args":"{}"}`,
	} {
		send(t, ws, f)
	}
	f, err := sub.Next(ctxGuard(t))
	if err != nil || f.FrameType() != (wire.ApprovalRequest{}).FrameType() {
		t.Fatalf("first frame the panel saw: %v %v, want the approval request", f, err)
	}
	if _, err := sub.Next(ctxGuard(t)); err != nil {
		t.Fatal(err)
	}
	if p := c.PendingApprovals(); len(p) != 1 || p[0].RequestID != "r2" {
		t.Fatalf("pending %+v, want only the latest request", p)
	}
}

func TestContractQueuesApprovalsUntilResolvedOrAnswered(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	c := newTestClient(rs.url, "t", &Minimal{})
	sub := c.Subscribe()
	defer sub.Close()
	runClient(t, c)
	ws := rs.accept(t)
	send(t, ws, `{"type":"approval_request","request_id":"r1","tool_name":"Bash","tool_args":"{}"}`)
	send(t, ws, `{"type":"approval_request","request_id":"r2","tool_name":"Bash","tool_args":"{}"}`)
	send(t, ws, `{"type":"approval_request","request_id":"r1","tool_name":"Bash","tool_args":"{}"}`) // re-sent
	for range 3 {
		sub.Next(ctxGuard(t))
	}
	if p := c.PendingApprovals(); len(p) != 2 || p[0].RequestID != "r1" || p[1].RequestID != "r2" {
		t.Fatalf("pending %+v", p)
	}
	send(t, ws, `{"type":"approval_resolved","request_id":"r1"}`)
	sub.Next(ctxGuard(t))
	c.Reject(ctxGuard(t), "r2")
	if p := c.PendingApprovals(); len(p) != 0 {
		t.Fatalf("pending %+v after resolving and answering", p)
	}
	if f := readFrame(t, ws); f != (wire.ApprovalResponse{RequestID: "r2", Action: wire.ActionReject}) {
		t.Fatalf("got %+v", f)
	}
}

func TestOpenTaskIgnoresTimeoutMS(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	budgets := make(chan time.Duration, 1)
	c := openTaskClient(rs.url, browserFunc(func(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult {
		dl, _ := ctx.Deadline()
		budgets <- time.Until(dl)
		return wire.BrowserResult{}
	}), nil)
	runClient(t, c)
	ws := rs.accept(t)
	send(t, ws, `{"type":"browser_command","id":"x","action":"tabs","timeout_ms":50}`)
	if b := <-budgets; b < 20*time.Second {
		t.Errorf("budget %v, want the extension's fixed 30s", b)
	}
}

func TestProfileByName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]*Profile{"": Contract, "contract": Contract, "opentask-1.12.1": OpenTask} {
		if p, err := ProfileByName(name); err != nil || p != want {
			t.Errorf("%q: %v %v", name, p, err)
		}
	}
	if _, err := ProfileByName("opentask-2"); err == nil || !strings.Contains(err.Error(), "contract, opentask-1.12.1") {
		t.Errorf("unknown profile: %v", err)
	}
}

// A snapshot infer sends before its greeting's mode frame (a stale panel's
// view replaced) never passes for the answer to the panel's resume.
func TestGreetingSnapshotIsNoAnswer(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	c := NewClient(ClientOptions{URL: rs.url, Token: "t", Browser: &Minimal{}})
	runClient(t, c)
	ws := rs.accept(t)
	<-rs.hello
	if err := c.WaitConnected(ctxGuard(t)); err != nil {
		t.Fatal(err)
	}
	resumed := make(chan wire.ConversationSnapshot, 1)
	go func() {
		snap, err := c.Resume(ctxGuard(t), "conv-1")
		if err != nil {
			t.Error(err)
		}
		resumed <- snap
	}()
	if f := readFrame(t, ws); f != (wire.ResumeConversation{ID: "conv-1"}) {
		t.Fatalf("got %+v", f)
	}
	send(t, ws, `{"type":"conversation_snapshot","messages":[]}`)
	send(t, ws, `{"type":"mode","mode":"standard"}`)
	send(t, ws, `{"type":"conversation_snapshot","messages":[{"role":"user","content":"resumed"}]}`)
	if snap := <-resumed; len(snap.Messages) != 1 || snap.Messages[0].Content != "resumed" {
		t.Fatalf("the resume was answered by %+v", snap)
	}
}
