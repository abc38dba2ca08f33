package bridge

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
)

// expectPolicyClose asserts the server closed ws with 1008 and a reason
// containing want, and that the refusal is visible in the status.
func expectPolicyClose(t *testing.T, ts *testServer, ws *websocket.Conn, want string) {
	t.Helper()
	code, text := readClose(t, ws)
	if code != websocket.ClosePolicyViolation {
		t.Errorf("close code = %d (%q), want 1008", code, text)
	}
	if !strings.Contains(text, want) {
		t.Errorf("close reason %q does not contain %q", text, want)
	}
	st := ts.waitStatus(t, func(st browser.Status) bool { return st.Reason != "" })
	if !strings.Contains(st.Reason, want) {
		t.Errorf("status reason %q does not contain %q", st.Reason, want)
	}
	if st.State == browser.Connected {
		t.Errorf("status is connected after a refused hello")
	}
}

func TestHelloTimeoutClosesWithPolicyViolation(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) { o.HelloTimeout = 100 * time.Millisecond })
	ws := mustDial(t, ts.Server)
	expectPolicyClose(t, ts, ws, "no browser_hello within")
}

func TestWrongTokenIsRefusedWithoutEchoingIt(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	ws := mustDial(t, ts.Server)
	const wrong = "wrong-token-that-must-not-be-logged"
	ws.WriteMessage(websocket.TextMessage, wire.MustEncode(wire.BrowserHello{Token: wrong, ExtensionVersion: "1.12.1"}))
	expectPolicyClose(t, ts, ws, "wrong token")

	code, rep := statusBody(t, ts.Server, "Bearer "+testToken)
	if code != http.StatusOK || rep.LastRejection == nil || !strings.Contains(rep.LastRejection.Reason, "wrong token") {
		t.Errorf("/status = %d %+v, want a last_rejection about a wrong token", code, rep)
	}
	logs := ts.logs.String()
	if !strings.Contains(logs, "wrong token") {
		t.Errorf("the refusal is not logged:\n%s", logs)
	}
	if strings.Contains(logs, wrong) || strings.Contains(logs, testToken) {
		t.Errorf("a token appears in the log:\n%s", logs)
	}
}

func TestEmptyTokenIsRefused(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	ws := mustDial(t, ts.Server)
	ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"browser_hello","extension_version":"1.0"}`))
	expectPolicyClose(t, ts, ws, "no token")
}

func TestNonHelloFirstFrameIsRefused(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	ws := mustDial(t, ts.Server)
	ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"list_conversations"}`))
	expectPolicyClose(t, ts, ws, "not browser_hello")
}

func TestMalformedHelloIsRefused(t *testing.T) {
	t.Parallel()
	for name, msg := range map[string]string{
		"not json":      `hello?`,
		"token type":    `{"type":"browser_hello","token":42}`,
		"no type field": `{"token":"` + testToken + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			ts := startServer(t, nil)
			ws := mustDial(t, ts.Server)
			ws.WriteMessage(websocket.TextMessage, []byte(msg))
			expectPolicyClose(t, ts, ws, "malformed browser_hello")
		})
	}
}

func TestBinaryFirstFrameIsRefused(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	ws := mustDial(t, ts.Server)
	ws.WriteMessage(websocket.BinaryMessage, wire.MustEncode(wire.BrowserHello{Token: testToken}))
	expectPolicyClose(t, ts, ws, "binary")
}

func TestRefusedOriginsGet403BeforeUpgrade(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	for _, origin := range []string{
		"http://evil.example",
		"https://evil.example",
		"null",
		"http://127.0.0.1:" + strconv.Itoa(ts.Port()),
		"chrome-extension://",
		"file://",
	} {
		t.Run(origin, func(t *testing.T) {
			_, resp, err := dial(t, ts.Server, http.Header{"Origin": {origin}})
			if err == nil {
				t.Fatal("upgrade succeeded")
			}
			if resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("got %v (%v), want HTTP 403", resp, err)
			}
		})
	}
	st := ts.Status()
	if !strings.Contains(st.Reason, "not a browser extension") {
		t.Errorf("status reason %q does not record the refused origin", st.Reason)
	}
}

func TestExtensionOriginsAndNoOriginAreAccepted(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	for _, origin := range []string{
		"chrome-extension://pldlmnnoajphnolpalndfdodmojkjalc",
		"moz-extension://8a7f0c3e-1234-4bcd-9876-0123456789ab",
		"safari-web-extension://ABCDEF",
		"", // the header is left out entirely
	} {
		t.Run(origin, func(t *testing.T) {
			h := http.Header{"Origin": {origin}}
			if origin == "" {
				h = http.Header{"Origin": nil}
			}
			ws, resp, err := dial(t, ts.Server, h)
			if err != nil {
				t.Fatalf("dial: %v (%v)", err, resp)
			}
			ws.Close()
		})
	}
}

func TestRefusedHostsGet403(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	port := strconv.Itoa(ts.Port())
	other := strconv.Itoa(ts.Port() + 1)
	for _, host := range []string{
		"evil.example:" + port,
		"127.0.0.1:" + other,
		"[::1]:" + port,
		"127.0.0.1",
		"localhost",
		"LOCALHOST:" + port,
		"127.0.0.2:" + port,
	} {
		t.Run(host, func(t *testing.T) {
			_, resp, err := dial(t, ts.Server, http.Header{"Host": {host}})
			if err == nil {
				t.Fatal("upgrade succeeded")
			}
			if resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("got %v (%v), want HTTP 403", resp, err)
			}
		})
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port} {
		t.Run("accepts "+host, func(t *testing.T) {
			ws, resp, err := dial(t, ts.Server, http.Header{"Host": {host}})
			if err != nil {
				t.Fatalf("dial: %v (%v)", err, resp)
			}
			ws.Close()
		})
	}
}

func TestPendingHandshakeCap(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) {
		o.MaxPendingHandshakes = 2
		o.HelloTimeout = time.Minute // far longer than the test
	})
	// Each socket is counted as waiting only after its upgrade is
	// answered, on the server's own goroutine: the next one is dialled
	// once the server counts it, so that first is the one that waited
	// longest however the goroutines are scheduled.
	first := mustDial(t, ts.Server)
	ts.waitHandshaking(t, 1)
	second := mustDial(t, ts.Server)
	ts.waitHandshaking(t, 2)
	// A third socket finds both slots taken: the one that has waited
	// longest for its hello is dropped, and the newcomer gets its slot.
	third := mustDial(t, ts.Server)
	code, text := readClose(t, first)
	if code != websocket.CloseTryAgainLater || !strings.Contains(text, "newer connection needed the slot") {
		t.Fatalf("oldest silent socket closed with %d %q, want 1013 about the slot", code, text)
	}
	ts.waitStatus(t, func(st browser.Status) bool { return strings.Contains(st.Reason, "newer connection") })
	// Never more than the cap wait at once.
	ts.mu.Lock()
	pending := len(ts.handshaking)
	ts.mu.Unlock()
	if pending > 2 {
		t.Errorf("%d sockets waiting for a hello, want at most 2", pending)
	}
	for _, ws := range []*websocket.Conn{second, third} {
		x := &rawExtension{t: t, ws: ws}
		x.writeFrame(wire.BrowserHello{Token: testToken, ExtensionVersion: "1"})
		if f := x.next(); f.FrameType() != (wire.BrowserHelloAck{}).FrameType() {
			t.Fatalf("got %s, want the ack", f.FrameType())
		}
	}
}

// TestSilentSocketsDoNotLockOutTheExtension holds open more silent sockets
// than there are handshake slots, some that never send their HTTP request
// and some upgraded that never send a hello: the real extension still gets
// in at once, not after the hello timeout.
func TestSilentSocketsDoNotLockOutTheExtension(t *testing.T) {
	t.Parallel()
	const slots = 16
	ts := startServer(t, func(o *Options) {
		o.MaxPendingHandshakes = slots
		o.HelloTimeout = time.Minute // no relief from timeouts during the test
	})
	for range slots + 4 {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(ts.Port()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	silent := make([]*websocket.Conn, slots+4)
	for i := range silent {
		silent[i] = mustDial(t, ts.Server)
	}
	// connectSim gives up after guard, far below the hello timeout the
	// extension used to wait out: getting in at all shows a silent socket
	// made room for it, with no timed bound on a loaded machine.
	connectSim(t, ts, browserFunc(func(context.Context, wire.BrowserCommand) wire.BrowserResult { return wire.BrowserResult{} }))
	// Silent sockets made room, one for each newcomer past the cap (the
	// extension included), and were told why; the others still wait.
	closed := make(chan int, len(silent))
	for _, ws := range silent {
		go func() {
			ws.SetReadDeadline(time.Now().Add(time.Second))
			_, _, err := ws.ReadMessage()
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				closed <- ce.Code
			} else {
				closed <- 0
			}
		}()
	}
	evicted := 0
	for range silent {
		switch code := <-closed; code {
		case websocket.CloseTryAgainLater:
			evicted++
		case 0:
		default:
			t.Errorf("a silent socket closed with %d, want 1013", code)
		}
	}
	if want := len(silent) + 1 - slots; evicted != want {
		t.Errorf("%d silent sockets evicted, want %d", evicted, want)
	}
}

func TestOversizedFrameBeforeAuthIsRefused(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) { o.HandshakeReadLimit = 1024 })
	ws := mustDial(t, ts.Server)
	big := `{"type":"browser_hello","token":"` + strings.Repeat("x", 4096) + `"}`
	ws.WriteMessage(websocket.TextMessage, []byte(big))
	code, _ := readClose(t, ws)
	if code != websocket.CloseMessageTooBig && code != websocket.ClosePolicyViolation {
		t.Fatalf("close code = %d, want 1009 or 1008", code)
	}
	ts.waitStatus(t, func(st browser.Status) bool { return strings.Contains(st.Reason, "larger than 1024") })
}

func TestOversizedFrameAfterAuthClosesWith1009(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) { o.MaxFrameBytes = 64 << 10 })
	x := connectRaw(t, ts, "1")
	ts.waitStatus(t, isConnected)
	x.writeRaw(`{"type":"user_message","content":"` + strings.Repeat("y", 128<<10) + `"}`)
	code, _ := readClose(t, x.ws)
	if code != websocket.CloseMessageTooBig {
		t.Fatalf("close code = %d, want 1009", code)
	}
	st := ts.waitStatus(t, isDisconnected)
	if !strings.Contains(st.Reason, "larger than") {
		t.Errorf("disconnect reason %q does not mention the frame size", st.Reason)
	}
}

func TestFramesUnderTheLimitAreAccepted(t *testing.T) {
	t.Parallel()
	// A frame just under the authenticated limit is fine.
	ts := startServer(t, func(o *Options) { o.MaxFrameBytes = 64 << 10 })
	x := connectRaw(t, ts, "1")
	x.writeRaw(`{"type":"some_future_frame","pad":"` + strings.Repeat("z", 60<<10) + `"}`)
	x.writeFrame(wire.Keepalive{})
	res := doAsync(ts.Server, ctxGuard(t), browser.Command{Action: browser.Click, Selector: "#a"})
	cmd := x.nextCommand()
	empty := ""
	x.writeFrame(wire.BrowserResult{ID: cmd.ID, Content: &empty})
	if o := waitOutcome(t, res); o.err != nil {
		t.Fatalf("Do: %v", o.err)
	}
}

func TestListenBusyPortSaysHowToPickAnother(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	_, err = Listen(Options{Token: testToken, Port: port})
	if err == nil {
		t.Fatal("Listen on a busy port succeeded")
	}
	for _, want := range []string{"already in use", "extension.port", "--port", strconv.Itoa(port)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestListenRequiresToken(t *testing.T) {
	t.Parallel()
	_, err := Listen(Options{})
	if err == nil || !strings.Contains(err.Error(), "token") {
		t.Fatalf("Listen without a token: %v", err)
	}
}

func TestListenBindsLoopbackOnly(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	addr := ts.ln.Addr().(*net.TCPAddr)
	if !addr.IP.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Fatalf("listening on %v, want 127.0.0.1", addr)
	}
	if ts.URL() != "ws://127.0.0.1:"+strconv.Itoa(ts.Port())+"/ws" {
		t.Errorf("URL() = %q", ts.URL())
	}
}

func TestServeReturnsAfterClose(t *testing.T) {
	t.Parallel()
	srv, err := Listen(Options{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(t.Context()) }()
	srv.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(guard):
		t.Fatal("Serve did not return after Close")
	}
	if _, _, err := websocket.DefaultDialer.Dial(srv.URL(), nil); err == nil || errors.Is(err, websocket.ErrBadHandshake) {
		t.Fatalf("dial after Close: %v, want a connection error", err)
	}
}

// TestCloseReasonsAreCutBetweenWords: a close frame leaves 123 bytes for
// the reason; a longer one is cut at a space and marked, never in the
// middle of a word or a character, and every refusal infer sends fits.
func TestCloseReasonsAreCutBetweenWords(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("wörd ", 40)
	reason := string(closeMessage(websocket.ClosePolicyViolation, long)[2:])
	if len(reason) > 123 || !strings.HasSuffix(reason, "wörd…") || !utf8.ValidString(reason) {
		t.Errorf("cut reason %q (%d bytes)", reason, len(reason))
	}
	unbroken := strings.Repeat("é", 100)
	if reason := string(closeMessage(websocket.ClosePolicyViolation, unbroken)[2:]); len(reason) > 123 || !utf8.ValidString(reason) || !strings.HasSuffix(reason, "é…") {
		t.Errorf("cut reason without spaces %q (%d bytes)", reason, len(reason))
	}
	short := "no browser_hello within 5s"
	if reason := string(closeMessage(websocket.ClosePolicyViolation, short)[2:]); reason != short {
		t.Errorf("short reason changed: %q", reason)
	}
	ts := startServer(t, nil)
	ws := mustDial(t, ts.Server)
	ws.WriteMessage(websocket.TextMessage, wire.MustEncode(wire.BrowserHello{Token: "x" + testToken}))
	if _, text := readClose(t, ws); !strings.HasSuffix(text, "(`infer pair` shows it)") {
		t.Errorf("the wrong-token reason does not fit a close frame: %q", text)
	}
}
