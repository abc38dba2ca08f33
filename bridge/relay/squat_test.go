package relay

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/internal/asuser"
)

// squatHelperEnv, when set to a socket path, makes the test binary a
// squatter: another user who put a socket where the person's holder would,
// in a folder the person shares with it. It prints "ready", then whatever
// the first guest sends it.
const squatHelperEnv = "INFER_RELAY_TEST_SQUAT"

func squatHelper(path string) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		fmt.Println("listen failed:", err)
		os.Exit(1)
	}
	defer ln.Close()
	_ = os.Chmod(path, 0o666)
	fmt.Println("ready")
	ln.(*net.UnixListener).SetDeadline(time.Now().Add(guard))
	c, err := ln.Accept()
	if err != nil {
		fmt.Println("no guest:", err)
		return
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	fmt.Printf("received: %q\n", line)
}

// sharedFolder is a folder every user may write in, as a squatter's
// would be (INFER_HOME pointed at a shared or pre-made folder).
func sharedFolder(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "infer-relay-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestGuestSendsNothingToAnotherUsersSocket puts another user's socket
// where the holder's would be: the guest must not send it the token (nor,
// later, the person's browser commands), and Dial must say why.
func TestGuestSendsNothingToAnotherUsersSocket(t *testing.T) {
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
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	c, derr := Dial(ctx, path, "secret-token", nil)
	if derr == nil {
		c.Close()
	}
	rest := new(strings.Builder)
	_, _ = bufio.NewReader(r).WriteTo(rest)
	_ = cmd.Wait()
	if strings.Contains(rest.String(), "secret-token") {
		t.Errorf("another user's socket received the token: %s", rest.String())
	}
	if derr == nil || !errors.Is(derr, ErrNotOurs) {
		t.Errorf("Dial: %v, want ErrNotOurs", derr)
	}
}

// TestListenRefusesAFolderOthersCanWrite: a holder does not serve the
// browser from a folder where another user could replace its socket (or
// put one there first, for guests to hand the token to).
func TestListenRefusesAFolderOthersCanWrite(t *testing.T) {
	for _, mode := range []os.FileMode{0o777, 0o1777, 0o770} {
		dir := sharedFolder(t)
		if err := os.Chmod(dir, mode); err != nil {
			t.Fatal(err)
		}
		srv, err := Listen(filepath.Join(dir, SocketFile), func() string { return "secret" }, &fakeSource{}, testHolder, nil)
		if err == nil {
			srv.Close()
			t.Errorf("mode %04o: Listen served the browser from a folder others can write", mode)
			continue
		}
		if !strings.Contains(err.Error(), "chmod 700") {
			t.Errorf("mode %04o: the error does not say the fix: %v", mode, err)
		}
	}
}
