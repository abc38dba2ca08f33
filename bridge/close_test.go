package bridge

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/bridge/wire"
)

// longGrace is a close grace far beyond guard: a server that waited for it
// would fail the test instead of passing slowly.
const longGrace = 5 * time.Minute

// answerCloseAndHold plays a browser closing a WebSocket: it reads until
// the server's close frame, answers it (gorilla's default close handler
// echoes it) and keeps TCP open, waiting for the server to close first as
// RFC 6455 §7.1.1 lets a client do. It fails the test unless the server
// then ends the TCP connection within guard, and returns the close code.
func answerCloseAndHold(t *testing.T, ws *websocket.Conn) int {
	t.Helper()
	code, _ := readClose(t, ws)
	nc := ws.NetConn()
	nc.SetReadDeadline(time.Now().Add(guard))
	var one [1]byte
	n, err := nc.Read(one[:])
	if !errors.Is(err, io.EOF) {
		t.Fatalf("after the close handshake the server's side gave %d bytes and %v; want EOF (the server closing TCP)", n, err)
	}
	return code
}

// TestServerClosesTCPOnceThePeerAnswersClose covers each way infer closes
// a connection, against a peer that answers the close frame and keeps TCP
// open: the server must close TCP as soon as it has read the answer, not
// at the end of its close grace.
func TestServerClosesTCPOnceThePeerAnswersClose(t *testing.T) {
	t.Parallel()
	grace := func(o *Options) { o.CloseGrace = longGrace }

	t.Run("replaced", func(t *testing.T) {
		ts := startServer(t, grace)
		old := connectRaw(t, ts, "old")
		connectRaw(t, ts, "new")
		if code := answerCloseAndHold(t, old.ws); code != websocket.CloseNormalClosure {
			t.Errorf("replaced connection closed with %d, want 1000", code)
		}
	})

	t.Run("wrong token", func(t *testing.T) {
		ts := startServer(t, grace)
		ws := mustDial(t, ts.Server)
		ws.WriteMessage(websocket.TextMessage, wire.MustEncode(wire.BrowserHello{Token: "wrong", ExtensionVersion: "1.12.1"}))
		if code := answerCloseAndHold(t, ws); code != websocket.ClosePolicyViolation {
			t.Errorf("refused connection closed with %d, want 1008", code)
		}
	})

	t.Run("frames after a refused hello", func(t *testing.T) {
		ts := startServer(t, grace)
		ws := mustDial(t, ts.Server)
		ws.WriteMessage(websocket.TextMessage, wire.MustEncode(wire.BrowserHello{Token: "wrong"}))
		// Frames the peer sent before it saw the refusal are read past.
		ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"list_conversations"}`))
		answerCloseAndHold(t, ws)
	})

	t.Run("shutdown", func(t *testing.T) {
		ts := startServer(t, grace)
		x := connectRaw(t, ts, "live")
		closed := make(chan struct{})
		go func() { defer close(closed); ts.Close() }()
		if code := answerCloseAndHold(t, x.ws); code != websocket.CloseGoingAway {
			t.Errorf("connection closed at shutdown with %d, want 1001", code)
		}
		select {
		case <-closed:
		case <-time.After(guard):
			t.Fatal("Close did not return after the peer answered its close frame")
		}
	})

	t.Run("the peer closes first", func(t *testing.T) {
		ts := startServer(t, grace)
		x := connectRaw(t, ts, "leaving")
		x.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "bye"), deadline())
		answerCloseAndHold(t, x.ws)
	})

	t.Run("the peer closes before its hello", func(t *testing.T) {
		ts := startServer(t, grace)
		ws := mustDial(t, ts.Server)
		ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "bye"), deadline())
		answerCloseAndHold(t, ws)
	})
}
