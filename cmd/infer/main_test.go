package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/infer-workspace/infer/session/netproxy"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infer-workspace/infer/internal/reaper"
	"github.com/infer-workspace/infer/session/config"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	// infer (main, run by scripts) starts approved commands under a reaper
	// that is this binary again: it must run as one, not as the tests.
	reaper.Main()
	if addr := os.Getenv(squatHelperEnv); addr != "" {
		squatHelper(addr)
		return
	}
	// Started by a script as `infer` (script_test.go), the test binary is
	// infer and runs main; otherwise it runs the tests, then goleak's check.
	// As the network forwarder of a confined command, it is only that.
	netproxy.MaybeForward()
	testscript.Main(leakChecked{m}, scriptCommands)
}

// newHome points INFER_HOME at a fresh directory for one test.
func newHome(t *testing.T) string {
	t.Helper()
	home := freshHome(t)
	t.Setenv(config.HomeEnv, home)
	return home
}

// freshHome is a home of the test's own, not yet made, for inferIn: unlike
// newHome it sets no variable, so the test may run in parallel.
func freshHome(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "home")
}

// infer runs infer in this process, in the folders hlProject gave the
// test, or else the process's own.
func infer(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	at := testWhere(t)
	return inferIn(t, at.home, at.wd, args...)
}

// testDirs holds the home and project hlProject gave each test, by the
// test's name, for the helpers that run infer in this process: the test
// then sets no variable and changes no directory, and may run in parallel.
var testDirs sync.Map

// useDirs gives the test (and its subtests) home and wd for infer run in
// this process.
func useDirs(t *testing.T, home, wd string) {
	t.Helper()
	testDirs.Store(t.Name(), where{home: home, wd: wd})
	t.Cleanup(func() { testDirs.Delete(t.Name()) })
}

// testContext is a context for a command run in this process by t: with
// the folders useDirs gave it, if any.
func testContext(t *testing.T) context.Context {
	at := testWhere(t)
	return inDirs(context.Background(), at.home, at.wd)
}

// testWhere is what useDirs gave t or the nearest test it is a subtest of;
// empty (the process's own) when none.
func testWhere(t *testing.T) where {
	for name := t.Name(); ; {
		if at, ok := testDirs.Load(name); ok {
			return at.(where)
		}
		i := strings.LastIndex(name, "/")
		if i < 0 {
			return where{}
		}
		name = name[:i]
	}
}

// inferIn runs infer in this process with home and wd for its home and
// working directory ("" keeps the process's own): a test that gives both
// sets no variable and changes no directory, so it may run in parallel.
func inferIn(t *testing.T, home, wd string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(inDirs(context.Background(), home, wd), args, nil, &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestInitCreatesHome(t *testing.T) {
	t.Parallel()
	home := freshHome(t)
	out, errOut, code := inferIn(t, home, "", "init", "--port", "6123")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	b, warnings, err := config.LoadBrowserUse(config.BrowserUsePath(home))
	if err != nil || len(warnings) != 0 {
		t.Fatalf("browser_use.yaml: %v %v", err, warnings)
	}
	if !b.Enabled || b.Backend != "extension" || b.Extension.Port != 6123 || b.Extension.CommandTimeout.Std() != 30*time.Second || len(b.Extension.Token) != 43 {
		t.Errorf("browser_use.yaml = %v", b)
	}
	// The token is shown in full on creation, exactly once.
	if strings.Count(out, b.Extension.Token) != 1 {
		t.Errorf("token shown %d times:\n%s", strings.Count(out, b.Extension.Token), out)
	}
	for _, want := range []string{"Created", "port to 6123", "opentask browser extension", "https://github.com/inference-gateway/opentask/releases", "Load unpacked", "options page", "infer serve", "Connect", "infer pair"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, p := range []string{home, config.BrowserUsePath(home), config.ConfigPath(home)} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	if _, err := config.LoadConfigFile(config.ConfigPath(home)); err != nil {
		t.Errorf("config.yaml: %v", err)
	}
}

func TestInitIsIdempotent(t *testing.T) {
	t.Parallel()
	home := freshHome(t)
	if _, errOut, code := inferIn(t, home, "", "init"); code != 0 {
		t.Fatalf("first init: %s", errOut)
	}
	path := config.BrowserUsePath(home)
	before, _ := os.ReadFile(path)
	first, _, _ := config.LoadBrowserUse(path)
	cfgBefore, _ := os.ReadFile(config.ConfigPath(home))

	out, errOut, code := inferIn(t, home, "", "init", "--port", "7000")
	if code != 0 {
		t.Fatalf("second init: exit %d %s", code, errOut)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Errorf("browser_use.yaml changed:\n%s\n---\n%s", before, after)
	}
	if cfgAfter, _ := os.ReadFile(config.ConfigPath(home)); !bytes.Equal(cfgBefore, cfgAfter) {
		t.Error("config.yaml changed")
	}
	if strings.Contains(out, first.Extension.Token) {
		t.Errorf("second init printed the full token:\n%s", out)
	}
	if !strings.Contains(out, config.MaskToken(first.Extension.Token)) || !strings.Contains(out, "left unchanged") || !strings.Contains(out, "--show-token") {
		t.Errorf("output:\n%s", out)
	}
	if !strings.Contains(errOut, "--port applies only when browser_use.yaml is created") {
		t.Errorf("no note about the ignored --port: %q", errOut)
	}
}

func TestInitRotateToken(t *testing.T) {
	t.Parallel()
	home := freshHome(t)
	path := config.BrowserUsePath(home)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("# hand written\nenabled: true\nextension:\n  port: 6200\n  token: too-short\n  command_timeout: 1m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A short token makes plain init fail, with rotation as the fix.
	_, errOut, code := inferIn(t, home, "", "init")
	if code != 1 || !strings.Contains(errOut, "infer: ") || !strings.Contains(errOut, "extension.token") || !strings.Contains(errOut, "--rotate-token") {
		t.Fatalf("init with a short token: exit %d, %q", code, errOut)
	}

	out, errOut, code := inferIn(t, home, "", "init", "--rotate-token")
	if code != 0 {
		t.Fatalf("rotate: exit %d %s", code, errOut)
	}
	b, _, err := config.LoadBrowserUse(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.Extension.Port != 6200 || b.Extension.CommandTimeout.Std() != time.Minute || !b.Enabled || len(b.Extension.Token) != 43 {
		t.Errorf("other settings changed: %v", b)
	}
	if !strings.Contains(out, b.Extension.Token) || !strings.Contains(errOut, "re-paired") {
		t.Errorf("rotate output:\n%s\n%s", out, errOut)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "# hand written") {
		t.Errorf("comment lost:\n%s", data)
	}

	// Rotating again changes only the token.
	if _, _, code := inferIn(t, home, "", "init", "--rotate-token"); code != 0 {
		t.Fatal("second rotate failed")
	}
	b2, _, _ := config.LoadBrowserUse(path)
	if b2.Extension.Token == b.Extension.Token {
		t.Error("token unchanged")
	}
	b2.Extension.Token = b.Extension.Token
	if b2 != b {
		t.Errorf("rotation changed more than the token: %v vs %v", b2, b)
	}
}

// TestInitRefusesASharedHome: a home others can write in (INFER_HOME at a
// shared folder) is refused before the token is written there.
func TestInitRefusesASharedHome(t *testing.T) {
	t.Parallel()
	home := freshHome(t)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o777); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := inferIn(t, home, "", "init")
	if code == 0 || !strings.Contains(errOut, "other users can write in infer's home") {
		t.Fatalf("exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(config.BrowserUsePath(home)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the token file was written into a shared home: %v", err)
	}
}

func TestInitBadPort(t *testing.T) {
	t.Parallel()
	home := freshHome(t)
	_, errOut, code := inferIn(t, home, "", "init", "--port", "70000")
	if code != 2 || !strings.Contains(errOut, "infer: --port 70000") || !strings.Contains(errOut, "Usage:") {
		t.Fatalf("exit %d, %q", code, errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	home := freshHome(t)
	for _, args := range [][]string{
		{"init", "--no-such-flag"},
		{"frobnicate"},
		{"pair", "extra"},
		{"version", "extra"},
	} {
		out, errOut, code := inferIn(t, home, "", args...)
		if code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
		if !strings.HasPrefix(errOut, "infer: ") || !strings.Contains(errOut, "Usage:") {
			t.Errorf("%q: stderr %q", args, errOut)
		}
		if out != "" {
			t.Errorf("%q: stdout %q", args, out)
		}
	}
	if _, errOut, _ := inferIn(t, home, "", "pari"); !strings.Contains(errOut, `did you mean "pair"?`) {
		t.Errorf("no suggestion: %q", errOut)
	}
}

func TestRuntimeErrorHasNoUsage(t *testing.T) {
	t.Parallel()
	home := freshHome(t) // empty: no browser_use.yaml
	out, errOut, code := inferIn(t, home, "", "pair")
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	if !strings.HasPrefix(errOut, "infer: ") || !strings.Contains(errOut, "run `infer init`") || strings.Contains(errOut, "Usage:") {
		t.Errorf("stderr %q", errOut)
	}
	if out != "" {
		t.Errorf("stdout %q", out)
	}
}

func TestNoArgsPrintsHelp(t *testing.T) {
	t.Parallel()
	out, _, code := infer(t)
	if code != 0 || !strings.Contains(out, "Available Commands:") || !strings.Contains(out, "init") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestVersion(t *testing.T) {
	out, _, code := infer(t, "version")
	if code != 0 || !strings.HasPrefix(out, "infer ") || !strings.Contains(out, "go1.") {
		t.Fatalf("exit %d: %q", code, out)
	}
	flagOut, _, _ := infer(t, "--version")
	if flagOut != out {
		t.Errorf("--version %q differs from version %q", flagOut, out)
	}

	old := version
	t.Cleanup(func() { version = old })
	version = "v9.9.9"
	if out, _, _ := infer(t, "version"); !strings.HasPrefix(out, "infer v9.9.9 (") {
		t.Errorf("ldflags version not used: %q", out)
	}
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		out, errOut, code := infer(t, "completion", shell)
		if code != 0 || !strings.Contains(out, "infer") {
			t.Errorf("%s: exit %d, %q, %d bytes", shell, code, errOut, len(out))
		}
	}
}

// pairHome writes a browser_use.yaml for port into a fresh INFER_HOME and
// returns its token.
func pairHome(t *testing.T, port int) string {
	t.Helper()
	home := freshHome(t)
	useDirs(t, home, "")
	b := config.NewBrowserUse(port)
	if err := writeBrowserUse(config.BrowserUsePath(home), b); err != nil {
		t.Fatal(err)
	}
	return b.Extension.Token
}

// statusServer answers /status like the bridge: 401 without the right
// bearer token, else body.
func statusServer(t *testing.T, token *string, body any) (port int) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/status" || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+*token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	_, p, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	port, _ = strconv.Atoi(p)
	return port
}

func TestPairConnected(t *testing.T) {
	t.Parallel()
	var token string
	since := time.Now().Add(-5 * time.Minute).UTC().Truncate(time.Second)
	port := statusServer(t, &token, map[string]any{
		"connected": true, "extension_version": "1.12.1", "since": since.Format(time.RFC3339), "rtt_ms": 3, "port": 1,
	})
	token = pairHome(t, port)

	out, errOut, code := infer(t, "pair")
	if code != 0 {
		t.Fatalf("exit %d %s", code, errOut)
	}
	for _, want := range []string{
		"ws://127.0.0.1:" + strconv.Itoa(port) + "/ws",
		"Port:   " + strconv.Itoa(port),
		config.MaskToken(token),
		"an extension is connected",
		"1.12.1",
		since.Local().Format("2006-01-02 15:04:05"),
		"Round trip:  3 ms",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, token) {
		t.Errorf("full token printed without --show-token:\n%s", out)
	}

	out, _, _ = infer(t, "pair", "--show-token")
	if !strings.Contains(out, "Token:  "+token+"\n") {
		t.Errorf("--show-token did not print the token:\n%s", out)
	}
}

func TestPairNoExtension(t *testing.T) {
	t.Parallel()
	var token string
	port := statusServer(t, &token, map[string]any{"connected": false, "port": 1})
	token = pairHome(t, port)
	out, _, code := infer(t, "pair")
	if code != 0 || !strings.Contains(out, "infer is running, but no extension is connected") || strings.Contains(out, "wrong token") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestPairRejectedExtension(t *testing.T) {
	t.Parallel()
	var token string
	at := time.Date(2026, 9, 2, 12, 0, 3, 0, time.UTC)
	port := statusServer(t, &token, map[string]any{
		"connected": false, "port": 1,
		"last_rejection": map[string]any{"at": at.Format(time.RFC3339), "reason": "origin \"https://evil.example\" is not a browser extension", "kind": "origin"},
	})
	token = pairHome(t, port)
	out, _, _ := infer(t, "pair")
	want := "⚠ At " + at.Local().Format("2006-01-02 15:04:05")
	if !strings.Contains(out, want) || !strings.Contains(out, `infer refused an extension: origin "https://evil.example" is not a browser extension.`) || strings.Contains(out, "wrong token") {
		t.Fatalf("output lacks %q:\n%s", want, out)
	}
}

func TestPairWrongToken(t *testing.T) {
	t.Parallel()
	serverToken := "the-token-infer-started-with-long-enough"
	port := statusServer(t, &serverToken, map[string]any{"connected": true})
	pairHome(t, port) // a different, fresh token
	out, _, code := infer(t, "pair")
	if code != 0 || !strings.Contains(out, "refused this token") || !strings.Contains(out, "restart infer") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestPairNotRunning(t *testing.T) {
	t.Parallel()
	// Take a free port, then free it: nothing listens there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	pairHome(t, port)
	out, _, code := infer(t, "pair")
	if code != 0 || !strings.Contains(out, "infer is not running on port "+strconv.Itoa(port)) || !strings.Contains(out, "infer serve") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestPairSomethingElse(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("<html>hello</html>"))
	}))
	t.Cleanup(srv.Close)
	pairHome(t, srv.Listener.Addr().(*net.TCPAddr).Port)
	out, _, _ := infer(t, "pair")
	if !strings.Contains(out, "it is not infer") {
		t.Fatalf("output:\n%s", out)
	}
}

func TestPairDisabled(t *testing.T) {
	t.Parallel()
	home := freshHome(t)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config.BrowserUsePath(home), []byte("enabled: false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, code := inferIn(t, home, "", "pair")
	if code != 0 || !strings.Contains(out, "browser use is off") {
		t.Fatalf("exit %d:\n%s", code, out)
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
