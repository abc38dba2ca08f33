package bridge

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/sim"
)

func TestNewConnectionReplacesOldAndFailsItsPendingCommandsAtOnce(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) { o.CommandTimeout = 30 * time.Second })
	old := connectRaw(t, ts, "old")
	ts.waitStatus(t, func(st browser.Status) bool { return st.ExtensionVersion == "old" })

	started := time.Now()
	pending := doAsync(ts.Server, context.Background(), browser.Command{Action: browser.Read})
	old.nextCommand() // the command is now in flight on the old socket

	connectRaw(t, ts, "new")
	o := waitOutcome(t, pending)
	elapsed := time.Since(started)
	if !errors.Is(o.err, browser.ErrDisconnected) {
		t.Fatalf("pending command on the replaced socket: %v, want ErrDisconnected", o.err)
	}
	if !strings.Contains(o.err.Error(), "replaced by a newer connection") {
		t.Errorf("error %q does not say why", o.err)
	}
	// Not a speed check: the command's own 30s budget must not be what
	// ended it.
	if elapsed >= 15*time.Second {
		t.Errorf("the pending command failed only after %v", elapsed)
	}
	code, text := readClose(t, old.ws)
	if code != websocket.CloseNormalClosure || text != "replaced by a newer connection" {
		t.Errorf("old socket closed with %d %q", code, text)
	}
	if st := ts.Status(); st.State != browser.Connected || st.ExtensionVersion != "new" {
		t.Errorf("status after replacement = %+v, want connected to \"new\"", st)
	}
}

func TestReplacedConnectionResultsDoNotReachNewCommands(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	old := connectRaw(t, ts, "old")
	pending := doAsync(ts.Server, context.Background(), browser.Command{Action: browser.Read})
	oldCmd := old.nextCommand()
	fresh := connectRaw(t, ts, "new")
	waitOutcome(t, pending)

	next := doAsync(ts.Server, ctxGuard(t), browser.Command{Action: browser.Read})
	cmd := fresh.nextCommand()
	stale := "from the old socket"
	// The old socket is closing: whatever it still says is ignored.
	old.ws.WriteMessage(websocket.TextMessage, wire.MustEncode(wire.BrowserResult{ID: cmd.ID, Content: &stale}))
	old.ws.WriteMessage(websocket.TextMessage, wire.MustEncode(wire.BrowserResult{ID: oldCmd.ID, Content: &stale}))
	good := "from the new socket"
	fresh.writeFrame(wire.BrowserResult{ID: cmd.ID, Content: &good})
	if o := waitOutcome(t, next); o.err != nil || o.res.Content != good {
		t.Fatalf("got %+v, %v; want %q", o.res, o.err, good)
	}
}

func TestPongTimeoutClosesHalfOpenConnection(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) {
		o.PingInterval = 50 * time.Millisecond
		o.PongTimeout = 100 * time.Millisecond
	})
	x := connectRaw(t, ts, "silent")
	pings := make(chan struct{}, 100)
	x.ws.SetPingHandler(func(string) error { // never answers
		select {
		case pings <- struct{}{}:
		default:
		}
		return nil
	})
	readDone := make(chan error, 1)
	go func() {
		x.ws.SetReadDeadline(time.Now().Add(guard))
		for {
			if _, _, err := x.ws.ReadMessage(); err != nil {
				readDone <- err
				return
			}
		}
	}()
	st := ts.waitStatus(t, isDisconnected)
	if !strings.Contains(st.Reason, "half-open") {
		t.Errorf("disconnect reason %q does not say the socket went quiet", st.Reason)
	}
	select {
	case err := <-readDone:
		var ce *websocket.CloseError
		if errors.As(err, &ce) && ce.Code != websocket.CloseGoingAway {
			t.Errorf("close code %d, want 1001", ce.Code)
		}
	case <-time.After(guard):
		t.Fatal("the silent socket was never closed")
	}
	// The reader has processed every frame before the close by now, so a
	// ping the server sent has reached the handler.
	select {
	case <-pings:
	default:
		t.Error("no ping was ever sent")
	}
}

func TestPingRTTIsReported(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) { o.PingInterval = 30 * time.Millisecond })
	connectSim(t, ts, &sim.Minimal{})
	st := ts.waitStatus(t, func(st browser.Status) bool { return st.RTT > 0 })
	if st.State != browser.Connected {
		t.Errorf("RTT reported with state %v", st.State)
	}
	if got := ts.Status().RTT; got <= 0 {
		t.Errorf("Status().RTT = %v after a measured ping", got)
	}
}

func TestKeepaliveFramesAreSent(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) { o.KeepaliveInterval = 30 * time.Millisecond })
	x := connectRaw(t, ts, "1")
	x.ws.SetReadDeadline(time.Now().Add(guard))
	for {
		_, data, err := x.ws.ReadMessage()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if string(data) == `{"type":"infer_keepalive"}` {
			return
		}
	}
}

func TestMalformedFramesAreDroppedAndConnectionStays(t *testing.T) {
	t.Parallel()
	panel := newRecordingPanel()
	ts := startServer(t, func(o *Options) { o.Panel = panel })
	x := connectRaw(t, ts, "1")
	panel.waitCall(t, "connected 1")
	for _, bad := range []string{
		`not json at all`,
		`[1,2,3]`,
		`{"type":5}`,
		`{"no_type":true}`,
		`{"type":"user_message","content":7}`,
		`{"type":"browser_result","content":"no id"}`,
		`{"type":"tool_request","tool_name":"Bash"}`,
		`{"type":"set_mode","mode":["auto"]}`,
		`{"type":"resume_conversation","id":"x"`,
		``,
	} {
		x.writeRaw(bad)
	}
	x.ws.WriteMessage(websocket.BinaryMessage, []byte{0xff, 0x00})
	x.writeFrame(wire.UserMessage{Content: "still here"})
	panel.waitCall(t, "user_message still here")

	res := doAsync(ts.Server, ctxGuard(t), browser.Command{Action: browser.Read})
	cmd := x.nextCommand()
	text := "ok"
	x.writeFrame(wire.BrowserResult{ID: cmd.ID, Content: &text})
	if o := waitOutcome(t, res); o.err != nil || o.res.Content != "ok" {
		t.Fatalf("command after malformed frames: %+v %v", o.res, o.err)
	}
	for _, c := range panel.Calls() {
		if strings.HasPrefix(c, "set_mode") || strings.HasPrefix(c, "resume") || strings.HasPrefix(c, "tool_request") {
			t.Errorf("a malformed frame reached the panel: %q", c)
		}
	}
	if !strings.Contains(ts.logs.String(), "malformed frame") {
		t.Error("malformed frames are not logged")
	}
}

func TestUnknownFrameTypesAndFieldsAreIgnored(t *testing.T) {
	t.Parallel()
	panel := newRecordingPanel()
	ts := startServer(t, func(o *Options) { o.Panel = panel })
	x := connectRaw(t, ts, "1")
	x.writeRaw(`{"type":"some_future_frame","x":1}`)
	x.writeRaw(`{"type":"browser_hello","token":"again"}`)
	x.writeRaw(`{"type":"conversations","conversations":[]}`)
	x.writeRaw(`{"type":"list_conversations","future_field":{"a":[1]}}`)
	panel.waitCall(t, "list_conversations")
	if f := x.next(); f.FrameType() != (wire.Mode{}).FrameType() {
		t.Fatalf("got %s, want the mode sent on connect", f.FrameType())
	}
	convs, ok := x.next().(wire.Conversations)
	if !ok || len(convs.Conversations) != 1 {
		t.Fatalf("got %+v, want the panel's conversations", convs)
	}
	if got := panel.Calls(); len(got) != 2 {
		t.Errorf("panel calls = %q, want only connected and list_conversations", got)
	}
	if ts.Status().State != browser.Connected {
		t.Error("connection dropped")
	}
	logs := ts.logs.String()
	if !strings.Contains(logs, "some_future_frame") || !strings.Contains(logs, "future_field") {
		t.Errorf("unknown types and fields are not logged at debug level:\n%s", logs)
	}
}

func TestPanelPanicDoesNotDropTheConnection(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) { o.Panel = panickyPanel{newRecordingPanel()} })
	x := connectRaw(t, ts, "1")
	x.writeFrame(wire.Interrupt{})
	res := doAsync(ts.Server, ctxGuard(t), browser.Command{Action: browser.Tabs})
	cmd := x.nextCommand()
	x.writeFrame(wire.BrowserResult{ID: cmd.ID, Tabs: []wire.Tab{{URL: "about:blank"}}})
	if o := waitOutcome(t, res); o.err != nil {
		t.Fatalf("Do after a panel panic: %v", o.err)
	}
	if !strings.Contains(ts.logs.String(), "panicked") {
		t.Error("the panic is not logged")
	}
}

type panickyPanel struct{ *recordingPanel }

func (panickyPanel) Handle(Sender, wire.Frame) { panic("boom") }

func TestNoGoroutineLeakAfterConnectionCloses(t *testing.T) {
	ts := startServer(t, nil)
	baseline := goleak.IgnoreCurrent()

	c := sim.NewClient(sim.ClientOptions{URL: ts.URL(), Token: testToken, Browser: &sim.Minimal{}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	if err := c.WaitConnected(ctxGuard(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Navigate(ctxGuard(t), "https://example.com/"); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	ts.waitStatus(t, isDisconnected)
	goleak.VerifyNone(t, baseline)
}

func TestNoGoroutineLeakAfterClose(t *testing.T) {
	baseline := goleak.IgnoreCurrent()
	srv, err := Listen(Options{Token: testToken, HelloTimeout: time.Minute, CloseGrace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background()) }()
	ts := &testServer{Server: srv}

	x := connectRaw(t, ts, "1")
	unauth := mustDial(t, srv) // never says hello
	pending := doAsync(srv, context.Background(), browser.Command{Action: browser.Read})
	x.nextCommand()

	srv.Close()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if o := waitOutcome(t, pending); !errors.Is(o.err, browser.ErrDisconnected) {
		t.Errorf("command pending at Close: %v, want ErrDisconnected", o.err)
	}
	code, text := readClose(t, x.ws)
	if code != websocket.CloseGoingAway || !strings.Contains(text, "shutting down") {
		t.Errorf("live socket closed with %d %q", code, text)
	}
	x.ws.Close()
	unauth.Close()
	goleak.VerifyNone(t, baseline)
}

func TestHelloAckPrecedesCommandsSentOnConnect(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	for range 20 {
		ws := mustDial(t, ts.Server)
		ws.WriteMessage(websocket.TextMessage, wire.MustEncode(wire.BrowserHello{Token: testToken, ExtensionVersion: "1"}))
		ts.waitStatus(t, isConnected)
		// The status says connected: a command now must queue behind the ack.
		res := doAsync(ts.Server, ctxGuard(t), browser.Command{Action: browser.Tabs})
		x := &rawExtension{t: t, ws: ws}
		if f := x.next(); f.FrameType() != (wire.BrowserHelloAck{}).FrameType() {
			t.Fatalf("first frame is %s, want browser_hello_ack", f.FrameType())
		}
		cmd := x.nextCommand()
		x.writeFrame(wire.BrowserResult{ID: cmd.ID})
		if o := waitOutcome(t, res); o.err != nil {
			t.Fatal(o.err)
		}
		ws.Close()
		ts.waitStatus(t, isDisconnected)
	}
}

// TestCloseDeliversQueuedFrames: when infer stops, frames already queued
// for the extension (the end of a run it was watching) still go out before
// the close frame.
func TestCloseDeliversQueuedFrames(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	x := connectRaw(t, ts, "watcher")
	live := ts.Live()
	const n = 200
	for i := 0; i < n; i++ {
		if err := live.Send(wire.ChatEvent{Event: []byte(fmt.Sprintf(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"%d "}`, i))}); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	go ts.Close()
	got := 0
	x.ws.SetReadDeadline(time.Now().Add(guard))
	for {
		_, data, err := x.ws.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway {
				t.Fatalf("ended with %v, want a 1001 close", err)
			}
			break
		}
		if strings.Contains(string(data), "TEXT_MESSAGE_CONTENT") {
			got++
		}
	}
	if got != n {
		t.Fatalf("received %d of %d queued frames before the close", got, n)
	}
}
