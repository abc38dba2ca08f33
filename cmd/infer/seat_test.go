package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/sim"
)

// One browser per person (issue 22): every infer reaches the browser of
// the infer that holds the bridge, a call waits a while for an extension
// that is on its way, and a run whose browser call found none says so in
// its exit code.

// withBridgeWait is withBridge with extension.connect_wait set to wait.
func withBridgeWait(t *testing.T, home string, port int, wait time.Duration) string {
	t.Helper()
	if err := config.EnsureDir(home); err != nil {
		t.Fatal(err)
	}
	bu := config.NewBrowserUse(port)
	bu.Extension.ConnectWait = config.Duration(wait)
	if err := config.CreateBrowserUse(config.BrowserUsePath(home), bu); err != nil {
		t.Fatal(err)
	}
	return bu.Extension.Token
}

// simExtension runs a simulated extension that dials port until the test
// ends; unlike extension, it does not wait for the connection.
func simExtension(t *testing.T, port int, token string) *sim.Client {
	t.Helper()
	c := sim.NewClient(sim.ClientOptions{URL: "ws://127.0.0.1:" + strconv.Itoa(port) + "/ws", Token: token, Browser: &sim.Minimal{},
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return c
}

// inProcess is an infer command run in this process through run().
type inProcess struct {
	t              *testing.T
	stdout, stderr *hlBuffer
	cancel         context.CancelFunc
	done           chan int
}

func runInProcess(t *testing.T, args ...string) *inProcess {
	t.Helper()
	at := testWhere(t)
	ctx, cancel := context.WithCancel(inDirs(context.Background(), at.home, at.wd))
	p := &inProcess{t: t, stdout: newHLBuffer(), stderr: newHLBuffer(), cancel: cancel, done: make(chan int, 1)}
	go func() { p.done <- run(ctx, args, nil, p.stdout, p.stderr) }()
	t.Cleanup(p.stop)
	return p
}

// stop ends the command as SIGTERM would and waits for it.
func (p *inProcess) stop() {
	p.cancel()
	select {
	case <-p.done:
		p.done <- 0 // for a later stop
	case <-time.After(hlGuard):
		p.t.Errorf("an in-process infer did not stop within %s\n%s", hlGuard, p.stderr)
	}
}

// wantBrowserRead checks that a headless run read the page through the
// simulated extension.
func wantBrowserRead(t *testing.T, c *hlCall) {
	t.Helper()
	if code := c.wait(t); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, c.stdout, c.stderr)
	}
	for _, want := range []string{"✓ BrowserNavigate", "✓ BrowserRead", sim.MinimalPageText} {
		if !strings.Contains(c.stdout.String(), want) {
			t.Errorf("the run's output lacks %q:\nstdout:\n%s\nstderr:\n%s", want, c.stdout, c.stderr)
		}
	}
}

// TestHeadlessWaitsForTheExtension: `infer headless "open URL; read h1"`
// started before the extension has connected says that it waits, and
// succeeds once the extension connects.
func TestHeadlessWaitsForTheExtension(t *testing.T) {
	t.Parallel()
	home, _ := hlProject(t)
	port := freePort(t)
	token := withBridge(t, home, port)
	c := startHL(t, "--mode", "auto", "open https://example.com/; read h1")
	c.stderr.waitFor(t, regexp.MustCompile(`infer: browser: waiting up to 20s for the browser extension to connect`))
	simExtension(t, port, token)
	wantBrowserRead(t, c)
}

// TestHeadlessGoesThroughServe: with `infer serve` holding the bridge,
// headless uses serve's browser (the extension keeps its one connection)
// instead of saying that the port is in use.
func TestHeadlessGoesThroughServe(t *testing.T) {
	t.Parallel()
	home, _ := hlProject(t)
	port := freePort(t)
	token := withBridge(t, home, port)
	serve := runInProcess(t, "serve")
	serve.stdout.waitFor(t, regexp.MustCompile(`listening on ws://127\.0\.0\.1:`+strconv.Itoa(port)+`/ws`))
	ext := simExtension(t, port, token)
	ctx, cancel := context.WithTimeout(context.Background(), hlGuard)
	defer cancel()
	if err := ext.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}

	c := startHL(t, "--verbose", "--mode", "auto", "open https://example.com/; read h1")
	wantBrowserRead(t, c)
	if !strings.Contains(c.stderr.String(), "using the browser of another infer") || !strings.Contains(c.stderr.String(), "infer serve in") {
		t.Errorf("headless does not say whose browser it used:\n%s", c.stderr)
	}
	if strings.Contains(c.stderr.String(), "in use") {
		t.Errorf("headless still speaks of a busy port:\n%s", c.stderr)
	}
	if n := ext.Connects(); n != 1 {
		t.Errorf("the extension connected %d times, want once (to serve)", n)
	}
}

// TestHeadlessWithoutBrowserExitsNonZero: with no extension at all, the
// browser call fails after extension.connect_wait with a message that
// says it waited, and the run exits 3, not 0.
func TestHeadlessWithoutBrowserExitsNonZero(t *testing.T) {
	t.Parallel()
	home, _ := hlProject(t)
	withBridgeWait(t, home, freePort(t), time.Second)
	out, errOut, code := runHL(t, "", "tabs")
	if code != exitNoBrowser {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitNoBrowser, out, errOut)
	}
	for _, want := range []string{"✗ BrowserTabs", "waited 1s for the browser extension to connect, but none did"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"infer: browser: waiting up to 1s", "a browser call failed because no browser extension was connected"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// TestHeadlessPortHeldByAStranger: a port held by a program that is not
// one of the person's infers is named, with `infer doctor` to find it,
// instead of advising --port; the run still exits 3.
func TestHeadlessPortHeldByAStranger(t *testing.T) {
	t.Parallel()
	home, _ := hlProject(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	withBridgeWait(t, home, port, time.Second)

	out, errOut, code := runHL(t, "", "tabs")
	if code != exitNoBrowser || !strings.Contains(out, "✗ BrowserTabs") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"port " + strconv.Itoa(port) + " on 127.0.0.1 is in use by a program that is not one of your infers", "infer doctor"} {
		if !strings.Contains(out+errOut, want) {
			t.Errorf("the run does not say %q:\nstdout:\n%s\nstderr:\n%s", want, out, errOut)
		}
	}
	if strings.Contains(errOut, "--port") {
		t.Errorf("stderr still advises --port:\n%s", errOut)
	}
	out, errOut, code = runHL(t, "", "--no-bridge", "tabs")
	// Only a machine without a sandbox may add a line, and it says so.
	var other []string
	for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if line != "" && !strings.HasPrefix(line, "infer: warning: No sandbox is available") {
			other = append(other, line)
		}
	}
	if code != 0 || len(other) != 0 || !strings.Contains(out, "✗ BrowserTabs") {
		t.Fatalf("--no-bridge: exit %d\nstderr:\n%s", code, errOut)
	}
}

// TestServeStandsByAndTakesOver: a second `infer serve` beside one that
// holds the bridge stands by, saying whose browser it uses, and takes the
// port over when the first one stops; the extension then connects to it.
func TestServeStandsByAndTakesOver(t *testing.T) {
	t.Parallel()
	home, _ := hlProject(t)
	port := freePort(t)
	token := withBridge(t, home, port)
	first := runInProcess(t, "serve")
	first.stdout.waitFor(t, regexp.MustCompile(`listening on`))
	ext := simExtension(t, port, token)
	ctx, cancel := context.WithTimeout(context.Background(), hlGuard)
	defer cancel()
	if err := ext.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}

	second := runInProcess(t, "serve")
	second.stdout.waitFor(t, regexp.MustCompile(`standing by: this infer uses the browser of infer serve in .* \(pid \d+\), and takes the port over when that one stops`))
	first.stop()
	second.stderr.waitFor(t, regexp.MustCompile(`taking it over`))
	second.stderr.waitFor(t, regexp.MustCompile(`this infer holds the bridge`))
	guard := time.After(hlGuard)
	for ext.Connects() < 2 || !ext.Connected() {
		select {
		case <-guard:
			t.Fatalf("the extension did not connect to the infer that took over (%d connections)\n%s", ext.Connects(), second.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestMCPThroughServeSaysWhenServeStops: `infer mcp` going through serve
// no longer ends silently with status 0 when serve stops; it says so.
func TestMCPThroughServeSaysWhenServeStops(t *testing.T) {
	t.Parallel()
	home, _ := hlProject(t)
	port := freePort(t)
	token := withBridge(t, home, port)
	serve := runInProcess(t, "serve")
	serve.stdout.waitFor(t, regexp.MustCompile(`listening on`))
	extension(t, port, token, &sim.Minimal{})

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		err := runMCP(ctx, inR, outW, slog.New(slog.DiscardHandler), 0, false)
		outW.CloseWithError(io.EOF)
		inR.Close()
		done <- err
	}()
	cctx, ccancel := context.WithTimeout(ctx, mcpGuard)
	defer ccancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil).Connect(cctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res, text := callMCP(t, cs, "browser_tabs", nil); res.IsError || text == "" {
		t.Fatalf("tabs through serve: %v %q", res.IsError, text)
	}
	serve.stop()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "the infer these calls went through stopped") {
			t.Fatalf("infer mcp ended with %v, want it to say that serve stopped", err)
		}
	case <-time.After(mcpGuard):
		t.Fatal("infer mcp did not end when serve stopped")
	}
}

// TestTmuxTwoWorkspacesShareTheBrowser: a second `infer` in another
// project opens (instead of exiting on the busy port) with a banner
// naming the infer whose browser it uses, and both reach the browser.
func TestTmuxTwoWorkspacesShareTheBrowser(t *testing.T) {
	t.Parallel()
	needTmux(t)
	infer, simBin := inferBinary(t), simBinary(t)
	d := newTmuxDirs(t)
	port := freePort(t)
	initCmd := exec.Command(infer, "init", "--port", strconv.Itoa(port))
	initCmd.Env = d.env
	if out, err := initCmd.CombinedOutput(); err != nil {
		t.Fatalf("infer init: %v\n%s", err, out)
	}
	bu, _, err := config.LoadBrowserUse(config.BrowserUsePath(d.home))
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(d.base, "other-project")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}

	first := startTmux(t, d.project, d.env, filepath.Join(d.base, "exit-first"), infer, "--model", "offline/demo")
	first.waitFor("Message the agent", "○ waiting for the browser extension")
	simLog, err := os.Create(filepath.Join(d.base, "infer-sim.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer simLog.Close()
	simCmd := exec.Command(simBin, "--port", strconv.Itoa(port), "--token", bu.Extension.Token)
	simCmd.Env, simCmd.Stdout, simCmd.Stderr = d.env, simLog, simLog
	if err := simCmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { simCmd.Process.Kill(); simCmd.Wait() })
	defer func() {
		if t.Failed() {
			logs, _ := os.ReadFile(filepath.Join(d.state, "infer", "infer.log"))
			t.Logf("infer's log:\n%s", logs)
		}
	}()
	first.waitFor("● connected · extension")

	second := startTmux(t, other, d.env, filepath.Join(d.base, "exit-second"), infer, "--model", "offline/demo")
	sc := second.waitUntil("the banner of the second infer", func(sc string) bool {
		return strings.Contains(flat(sc), "This infer uses the browser of infer in")
	})
	if !strings.Contains(flat(sc), "it takes the port over when that") {
		t.Errorf("the banner does not say what happens when the first infer stops:\n%s", sc)
	}
	second.waitFor("● connected · extension")

	for name, tm := range map[string]*tmuxScreen{"first": first, "second": second} {
		tm.typeLine("tabs")
		tm.waitUntil(name+"'s browser call", func(sc string) bool {
			return strings.Contains(sc, "✓ BrowserTabs") && strings.Contains(sc, "Done.")
		})
	}
}

// mcpWithLog is mcpClient with infer mcp's log kept for the test to read.
func mcpWithLog(t *testing.T, port int) (*mcp.ClientSession, *hlBuffer) {
	t.Helper()
	logs := newHLBuffer()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(testContext(t))
	done := make(chan error, 1)
	go func() {
		err := runMCP(ctx, inR, outW, slog.New(slog.NewTextHandler(logs, nil)), port, true)
		outW.CloseWithError(io.EOF)
		inR.Close()
		done <- err
	}()
	cctx, ccancel := context.WithTimeout(ctx, mcpGuard)
	defer ccancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "one-shot", Version: "1"}, nil).Connect(cctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v (infer mcp: %v)", err, <-done)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return cs, logs
}

// TestMCPStandaloneWaitsAndShares: a one-shot MCP client's first call,
// made before the extension has redialled, waits for it instead of
// getting "No browser is connected"; a second standalone infer mcp uses
// the first one's browser instead of failing on the busy port.
func TestMCPStandaloneWaitsAndShares(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	_, token := mcpHome(t, port, "")
	first, logs := mcpWithLog(t, port)
	type answer struct {
		isErr bool
		text  string
	}
	got := make(chan answer, 1)
	go func() {
		res, text := callMCP(t, first, "browser_tabs", nil)
		got <- answer{res.IsError, text}
	}()
	logs.waitFor(t, regexp.MustCompile(`a call waits for the extension to connect`))
	extension(t, port, token, &sim.Minimal{})
	if a := <-got; a.isErr || !strings.Contains(a.text, "1 open tab") {
		t.Fatalf("the one-shot call: %v %q", a.isErr, a.text)
	}

	second, logs2 := mcpWithLog(t, port)
	logs2.waitFor(t, regexp.MustCompile(`using the browser of infer mcp in`))
	if res, text := callMCP(t, second, "browser_tabs", nil); res.IsError || !strings.Contains(text, "1 open tab") {
		t.Fatalf("tabs through the first infer mcp: %v %q", res.IsError, text)
	}
}
