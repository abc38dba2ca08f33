package bridge

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/sim"
)

func TestPanelFramesAreRoutedInOrder(t *testing.T) {
	t.Parallel()
	panel := newRecordingPanel()
	ts := startServer(t, func(o *Options) { o.Panel = panel })
	x := connectRaw(t, ts, "1.12.1")
	frames := []wire.Frame{
		wire.ListConversations{},
		wire.ListSkills{},
		wire.ResumeConversation{ID: "c1"},
		wire.NewSession{},
		wire.UserMessage{Content: "first in the new session"},
		wire.Interrupt{},
		wire.ListHistory{},
		wire.ListModels{},
		wire.SelectModel{Model: "openai/gpt-4o"},
		wire.SetMode{Mode: "auto"},
		wire.ApprovalResponse{RequestID: "r1", Action: "approve"},
		wire.ToolRequest{ID: "t1", ToolName: "Bash", ToolArgs: `{"command":"true"}`},
	}
	for _, f := range frames {
		x.writeFrame(f)
	}
	panel.waitCall(t, "tool_request t1 Bash")
	want := []string{
		"connected 1.12.1",
		"list_conversations",
		"list_skills",
		"resume c1",
		"new_session",
		"user_message first in the new session",
		"interrupt",
		"list_history",
		"list_models",
		"select_model openai/gpt-4o",
		"set_mode auto",
		"approval_response r1 approve",
		"tool_request t1 Bash",
	}
	if got := panel.Calls(); !slices.Equal(got, want) {
		t.Fatalf("panel calls:\n got %q\nwant %q", got, want)
	}

	// The ack comes first, then what the panel sent, in order.
	var types []string
	for range 10 {
		types = append(types, x.next().FrameType())
	}
	wantTypes := []string{"mode", "conversations", "skills", "conversation_snapshot", "conversation_snapshot",
		"history", "models", "models", "mode", "tool_result"}
	if !slices.Equal(types, wantTypes) {
		t.Fatalf("frames sent:\n got %q\nwant %q", types, wantTypes)
	}
}

func TestPanelRepliesReachTheSimClient(t *testing.T) {
	t.Parallel()
	panel := newRecordingPanel()
	ts := startServer(t, func(o *Options) { o.Panel = panel })
	c := connectSim(t, ts, &sim.Minimal{})
	ctx := ctxGuard(t)
	panel.waitCall(t, "connected sim-test")

	convs, err := c.ListConversations(ctx)
	if err != nil || len(convs.Conversations) != 1 || convs.Conversations[0].Title != "First" {
		t.Fatalf("ListConversations: %+v %v", convs, err)
	}
	hist, err := c.ListHistory(ctx)
	if err != nil || hist.History == nil || len(hist.History) != 0 {
		t.Fatalf("ListHistory: %#v %v (a nil history must arrive as [])", hist, err)
	}
	res, err := c.ToolRequest(ctx, "Bash", `{"command":"ls"}`)
	if err != nil || !res.Success || res.Output != `ran {"command":"ls"}` {
		t.Fatalf("ToolRequest: %+v %v", res, err)
	}
}

func TestNilListsAreSentAsEmptyArrays(t *testing.T) {
	t.Parallel()
	var sender Sender
	panel := &connectHook{recordingPanel: newRecordingPanel(), onConnect: func(s Sender) { sender = s }}
	ts := startServer(t, func(o *Options) { o.Panel = panel })
	x := connectRaw(t, ts, "1")
	panel.waitCall(t, "connected 1")
	sender.Send(wire.Conversations{Conversations: nil})
	sender.Send(wire.Skills{Skills: nil})
	sender.Send(wire.Models{Models: nil, Current: ""})
	sender.Send(wire.ConversationSnapshot{})
	for _, want := range []string{
		`{"type":"conversations","conversations":[]}`,
		`{"type":"skills","skills":[]}`,
		`{"type":"models","models":[],"current":""}`,
		`{"type":"conversation_snapshot","messages":[]}`,
	} {
		x.ws.SetReadDeadline(deadline())
		_, data, err := x.ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != want {
			t.Errorf("got %s, want %s", data, want)
		}
	}
}

// connectHook is a recordingPanel that hands out its Sender and sends
// nothing on connect.
type connectHook struct {
	*recordingPanel
	onConnect func(Sender)
}

func (p *connectHook) Connected(s Sender, v string) {
	p.onConnect(s)
	p.record(s, "connected "+v)
}

func TestSenderOfAClosedConnectionReturnsErrConnClosed(t *testing.T) {
	t.Parallel()
	panel := newRecordingPanel()
	ts := startServer(t, func(o *Options) { o.Panel = panel })
	x := connectRaw(t, ts, "1")
	panel.waitCall(t, "connected 1")
	panel.mu.Lock()
	sender := panel.sender
	panel.mu.Unlock()
	x.ws.Close()
	ts.waitStatus(t, isDisconnected)
	if err := sender.Send(wire.Mode{Mode: "plan"}); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("Send(mode) on a closed connection: %v, want ErrConnClosed", err)
	}
	if err := sender.Send(wire.ToolResult{ID: "late"}); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("Send(tool_result) on a closed connection: %v, want ErrConnClosed", err)
	}
}

func TestLiveSenderFollowsTheLiveConnection(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	live := ts.Live()
	if err := live.Send(wire.Interrupted{}); !errors.Is(err, browser.ErrNotConnected) {
		t.Fatalf("Live().Send(interrupted) with no extension: %v, want ErrNotConnected", err)
	}
	c := connectSim(t, ts, &sim.Minimal{})
	sub := c.Subscribe()
	defer sub.Close()
	event := json.RawMessage(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"hi"}`)
	if err := live.Send(wire.ChatEvent{Event: event}); err != nil {
		t.Fatal(err)
	}
	if err := live.Send(wire.ApprovalRequest{RequestID: "r9", ToolName: "Bash", ToolArgs: "{}"}); err != nil {
		t.Fatal(err)
	}
	ctx := ctxGuard(t)
	ev, err := sim.WaitFor[wire.ChatEvent](ctx, sub, nil)
	if err != nil || string(ev.Event) != string(event) {
		t.Fatalf("chat event: %s %v", ev.Event, err)
	}
	req, err := sim.WaitFor[wire.ApprovalRequest](ctx, sub, nil)
	if err != nil || req.RequestID != "r9" {
		t.Fatalf("approval request: %+v %v", req, err)
	}
	if err := live.Send(wire.ChatEvent{Event: json.RawMessage(`not json`)}); err == nil {
		t.Error("an invalid chat event was sent")
	}
}

// handled records the type of every frame the bridge hands the panel.
type handled struct {
	types chan string
}

func (p *handled) Connected(Sender, string)      {}
func (p *handled) Handle(_ Sender, f wire.Frame) { p.types <- f.FrameType() }

// Only frames of the extension's side of the contract reach the panel: an
// echo of infer's own frames, a second hello and a keepalive are dropped by
// the bridge, whatever the panel would make of them.
func TestOnlyTheExtensionsFramesReachThePanel(t *testing.T) {
	panel := &handled{types: make(chan string, 16)}
	ts := startServer(t, func(o *Options) { o.Panel = panel })
	x := connectRaw(t, ts, "1.12.1")
	for _, f := range []wire.Frame{
		wire.Mode{Mode: "auto"},
		wire.ChatEvent{Event: json.RawMessage(`{"type":"RUN_STARTED"}`)},
		wire.ToolResult{ID: "t1", Success: true},
		wire.BrowserHello{Token: "x", ExtensionVersion: "2"},
		wire.Keepalive{},
		wire.ListHistory{},
	} {
		x.writeFrame(f)
	}
	select {
	case got := <-panel.types:
		if got != "list_history" {
			t.Fatalf("the panel was handed %q first, want list_history", got)
		}
	case <-time.After(guard):
		t.Fatal("the panel was never handed list_history")
	}
	select {
	case got := <-panel.types:
		t.Fatalf("the panel was also handed %q", got)
	default:
	}
}
