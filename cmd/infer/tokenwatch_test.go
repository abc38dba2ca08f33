package main

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/internal/syncbuf"
	"github.com/infer-workspace/infer/session/config"
)

// fakeSetter records the tokens given to it.
type fakeSetter struct {
	got chan string
	err error
}

func (f *fakeSetter) SetToken(token string) error {
	f.got <- token
	return f.err
}

// waitLog waits until the log holds want.
func waitLog(t *testing.T, logs *syncbuf.Buffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never said %q:\n%s", want, logs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTokenWatchFollowsARotation: a rotated token reaches the bridge, an
// unusable rewrite of the file changes nothing (and says why), and a port
// change is logged as needing a restart.
func TestTokenWatchFollowsARotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "browser_use.yaml")
	b := config.NewBrowserUse(config.DefaultPort)
	if err := config.WriteBrowserUse(path, b); err != nil {
		t.Fatal(err)
	}
	setter := &fakeSetter{got: make(chan string, 4)}
	logs := &syncbuf.Buffer{}
	w := watchToken(path, setter, b.Extension.Token, b.Extension.Port, slog.New(slog.NewTextHandler(logs, nil)), 5*time.Millisecond)
	defer w.Close()

	rotated, err := config.RotateToken(path, config.NewToken())
	if err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-setter.got:
		if got != rotated.Extension.Token {
			t.Fatalf("the bridge got %q, want the rotated token", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the rotated token never reached the bridge")
	}
	waitLog(t, logs, "now accepts only the new one")
	if w.Token() != rotated.Extension.Token {
		t.Fatal("Token() does not follow the rotation")
	}

	if err := os.WriteFile(path, []byte("enabled: [not yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitLog(t, logs, "cannot be used; the bridge keeps the token it has")

	moved := rotated
	moved.Extension.Port = 6123
	if err := config.WriteBrowserUse(path, moved); err != nil {
		t.Fatal(err)
	}
	waitLog(t, logs, "restart infer to listen on it")
	select {
	case got := <-setter.got:
		t.Fatalf("SetToken(%q) without a new token", got)
	default:
	}
	if w.Token() != rotated.Extension.Token {
		t.Fatal("the token changed without a rotation")
	}
}

// TestTokenWatchKeepsTheTokenTheBridgeRefused: a token the bridge refuses
// is not taken for the current one.
func TestTokenWatchKeepsTheTokenTheBridgeRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "browser_use.yaml")
	b := config.NewBrowserUse(config.DefaultPort)
	if err := config.WriteBrowserUse(path, b); err != nil {
		t.Fatal(err)
	}
	setter := &fakeSetter{got: make(chan string, 4), err: errors.New("refused")}
	logs := &syncbuf.Buffer{}
	w := watchToken(path, setter, b.Extension.Token, b.Extension.Port, slog.New(slog.NewTextHandler(logs, nil)), 5*time.Millisecond)
	defer w.Close()
	if _, err := config.RotateToken(path, config.NewToken()); err != nil {
		t.Fatal(err)
	}
	waitLog(t, logs, "it keeps the one it has")
	if w.Token() != b.Extension.Token {
		t.Fatal("Token() follows a token the bridge refused")
	}
}

// TestRotateTokenWhileInferRuns: `infer init --rotate-token` beside a
// running infer. The extension's connection made with the old token is
// closed with a reason saying what to do, the old token is refused, and
// the new one is accepted, all without a restart.
func TestRotateTokenWhileInferRuns(t *testing.T) {
	s := serveInProcess(t, "", "")
	s.stop() // the simulated extension goes; a raw one takes its place
	<-s.done
	srv := s.app.Seat.Server()
	old := s.app.BrowserUse.Extension.Token
	ws, code := helloWith(t, srv, old, "1.12.1")
	if code != 0 {
		t.Fatalf("the old token was refused before the rotation: %d", code)
	}

	out, errOut, exit := infer(t, "init", "--rotate-token")
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
	if s.app.tokens.Token() != b.Extension.Token {
		t.Error("/pair would show the old token")
	}
}
