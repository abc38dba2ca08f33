package relay

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/internal/asuser"
	"github.com/infer-workspace/infer/internal/syncbuf"
)

// dialHelperEnv, when set to a socket path, makes the test binary a guest
// that sends a hello with the token in dialHelperTokenEnv and prints
// whether it was answered.
const (
	dialHelperEnv      = "INFER_RELAY_TEST_DIAL"
	dialHelperTokenEnv = "INFER_RELAY_TEST_TOKEN"
)

// dialHelper is the guest run as another user by TestOtherUsersAreRefused.
func dialHelper(path, token string) {
	c, err := net.Dial("unix", path)
	if err != nil {
		fmt.Println("dial failed:", err)
		os.Exit(1)
	}
	defer c.Close()
	// A hang guard only: the holder answers or closes at once.
	c.SetDeadline(time.Now().Add(guard))
	writeFrame(c, hello{Token: token, Version: protocolVersion})
	line, err := bufio.NewReader(c).ReadString('\n')
	if line == "" {
		fmt.Println("closed:", err)
		return
	}
	fmt.Println("answered:", strings.TrimSpace(line))
}

// TestOtherUsersAreRefused connects as another user with the right token,
// to a socket whose folder and mode were loosened (the home is the
// person's alone, so only a mistake lets another user reach it): the
// holder closes the connection without a word, and logs it. The same
// guest run as the holder's own user is answered.
func TestOtherUsersAreRefused(t *testing.T) {
	// Not t.TempDir, whose parent only its owner may enter.
	dir, err := os.MkdirTemp("", "infer-relay-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, SocketFile)
	logs := &syncbuf.Buffer{}
	srv, err := Listen(path, func() string { return "secret" }, &fakeSource{}, testHolder, slogTo(logs))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	run := func(uid int) string {
		cmd := asuser.Command(t, uid, dialHelperEnv+"="+path, dialHelperTokenEnv+"=secret")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("dial helper: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := run(-1); !strings.HasPrefix(got, `answered: {"ok":true`) {
		t.Fatalf("the holder's own user: %q, want a welcome", got)
	}
	if got := run(asuser.Nobody); !strings.HasPrefix(got, "closed:") {
		t.Fatalf("another user: %q, want the connection closed unanswered", got)
	}
	if l := logs.String(); !strings.Contains(l, "another user (uid 65534)") {
		t.Errorf("the refusal is not logged:\n%s", l)
	}
}

// slogTo is a logger writing text lines into b.
func slogTo(b *syncbuf.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
