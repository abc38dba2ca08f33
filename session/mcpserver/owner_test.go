package mcpserver

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/internal/asuser"
	"github.com/infer-workspace/infer/session/tools"
)

// Helpers the test binary becomes when run as another user.
const (
	squatHelperEnv = "INFER_MCPSERVER_TEST_SQUAT"
	dialHelperEnv  = "INFER_MCPSERVER_TEST_DIAL"
	tokenHelperEnv = "INFER_MCPSERVER_TEST_TOKEN"
)

func init() {
	// Run before TestMain's leak check, which a helper never reaches.
	if path := os.Getenv(squatHelperEnv); path != "" {
		squatHelper(path)
		os.Exit(0)
	}
	if path := os.Getenv(dialHelperEnv); path != "" {
		c, err := net.Dial("unix", path)
		if err != nil {
			fmt.Println("dial failed:", err)
			os.Exit(0)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "{\"token\":%q}\n", os.Getenv(tokenHelperEnv))
		line, err := bufio.NewReader(c).ReadString('\n')
		if line == "" {
			fmt.Println("closed:", err)
		} else {
			fmt.Println("answered:", strings.TrimSpace(line))
		}
		os.Exit(0)
	}
}

// squatHelper listens where infer's socket would be, prints "ready", then
// what the first client sends.
func squatHelper(path string) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		fmt.Println("listen failed:", err)
		os.Exit(1)
	}
	_ = os.Chmod(path, 0o666)
	fmt.Println("ready")
	ln.(*net.UnixListener).SetDeadline(time.Now().Add(20 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		fmt.Println("no client:", err)
		return
	}
	c.SetDeadline(time.Now().Add(3 * time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	fmt.Printf("received: %q\n", line)
}

func sharedFolder(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "infer-mcpsock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// An `infer mcp` client sends the token only to an infer of its own user:
// another user's socket in its place (a home folder others could write
// in) gets nothing.
func TestDialSendsNothingToAnotherUsersSocket(t *testing.T) {
	path := filepath.Join(sharedFolder(t), SocketFile)
	cmd := asuser.Command(t, asuser.Nobody, squatHelperEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	r := bufio.NewReader(out)
	if l, _ := r.ReadString('\n'); strings.TrimSpace(l) != "ready" {
		t.Fatalf("squatter: %q", l)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, derr := Dial(ctx, path, "secret-token")
	if derr == nil {
		c.Close()
	}
	rest := new(strings.Builder)
	_, _ = r.WriteTo(rest)
	_ = cmd.Wait()
	if strings.Contains(rest.String(), "secret-token") {
		t.Errorf("another user's socket received the token: %s", rest.String())
	}
	if derr == nil || !strings.Contains(derr.Error(), "another user") {
		t.Errorf("Dial: %v, want a refusal naming another user", derr)
	}
}

// Another user's process that reaches the socket (its folder loosened) is
// closed unanswered, even with the right token; the same client as the
// listener's own user is served.
func TestOtherUsersAreRefusedAtTheSocket(t *testing.T) {
	dir := sharedFolder(t)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, SocketFile)
	run := func(context.Context, string, string, string) tools.Outcome { return tools.Outcome{Success: true} }
	l, err := Listen(path, func() string { return "secret" }, run, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	dial := func(uid int) string {
		out, err := asuser.Command(t, uid, dialHelperEnv+"="+path, tokenHelperEnv+"=secret").CombinedOutput()
		if err != nil {
			t.Fatalf("dial helper: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := dial(-1); !strings.HasPrefix(got, `answered: {"ok":true`) {
		t.Errorf("the listener's own user: %q", got)
	}
	if got := dial(asuser.Nobody); !strings.HasPrefix(got, "closed:") {
		t.Errorf("another user: %q, want the connection closed unanswered", got)
	}
}
