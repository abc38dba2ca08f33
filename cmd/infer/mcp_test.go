package main

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/infer-workspace/infer/internal/testreq"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/mcpserver"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/tools/grants"
	"github.com/infer-workspace/infer/sim"
	"github.com/infer-workspace/infer/sim/chrome"
	"github.com/infer-workspace/infer/sim/fakebrowser"
)

// mcpGuard bounds every wait of these tests.
const mcpGuard = 60 * time.Second

// mcpClient runs `infer mcp` in this process on pipes, the way an agent
// runs it on stdio, with home and wd for its home and working directory
// ("" keeps the process's own), and connects the SDK's client to it.
func mcpClient(t *testing.T, home, wd string, port int) *mcp.ClientSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	if home == "" && wd == "" {
		at := testWhere(t)
		home, wd = at.home, at.wd
	}
	ctx, cancel := context.WithCancel(inDirs(context.Background(), home, wd))
	done := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() {
		err := runMCP(ctx, inR, outW, log, port, port != 0)
		outW.CloseWithError(io.EOF)
		inR.Close()
		done <- err
	}()
	cctx, ccancel := context.WithTimeout(ctx, mcpGuard)
	defer ccancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil).Connect(cctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v (infer mcp: %v)", err, <-done)
	}
	t.Cleanup(func() {
		cs.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("infer mcp: %v", err)
			}
		case <-time.After(mcpGuard):
			t.Error("infer mcp did not end when its client left")
		}
		cancel()
	})
	return cs
}

// extension connects a simulated extension with browser b to the bridge
// on port of home's browser_use.yaml.
func extension(t *testing.T, port int, token string, b sim.Browser) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := sim.NewClient(sim.ClientOptions{URL: "ws://127.0.0.1:" + strconv.Itoa(port) + "/ws", Token: token, Browser: b, MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	wctx, wcancel := context.WithTimeout(ctx, mcpGuard)
	defer wcancel()
	if err := c.WaitConnected(wctx); err != nil {
		t.Fatalf("the extension did not connect: %v", err)
	}
}

func callMCP(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mcpGuard)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return res, strings.Join(text, "\n")
}

func imageOf(res *mcp.CallToolResult) *mcp.ImageContent {
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			return ic
		}
	}
	return nil
}

// mcpHome makes a home with the bridge on port and config.yaml holding
// cfg, and a project to work in.
func mcpHome(t *testing.T, port int, cfg string) (home, token string) {
	home, _ = hlProject(t)
	token = withBridge(t, home, port)
	if cfg != "" {
		if err := os.WriteFile(config.ConfigPath(home), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home, token
}

// Standalone, infer mcp hosts the bridge and, with nobody to ask, runs
// read-only tools and refuses the rest in standard mode.
func TestMCPServerStandaloneAgainstInferSim(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	home, token := mcpHome(t, port, "")
	fb, err := fakebrowser.New(fakebrowser.Options{Hosts: map[string]http.Handler{"site.test": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `<html><head><title>Site</title></head><body><h1>Hello from the site</h1><input type=password name=pw value=hunter2></body></html>`)
	})}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fb.Close() })
	cs := mcpClient(t, "", "", port)
	extension(t, port, token, fb)

	ctx, cancel := context.WithTimeout(context.Background(), mcpGuard)
	defer cancel()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
		if tl.Name == "browser_read" && (tl.Annotations == nil || !tl.Annotations.ReadOnlyHint) {
			t.Error("browser_read is not marked read-only")
		}
	}
	if got := strings.Join(names, ","); got != "browser_click,browser_navigate,browser_read,browser_screenshot,browser_tabs,browser_type" {
		t.Fatalf("tools = %s", got)
	}
	res, text := callMCP(t, cs, "browser_navigate", map[string]any{"url": "http://site.test/"})
	if !res.IsError || !strings.Contains(text, "no one can approve it") {
		t.Fatalf("navigate in standard mode with nobody to ask: %v %q", res.IsError, text)
	}
	if res, text := callMCP(t, cs, "browser_tabs", nil); res.IsError || !strings.Contains(text, "1 open tab") {
		t.Fatalf("tabs: %v %q", res.IsError, text)
	}
	// A saved "always allow" is the person's policy too.
	root, _ := config.ProjectRoot(testWhere(t).wd)
	gs, err := grants.Open(filepath.Join(config.ProjectDir(home, root), "grants.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gs.Add(grants.Grant{Kind: grants.KindSite, Tool: "BrowserNavigate", Site: "http://site.test"}); err != nil {
		t.Fatal(err)
	}
	if res, text := callMCP(t, cs, "browser_navigate", map[string]any{"url": "http://site.test/"}); res.IsError || !strings.Contains(text, "Site") {
		t.Fatalf("navigate with a saved grant: %v %q", res.IsError, text)
	}
	if res, text := callMCP(t, cs, "browser_read", nil); res.IsError || !strings.Contains(text, "Hello from the site") || strings.Contains(text, "hunter2") {
		t.Fatalf("read: %v %q", res.IsError, text)
	}
	if res, text := callMCP(t, cs, "browser_screenshot", nil); res.IsError || imageOf(res) == nil {
		t.Fatalf("screenshot: %v %q", res.IsError, text)
	}
}

// With mcp.standalone.mode: auto every tool runs: a page is opened, read
// with infer's redaction, and photographed, in the fake browser and in
// real Chromium.
func TestE2EMCPServerDrivesTheBrowser(t *testing.T) {
	t.Parallel()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `<html><head><title>MCP e2e</title></head><body><h1>Reached through MCP</h1><input type=password name=pw value=hunter2></body></html>`)
	}))
	defer site.Close()
	for _, name := range []string{"fake", "chromium"} {
		t.Run(name, func(t *testing.T) {
			var b sim.Browser
			if name == "fake" {
				fb, err := fakebrowser.New(fakebrowser.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { fb.Close() })
				b = fb
			} else {
				testreq.Program(t, testreq.Chromium)
				cb, err := chrome.New(context.Background(), chrome.Options{})
				if err != nil {
					t.Fatalf("starting Chromium: %v", err)
				}
				t.Cleanup(func() { cb.Close() })
				b = cb
			}
			port := freePort(t)
			_, token := mcpHome(t, port, "mcp:\n  standalone:\n    mode: auto\n")
			cs := mcpClient(t, "", "", port)
			extension(t, port, token, b)
			if res, text := callMCP(t, cs, "browser_navigate", map[string]any{"url": site.URL}); res.IsError || !strings.Contains(text, "MCP e2e") {
				t.Fatalf("navigate: %v %q", res.IsError, text)
			}
			res, text := callMCP(t, cs, "browser_read", nil)
			if res.IsError || !strings.Contains(text, "Reached through MCP") || strings.Contains(text, "hunter2") {
				t.Fatalf("read: %v %q", res.IsError, text)
			}
			res, _ = callMCP(t, cs, "browser_screenshot", nil)
			img := imageOf(res)
			if res.IsError || img == nil || img.MIMEType != "image/png" {
				t.Fatalf("screenshot: %+v", res)
			}
			if _, err := png.Decode(bytes.NewReader(img.Data)); err != nil {
				t.Fatalf("the screenshot is not a PNG: %v", err)
			}
		})
	}
}

// With infer serve running for the home, infer mcp goes through it: the
// call shows in its conversation's notices, asks in its approvals, and
// runs once the person approves.
func TestMCPServerThroughInferServe(t *testing.T) {
	t.Parallel()
	s := serveInProcess(t, "", "")
	if fi, err := os.Stat(mcpserver.SocketPath(s.home)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket: %v %v", fi, err)
	}
	sub := s.app.Workspace.Subscribe()
	defer sub.Close()
	cs := mcpClient(t, s.home, s.project, 0)

	// A read-only tool runs at once, and the chat shows who called it.
	if res, text := callMCP(t, cs, "browser_tabs", nil); res.IsError || text == "" {
		t.Fatalf("tabs: %v %q", res.IsError, text)
	}
	waitEvent(t, sub, func(e session.Event) bool {
		o, ok := e.(session.OutsideCall)
		return ok && o.Done && o.Name == "BrowserTabs" && o.Origin == tools.OriginMCP
	})

	// A navigation asks the person; approved, it runs.
	type answer struct {
		res  *mcp.CallToolResult
		text string
	}
	got := make(chan answer, 1)
	go func() {
		res, text := callMCP(t, cs, "browser_navigate", map[string]any{"url": "https://example.com/"})
		got <- answer{res, text}
	}()
	ev := waitEvent(t, sub, func(e session.Event) bool { _, ok := e.(session.ApprovalOpened); return ok }).(session.ApprovalOpened)
	if ev.Approval.Call.Name != "BrowserNavigate" || ev.Approval.Call.Origin != tools.OriginMCP {
		t.Fatalf("approval: %+v", ev.Approval)
	}
	if !s.app.Workspace.Answer(ev.Approval.ID, tools.Decision{Kind: tools.AllowOnce}, tools.OriginTerminal) {
		t.Fatal("the approval was not pending")
	}
	select {
	case a := <-got:
		if a.res.IsError || !strings.Contains(a.text, "example.com") {
			t.Fatalf("navigate: %v %q", a.res.IsError, a.text)
		}
	case <-time.After(mcpGuard):
		t.Fatal("the approved call did not finish")
	}

	// A client with the wrong token is refused.
	c, err := net.Dial("unix", mcpserver.SocketPath(s.home))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, `{"token":"wrong"}`+"\n")
	reply, _ := io.ReadAll(io.LimitReader(c, 200))
	if !strings.Contains(string(reply), "wrong or missing token") {
		t.Fatalf("wrong token got %q", reply)
	}
}

// The real `infer mcp` process speaks MCP on stdio.
func TestMCPServerBinaryOnStdio(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	home, _ := mcpHome(t, port, "")
	cmd := exec.Command("infer", "mcp")
	cmd.Env = append(os.Environ(), config.HomeEnv+"="+home)
	cmd.Dir = testWhere(t).wd
	stderr := newHLBuffer() // written by the process's copier while the test reads
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), mcpGuard)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 6 {
		t.Fatalf("tools: %v %v", lt, err)
	}
	stderr.waitFor(t, regexp.MustCompile(`hosting the browser bridge`))
}

func waitEvent(t *testing.T, sub *session.Subscription, match func(session.Event) bool) session.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mcpGuard)
	defer cancel()
	for {
		e, err := sub.Next(ctx)
		if err != nil {
			t.Fatal("the event never came")
		}
		if match(e) {
			return e
		}
	}
}
