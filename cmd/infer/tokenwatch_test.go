package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/session/config"
)

// TestRotateTokenWhileInferRuns: `infer init --rotate-token` beside a
// running infer. The extension's connection made with the old token is
// closed with a reason saying what to do, the old token is refused, and
// the new one is accepted, all without a restart.
func TestRotateTokenWhileInferRuns(t *testing.T) {
	t.Parallel()
	s := serveInProcess(t, "", "")
	s.stop() // the simulated extension goes; a raw one takes its place
	<-s.done
	srv := s.app.Seat.Server()
	old := s.app.BrowserUse.Extension.Token
	ws, code := helloWith(t, srv, old, "1.12.1")
	if code != 0 {
		t.Fatalf("the old token was refused before the rotation: %d", code)
	}

	out, errOut, exit := inferIn(t, s.home, s.project, "init", "--rotate-token")
	if exit != 0 || !strings.Contains(out, "A running infer switches to the new token") {
		t.Fatalf("rotate: exit %d\n%s%s", exit, out, errOut)
	}
	ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		_, _, err := ws.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.ClosePolicyViolation || !strings.Contains(ce.Text, "token changed") {
			t.Fatalf("the old token's connection ended with %v, want a 1008 saying the token changed", err)
		}
		break
	}
	b, _, err := config.LoadBrowserUse(config.BrowserUsePath(s.home))
	if err != nil {
		t.Fatal(err)
	}
	if _, code := helloWith(t, srv, old, "1.12.1"); code != websocket.ClosePolicyViolation {
		t.Errorf("the old token after the rotation: %d, want 1008", code)
	}
	if _, code := helloWith(t, srv, b.Extension.Token, "1.12.1"); code != 0 {
		t.Errorf("the new token was refused: %d", code)
	}
	if s.app.Token() != b.Extension.Token {
		t.Error("/pair would show the old token")
	}
}
