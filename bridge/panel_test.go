package bridge

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

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
	sender.SendConversations(nil)
	sender.SendSkills(nil)
	sender.SendModels(nil, "")
	sender.SendSnapshot(wire.ConversationSnapshot{})
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
	if err := sender.SendMode("plan"); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("SendMode on a closed connection: %v, want ErrConnClosed", err)
	}
	if err := sender.SendToolResult(wire.ToolResult{ID: "late"}); !errors.Is(err, ErrConnClosed) {
		t.Fatalf("SendToolResult on a closed connection: %v, want ErrConnClosed", err)
	}
}

func TestLiveSenderFollowsTheLiveConnection(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	live := ts.Live()
	if err := live.SendInterrupted(); !errors.Is(err, browser.ErrNotConnected) {
		t.Fatalf("Live().SendInterrupted with no extension: %v, want ErrNotConnected", err)
	}
	c := connectSim(t, ts, &sim.Minimal{})
	sub := c.Subscribe()
	defer sub.Close()
	event := json.RawMessage(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"hi"}`)
	if err := live.SendChatEvent(event); err != nil {
		t.Fatal(err)
	}
	if err := live.SendApprovalRequest(wire.ApprovalRequest{RequestID: "r9", ToolName: "Bash", ToolArgs: "{}"}); err != nil {
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
	if err := live.SendChatEvent(json.RawMessage(`not json`)); err == nil {
		t.Error("an invalid chat event was sent")
	}
}
