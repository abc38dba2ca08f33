package assemble

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	if err := writeBrowserUse(path, b); err != nil {
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
	if err := writeBrowserUse(path, moved); err != nil {
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
	if err := writeBrowserUse(path, b); err != nil {
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

// writeBrowserUse writes b to path as infer init would, replacing any file
// there.
func writeBrowserUse(path string, b config.BrowserUse) error {
	data, err := config.EncodeBrowserUse(b)
	if err != nil {
		return err
	}
	return config.WriteFileAtomic(path, data, 0o600)
}
