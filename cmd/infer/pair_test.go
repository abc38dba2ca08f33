package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/bridge/wire"
)

// runBridge runs a real bridge with token until the test ends.
func runBridge(t *testing.T, token string, adjust func(*bridge.Options)) *bridge.Server {
	t.Helper()
	opts := bridge.Options{Token: token}
	if adjust != nil {
		adjust(&opts)
	}
	srv, err := bridge.Listen(opts)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { defer close(served); srv.Serve(context.Background()) }()
	t.Cleanup(func() { srv.Close(); <-served })
	return srv
}

// helloWith dials srv as an extension, presents token and returns the
// close code infer answers with (0 when it accepted the hello).
func helloWith(t *testing.T, srv *bridge.Server, token, version string) (*websocket.Conn, int) {
	t.Helper()
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	ws, _, err := d.Dial(srv.URL(), map[string][]string{"Origin": {"chrome-extension://pairtest"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	ws.WriteMessage(websocket.TextMessage, wire.MustEncode(wire.BrowserHello{Token: token, ExtensionVersion: version}))
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := ws.ReadMessage(); err != nil {
		if ce, ok := err.(*websocket.CloseError); ok {
			return ws, ce.Code
		}
		t.Fatalf("hello: %v", err)
	}
	return ws, 0
}

// TestPairAfterAWrongTokenSaysItOnce: an extension presented a wrong
// token to the running infer. pair says so in one line, in the browser
// pane's words, pointing at the token it printed rather than telling the
// person to run the command they are running.
func TestPairAfterAWrongTokenSaysItOnce(t *testing.T) {
	t.Parallel()
	srv := runBridge(t, "placeholder-token-replaced-below-0123456789", nil)
	token := pairHome(t, srv.Port())
	if err := srv.SetToken(token); err != nil {
		t.Fatal(err)
	}
	if _, code := helloWith(t, srv, "an-old-token-the-extension-kept", "1.12.1"); code != websocket.ClosePolicyViolation {
		t.Fatalf("wrong token answered with %d", code)
	}
	out, _, code := infer(t, "pair")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "wrong token") {
			if line != "" {
				t.Fatalf("the wrong token is reported twice:\n%s", out)
			}
			line = l
		}
	}
	if !strings.HasPrefix(line, "  ⚠ At ") || !strings.Contains(line, "an extension tried a wrong token: copy extension.token from browser_use.yaml into its options") {
		t.Fatalf("no rejection line in the pane's words:\n%s", out)
	}
	if strings.Contains(line, "infer pair") || strings.Count(line, "(") != strings.Count(line, ")") {
		t.Fatalf("the rejection line sends the person to infer pair or is garbled: %q", line)
	}
}

// TestPairPortFlagAsksThatInfer: an infer started with --port 0 listens on
// a port browser_use.yaml does not name; --port asks that one.
func TestPairPortFlagAsksThatInfer(t *testing.T) {
	t.Parallel()
	var token string
	port := statusServer(t, &token, map[string]any{"connected": true, "extension_version": "from-the-port-0-infer", "port": 1})
	token = pairHome(t, freePort(t)) // extension.port: where nothing runs
	out, _, code := infer(t, "pair")
	if code != 0 || !strings.Contains(out, "infer is not running on port") || !strings.Contains(out, "type /pair in it, or run infer pair --port N") {
		t.Fatalf("without --port, exit %d:\n%s", code, out)
	}
	out, _, code = infer(t, "pair", "--port", strconv.Itoa(port))
	if code != 0 || !strings.Contains(out, "from-the-port-0-infer") || !strings.Contains(out, "ws://127.0.0.1:"+strconv.Itoa(port)+"/ws") {
		t.Fatalf("with --port, exit %d:\n%s", code, out)
	}
	if _, errOut, code := infer(t, "pair", "--port", "70000"); code != 2 || !strings.Contains(errOut, "out of range") {
		t.Fatalf("--port 70000: exit %d %q", code, errOut)
	}
}

// flappingBridge is a running bridge, paired with this test's home, that
// two browsers have taken from each other three times within its hour's
// window.
func flappingBridge(t *testing.T) *bridge.Server {
	t.Helper()
	srv := runBridge(t, "placeholder-token-replaced-below-0123456789", func(o *bridge.Options) { o.FlapWindow = time.Hour })
	token := pairHome(t, srv.Port())
	if err := srv.SetToken(token); err != nil {
		t.Fatal(err)
	}
	for i := range 4 { // three replacements
		if _, code := helloWith(t, srv, token, "browser-"+strconv.Itoa(i%2)); code != 0 {
			t.Fatalf("hello %d refused with %d", i, code)
		}
	}
	return srv
}

// TestPairSaysWhenTwoBrowsersTakeTurns: pair reports the flapping the
// running infer detected, with what to do.
func TestPairSaysWhenTwoBrowsersTakeTurns(t *testing.T) {
	t.Parallel()
	flappingBridge(t)
	out, _, code := infer(t, "pair")
	if code != 0 || !strings.Contains(out, "an extension is connected") ||
		!strings.Contains(out, "⚠ two browsers with the extension and this token keep replacing each other (3 connections replaced in 1h); browser commands are paused until one of them is closed") ||
		!strings.Contains(out, "disconnect the extension in one of them") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// infer doctor fails the bridge check while two browsers take turns, and
// says what to do: either connection alone would pass.
func TestDoctorSaysWhenTwoBrowsersTakeTurns(t *testing.T) {
	t.Parallel()
	srv := flappingBridge(t)
	out, _, code := infer(t, "doctor")
	want := fmt.Sprintf("FAIL  bridge    infer is running on port %d, but two browsers with the extension and this token keep replacing each other (3 connections replaced in 1h); browser commands are paused until one of them is closed\n", srv.Port())
	if code != 1 || !strings.Contains(out, want) ||
		!strings.Contains(out, "          disconnect the extension in one of them, or give it another infer's port and token\n") {
		t.Fatalf("exit %d, want a line %q:\n%s", code, want, out)
	}
}
