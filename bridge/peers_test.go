package bridge

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/internal/asuser"
)

// dialHelperEnv, when set to an address, makes the test binary a client
// that sends one plain request there and prints whether it was answered.
const dialHelperEnv = "INFER_BRIDGE_TEST_DIAL"

// dialHelper is the client run as another user by TestOtherUsersAreRefused.
func dialHelper(addr string) {
	c, err := net.Dial("tcp4", addr)
	if err != nil {
		fmt.Println("dial failed:", err)
		os.Exit(1)
	}
	defer c.Close()
	// A hang guard only: the server answers or closes at once.
	c.SetDeadline(time.Now().Add(guard))
	fmt.Fprintf(c, "GET /status HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", addr)
	line, err := bufio.NewReader(c).ReadString('\n')
	if line == "" {
		fmt.Println("closed:", err)
		return
	}
	fmt.Println("answered:", strings.TrimSpace(line))
}

// runDialHelper runs the test binary as dialHelper against srv, as uid
// (with the same gid) unless uid is negative, and returns what it printed.
func runDialHelper(t *testing.T, srv *testServer, uid int) string {
	t.Helper()
	cmd := asuser.Command(t, uid, dialHelperEnv+"=127.0.0.1:"+fmt.Sprint(srv.Port()))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("dial helper: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestOtherUsersAreRefused connects from a process of another user: the
// bridge closes the socket without answering, and says so in its log and
// status. The same client run as infer's own user is answered.
func TestOtherUsersAreRefused(t *testing.T) {
	t.Parallel()
	srv := startServer(t, nil)
	if got := runDialHelper(t, srv, -1); !strings.HasPrefix(got, "answered: HTTP/1.1 401") {
		t.Fatalf("infer's own user: %q, want a 401 answer", got)
	}
	got := runDialHelper(t, srv, asuser.Nobody)
	if !strings.HasPrefix(got, "closed:") {
		t.Fatalf("another user: %q, want the connection closed unanswered", got)
	}
	if logs := srv.logs.String(); !strings.Contains(logs, "uid=65534") || !strings.Contains(logs, "another user") {
		t.Errorf("the refusal is not logged:\n%s", logs)
	}
	if st := srv.Status(); !strings.Contains(st.Reason, "another user (uid 65534)") {
		t.Errorf("status reason %q", st.Reason)
	}
}
