package main

import (
	"context"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/assets"
	"github.com/infer-workspace/infer/internal/infertest"
	"github.com/infer-workspace/infer/internal/syncbuf"
	"github.com/infer-workspace/infer/internal/testreq"
	"github.com/infer-workspace/infer/session/browser"
)

const guard = 30 * time.Second

// simRun runs infer-sim in-process with the given stdin; it returns its
// output so far and a channel with its exit code.
type simRun struct {
	stdout, stderr *syncbuf.Buffer
	exit           chan int
	cancel         context.CancelFunc
}

func startSim(t *testing.T, stdin io.Reader, args ...string) *simRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &simRun{stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, exit: make(chan int, 1), cancel: cancel}
	go func() { r.exit <- run(ctx, args, envOf(nil), stdin, r.stdout, r.stderr) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.exit:
		case <-time.After(guard):
			t.Error("infer-sim did not stop")
		}
	})
	return r
}

// waitOut waits until stdout shows want.
func (r *simRun) waitOut(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(guard)
	for !strings.Contains(r.stdout.String(), want) {
		select {
		case <-deadline:
			t.Fatalf("stdout never showed %q:\n%s\nstderr:\n%s", want, r.stdout.String(), r.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (r *simRun) code(t *testing.T) int {
	t.Helper()
	select {
	case c := <-r.exit:
		r.exit <- c
		return c
	case <-time.After(guard):
		t.Fatalf("infer-sim did not exit:\n%s\n%s", r.stdout.String(), r.stderr.String())
		return -1
	}
}

func TestPanelModeChatsThroughStdin(t *testing.T) {
	t.Parallel()
	in := infertest.Start(t, infertest.Options{})
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	r := startSim(t, pr, "--panel", "--url", in.URL, "--token", in.Token)
	r.waitOut(t, "connected to infer")
	io.WriteString(pw, "mode auto\n")
	r.waitOut(t, "mode: auto")
	io.WriteString(pw, "open demo.infer.localhost; read h1\n")
	r.waitOut(t, "■ run finished")
	out := r.stdout.String()
	for _, want := range []string{
		"▶ run started", "agent: Calling BrowserNavigate, BrowserRead.", `→ BrowserNavigate {"url":"http://demo.infer.localhost"}`,
		"✓ Navigated to Tidewater Library (http://demo.infer.localhost/).", "Welcome to Tidewater Library",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("panel output lacks %q:\n%s", want, out)
		}
	}
	io.WriteString(pw, "approve\n")
	r.waitOut(t, "! no approval is pending")
	io.WriteString(pw, "quit\n")
	if c := r.code(t); c != 0 {
		t.Fatalf("exit %d; stderr:\n%s", c, r.stderr.String())
	}
}

func TestPanelModeWithTheOpenTaskProfile(t *testing.T) {
	t.Parallel()
	in := infertest.Start(t, infertest.Options{})
	pr, pw := io.Pipe()
	r := startSim(t, pr, "--panel", "--quiet", "--profile", "opentask-1.12.1", "--url", in.URL, "--token", in.Token)
	r.waitOut(t, "infer-sim panel (opentask-1.12.1)")
	r.waitOut(t, "connected to infer")
	io.WriteString(pw, "mode auto\n")
	r.waitOut(t, "! opentask-1.12.1 never sends set_mode frames")
	io.WriteString(pw, "say run touch x.txt\n")
	r.waitOut(t, "? approval needed")
	io.WriteString(pw, "reject\n")
	r.waitOut(t, "rejected ")
	r.waitOut(t, "agent: Done.")
	pw.Close() // end of input ends the panel
	if c := r.code(t); c != 0 {
		t.Fatalf("exit %d; stderr:\n%s", c, r.stderr.String())
	}
	if out := r.stdout.String(); strings.Contains(out, "▶") || strings.Contains(out, "→ Bash") {
		t.Errorf("quiet output shows run and tool lines:\n%s", out)
	}
}

func writeShipped(t *testing.T, name string) string {
	t.Helper()
	data, err := fs.ReadFile(assets.Scenarios, "scenarios/"+name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunRecordAndReplay(t *testing.T) {
	t.Parallel()
	in := infertest.Start(t, infertest.Options{})
	file := writeShipped(t, "browse-demo.yaml")
	rec := filepath.Join(t.TempDir(), "browse.jsonl")
	r := startSim(t, nil, "run", file, "--url", in.URL, "--token", in.Token, "--record", rec)
	if c := r.code(t); c != 0 {
		t.Fatalf("run exited %d:\n%s\n%s", c, r.stdout.String(), r.stderr.String())
	}
	if !strings.Contains(r.stdout.String(), "PASS "+file) {
		t.Errorf("run output:\n%s", r.stdout.String())
	}
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), in.Token) || !strings.Contains(string(data), `"token":"[redacted]"`) {
		t.Fatalf("the recording does not redact the token:\n%s", data)
	}

	fresh := infertest.Start(t, infertest.Options{})
	r = startSim(t, nil, "replay", rec, "--url", fresh.URL, "--token", fresh.Token)
	if c := r.code(t); c != 0 {
		t.Fatalf("replay of an equivalent run exited %d:\n%s\n%s", c, r.stdout.String(), r.stderr.String())
	}
	if !strings.Contains(r.stdout.String(), "infer's answers match the recording") {
		t.Errorf("replay output:\n%s", r.stdout.String())
	}
}

func TestRunReportsAFailingScenario(t *testing.T) {
	t.Parallel()
	in := infertest.Start(t, infertest.Options{})
	path := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(path, []byte("timeout: 1s\nsteps:\n  - panel: say hello\n  - expect: {type: approval_request}\n"), 0o644)
	r := startSim(t, nil, "run", path, "--url", in.URL, "--token", in.Token)
	if c := r.code(t); c != 1 {
		t.Fatalf("exit %d, want 1", c)
	}
	for _, want := range []string{"FAIL", "step 2 (line 4", "expected: {\"type\":\"approval_request\"}", "closest of the"} {
		if !strings.Contains(r.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr.String())
		}
	}
}

func TestReplayExtOnlyAcceptsTheRealExtension(t *testing.T) {
	t.Parallel()
	// The recording lives with the package that reads it; a missing file
	// is a broken checkout, so replay's own error fails the test below.
	const recorded = "../../sim/recording/testdata/opentask-1.12.1.jsonl"
	in := infertest.Start(t, infertest.Options{})
	r := startSim(t, nil, "replay", recorded, "--ext-only", "--settle", "200ms", "--url", in.URL, "--token", in.Token)
	if c := r.code(t); c != 0 {
		t.Fatalf("exit %d:\n%s\n%s", c, r.stdout.String(), r.stderr.String())
	}
	if !strings.Contains(r.stdout.String(), "infer accepted every recorded extension frame") {
		t.Errorf("output:\n%s", r.stdout.String())
	}
	// Without --ext-only the test server's answers differ from infer's:
	// the report says where, and the exit code is 1.
	r = startSim(t, nil, "replay", recorded, "--settle", "200ms", "--timeout", "3s", "--url", in.URL, "--token", in.Token)
	if c := r.code(t); c != 1 || !strings.Contains(r.stdout.String(), "differences from the recorded frames") {
		t.Errorf("exit %d:\n%s", c, r.stdout.String())
	}
}

func TestBadFlagsAreUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--browser", "netscape", "--token", "t"},
		{"--quiet", "--verbose", "--token", "t"},
		{"--drop-results", "2", "--token", "t"},
		{"--chrome-url", "ws://x", "--token", "t"},
		{"--profile", "opentask-0.1", "--token", "t"},
		{"--seed", "x", "--token", "t"},
		{"run", "--token", "t"},
		{"run", "/nonexistent.yaml", "--token", "t"},
		{"replay", "/nonexistent.jsonl", "--token", "t"},
	} {
		stderr := &syncbuf.Buffer{}
		if c := run(context.Background(), args, envOf(map[string]string{"INFER_HOME": t.TempDir()}), nil, io.Discard, stderr); c != 2 {
			t.Errorf("%v: exit %d, want 2; stderr:\n%s", args, c, stderr.String())
		}
	}
}

// TestBadPortOrURLIsAUsageError: a port or URL no dialer can use is
// refused at start-up, in every mode, instead of being retried forever.
func TestBadPortOrURLIsAUsageError(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--port", "70000"}, "--port 70000: use a number from 1 to 65535"},
		{[]string{"--port", "-1"}, "--port -1:"},
		{[]string{"--url", "ftp://x"}, `--url "ftp://x": scheme "ftp" is not ws or wss`},
		{[]string{"--url", "http://127.0.0.1:52789/ws"}, `scheme "http" is not ws or wss`},
		{[]string{"--url", "ws:///ws"}, "no host"},
		{[]string{"--url", "ws://127.0.0.1:70000/ws"}, "port 70000: use a number from 1 to 65535"},
		{[]string{"--url", "ws://127.0.0.1:0/ws"}, "port 0:"},
		{[]string{"--url", "ws://me@127.0.0.1/ws"}, "user info"},
		{[]string{"--url", "127.0.0.1:52789"}, `--url "127.0.0.1:52789"`},
		{[]string{"run", "scenario.yaml", "--port", "70000"}, "infer-sim run: --port 70000"},
		{[]string{"replay", "session.jsonl", "--url", "ftp://x"}, `infer-sim replay: --url "ftp://x"`},
	} {
		// A regression retries until the context ends, then exits non-2.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		stderr := &syncbuf.Buffer{}
		args := append(tc.args, "--token", "t")
		c := run(ctx, args, envOf(map[string]string{"INFER_HOME": t.TempDir()}), nil, io.Discard, stderr)
		cancel()
		if c != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q; stderr:\n%s", tc.args, c, tc.want, stderr.String())
		}
	}
}

func TestChromeFromTheCommandLine(t *testing.T) {
	t.Parallel()
	testreq.Program(t, testreq.Chromium)
	in := infertest.Start(t, infertest.Options{})
	r := startSim(t, nil, "--browser", "chrome", "--url", in.URL, "--token", in.Token)
	deadline := time.After(guard)
	for in.Server.Status().State != browser.Connected {
		select {
		case <-deadline:
			t.Fatalf("not connected:\n%s", r.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	res, err := in.Server.Navigate(ctx, "data:text/html,<title>From Chromium</title><h1>hi</h1>")
	if err != nil || res.Title != "From Chromium" {
		t.Fatalf("navigate through Chromium: %+v %v\n%s", res, err, r.stderr.String())
	}
	read, err := in.Server.Read(ctx, "h1")
	if err != nil || read.Content != "hi" {
		t.Fatalf("read: %+v %v", read, err)
	}
	r.cancel()
	if c := r.code(t); c != 0 {
		t.Fatalf("exit %d:\n%s", c, r.stderr.String())
	}
}

// TestNoInferOnThePortIsSaidOnce: started where no infer listens, or
// against a web server that is not infer, infer-sim keeps retrying (the
// documented behaviour: it may be started before infer) and says once
// that infer may not be running on this port, not a "connection refused"
// or "bad handshake" line per attempt.
func TestNoInferOnThePortIsSaidOnce(t *testing.T) {
	t.Parallel()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedPort := strconv.Itoa(closed.Listener.Addr().(*net.TCPAddr).Port)
	closed.Close()
	web := httptest.NewServer(http.NotFoundHandler())
	defer web.Close()
	webPort := strconv.Itoa(web.Listener.Addr().(*net.TCPAddr).Port)

	for _, tc := range []struct{ port, want string }{
		{closedPort, "nothing answers at ws://127.0.0.1:" + closedPort + "/ws (connection refused): is infer running on this port?"},
		{webPort, "is not infer's bridge (it answered HTTP 404 Not Found to the WebSocket upgrade): is infer running on this port?"},
	} {
		// --verbose logs each quiet retry at debug level, so the test can
		// wait for three attempts.
		r := startSim(t, nil, "--port", tc.port, "--token", "t", "--verbose")
		deadline := time.After(guard)
		for !strings.Contains(r.stderr.String(), tc.want) || strings.Count(r.stderr.String(), "still nothing infer at this address") < 2 {
			select {
			case <-deadline:
				t.Fatalf("stderr never said %q and retried twice:\n%s", tc.want, r.stderr.String())
			case <-time.After(10 * time.Millisecond):
			}
		}
		r.cancel()
		if c := r.code(t); c != 0 {
			t.Fatalf("exit %d", c)
		}
		out := r.stderr.String()
		if n := strings.Count(out, "is infer running on this port?"); n != 1 || strings.Contains(out, "bad handshake") {
			t.Errorf("port %s: said %d times:\n%s", tc.port, n, out)
		}
	}
}
