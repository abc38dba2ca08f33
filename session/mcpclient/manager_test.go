package mcpclient

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/internal/mcptest"
	"github.com/infer-workspace/infer/internal/testreq"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/netproxy"
	"github.com/infer-workspace/infer/session/sandbox"
	"github.com/infer-workspace/infer/session/tools"
)

func TestMain(m *testing.M) {
	// First: the forwarder runs sandboxed servers, and inherits their
	// environment, ServeEnv included.
	netproxy.MaybeForward()
	mcptest.MaybeServe()
	goleak.VerifyTestMain(m)
}

// guard bounds every wait on an event; machines are slow, never this slow.
const guard = 60 * time.Second

// stdio is a server that runs this test binary as mcptest's server.
func stdio(t *testing.T, extra map[string]string) config.MCPServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{mcptest.ServeEnv: "stdio"}
	for k, v := range extra {
		env[k] = v
	}
	return config.MCPServerConfig{Command: exe, Env: env}
}

func start(t *testing.T, opts Options) *Manager {
	t.Helper()
	return startWithin(t, opts, guard)
}

// startWithin is start with its own hang guard, for servers whose start
// is slow by nature (npx installing a package tree on a loaded machine).
func startWithin(t *testing.T, opts Options, bound time.Duration) *Manager {
	t.Helper()
	if opts.Root == "" {
		opts.Root = t.TempDir()
	}
	m := Start(opts)
	t.Cleanup(func() { m.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		t.Fatalf("servers still starting: %+v", m.Statuses())
	}
	return m
}

func status(t *testing.T, m *Manager, name string) Status {
	t.Helper()
	for _, s := range m.Statuses() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no server %s", name)
	return Status{}
}

// waitState waits, on Changed, until the server reaches st.
func waitState(t *testing.T, m *Manager, name string, st State) Status {
	t.Helper()
	deadline := time.After(guard)
	for {
		ch := m.Changed()
		if s := status(t, m, name); s.State == st {
			return s
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%s never became %s: %+v", name, st, status(t, m, name))
		}
	}
}

func pipeline(t *testing.T, m *Manager, appr tools.Approver) (*tools.Pipeline, *tools.Env) {
	env := &tools.Env{Root: t.TempDir(), ArtifactsDir: t.TempDir()}
	return tools.NewPipeline(tools.PipelineConfig{Env: env, Approver: appr, Sources: []tools.Source{m}}), env
}

func call(p *tools.Pipeline, name, args string, mode tools.Mode) tools.Outcome {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	return p.Run(ctx, tools.Call{ID: "c", Name: name, Args: args}, mode)
}

func TestStdioServerStartsListsAndCalls(t *testing.T) {
	t.Parallel()
	m := start(t, Options{Servers: map[string]config.MCPServerConfig{"t": stdio(t, nil)}})
	st := status(t, m, "t")
	if st.State != Ready || st.Transport != "stdio" {
		t.Fatalf("status = %+v", st)
	}
	var names []string
	for _, ti := range st.Tools {
		names = append(names, ti.Name)
	}
	if got := strings.Join(names, ","); got != "mcp__t__add,mcp__t__crash,mcp__t__echo,mcp__t__env,mcp__t__fail,mcp__t__fetch,mcp__t__grow,mcp__t__image,mcp__t__resource,mcp__t__sleep,mcp__t__write" {
		t.Fatalf("tools = %s", got)
	}
	p, env := pipeline(t, m, nil)
	found := false
	for _, s := range p.Specs() {
		if s.Name == "mcp__t__echo" {
			found = strings.Contains(s.Description, "[MCP server t]") && strings.Contains(string(s.Parameters), `"text"`)
		}
	}
	if !found {
		t.Fatal("the model is not offered mcp__t__echo with its schema")
	}

	if o := call(p, "mcp__t__echo", `{"text":"hi"}`, tools.Auto); !o.Success || o.Output != "echo: hi" {
		t.Fatalf("echo: %+v", o)
	}
	o := call(p, "mcp__t__image", `{}`, tools.Auto)
	if !o.Success || len(o.Images) != 1 || string(o.Images[0].Data) != string(mcptest.PNG) || len(o.Artifacts) != 1 || !strings.Contains(o.Output, "![image from t](/artifacts/mcp/") {
		t.Fatalf("image: %+v", o)
	}
	if _, err := os.Stat(filepath.Join(env.ArtifactsDir, filepath.FromSlash(o.Artifacts[0]))); err != nil {
		t.Fatalf("image artifact: %v", err)
	}
	if o := call(p, "mcp__t__resource", ``, tools.Auto); !o.Success || !strings.Contains(o.Output, "Resource file:///notes.txt:\nthe notes") || !strings.Contains(o.Output, "Resource doc: https://example.com/doc") {
		t.Fatalf("resource: %+v", o)
	}
	if o := call(p, "mcp__t__fail", `{}`, tools.Auto); o.Success || !strings.Contains(o.Output, "wrong on purpose") {
		t.Fatalf("fail: %+v", o)
	}
	if o := call(p, "mcp__t__nope", `{}`, tools.Auto); o.Ran || !strings.Contains(o.Output, "has no tool \"nope\"") {
		t.Fatalf("unknown tool: %+v", o)
	}

	// A server that says its tools changed is asked for them again.
	ch := m.Changed()
	if o := call(p, "mcp__t__grow", `{}`, tools.Auto); !o.Success {
		t.Fatalf("grow: %+v", o)
	}
	deadline := time.After(guard)
	for len(status(t, m, "t").Tools) != 12 {
		select {
		case <-ch:
			ch = m.Changed()
		case <-deadline:
			t.Fatalf("the new tool was never listed: %+v", status(t, m, "t"))
		}
	}
	if o := call(p, "mcp__t__grown", `{}`, tools.Auto); o.Output != "grown" {
		t.Fatalf("grown: %+v", o)
	}
}

// approver answers every request with d and counts them.
type approver struct {
	d    tools.Decision
	reqs []tools.ApprovalRequest
}

func (a *approver) Approve(_ context.Context, r tools.ApprovalRequest) (tools.Decision, error) {
	a.reqs = append(a.reqs, r)
	return a.d, nil
}

func TestCallsAskFirst(t *testing.T) {
	t.Parallel()
	m := start(t, Options{Servers: map[string]config.MCPServerConfig{"t": stdio(t, nil)}})
	appr := &approver{d: tools.Decision{Kind: tools.Deny, Reason: "not now"}}
	p, _ := pipeline(t, m, appr)
	o := call(p, "mcp__t__echo", `{"text":"x"}`, tools.Standard)
	if o.Ran || !o.Denied || len(appr.reqs) != 1 || !strings.Contains(appr.reqs[0].Why, "MCP server t") {
		t.Fatalf("denied: %+v, requests %+v", o, appr.reqs)
	}
	appr.d = tools.Decision{Kind: tools.AllowOnce}
	if o := call(p, "mcp__t__echo", `{"text":"x"}`, tools.Standard); !o.Success || o.Approval != "approved by the person" {
		t.Fatalf("approved: %+v", o)
	}
	if o := call(p, "mcp__t__write", `{"path":"x","text":"y"}`, tools.Plan); o.Ran || !strings.Contains(o.Output, "plan mode") {
		t.Fatalf("plan write: %+v", o)
	}
}

func TestCrashedServerShowsAndStartsAgain(t *testing.T) {
	t.Parallel()
	m := start(t, Options{Servers: map[string]config.MCPServerConfig{"t": stdio(t, nil)}})
	p, _ := pipeline(t, m, nil)
	o := call(p, "mcp__t__crash", `{}`, tools.Auto)
	if o.Success {
		t.Fatalf("crash call succeeded: %+v", o)
	}
	st := waitState(t, m, "t", Crashed)
	if !strings.Contains(st.Err, "crashing as asked") || !strings.Contains(st.Err, "next call starts it again") {
		t.Fatalf("crash status: %+v", st)
	}
	if txt, warn := Summary(m.Statuses()); txt != "mcp: 1 crashed" || !warn {
		t.Fatalf("summary %q %v", txt, warn)
	}
	if len(m.Tools()) != 0 {
		t.Fatal("a crashed server's tools are still offered")
	}
	if o := call(p, "mcp__t__echo", `{"text":"back"}`, tools.Auto); !o.Success || o.Output != "echo: back" {
		t.Fatalf("after restart: %+v", o)
	}
	if st := status(t, m, "t"); st.State != Ready {
		t.Fatalf("after restart: %+v", st)
	}
	// /mcp restart: a running server is stopped and started again.
	if err := m.Restart("nope"); err == nil {
		t.Fatal("restarting an unknown server worked")
	}
	ch := m.Changed()
	if err := m.Restart("t"); err != nil {
		t.Fatal(err)
	}
	<-ch
	waitState(t, m, "t", Ready)
	if o := call(p, "mcp__t__echo", `{"text":"again"}`, tools.Auto); !o.Success {
		t.Fatalf("after /mcp restart: %+v", o)
	}
}

func TestHangingCallTimesOutAndServerStays(t *testing.T) {
	t.Parallel()
	cfg := stdio(t, nil)
	cfg.Timeout = config.Duration(time.Second)
	m := start(t, Options{Servers: map[string]config.MCPServerConfig{"t": cfg}})
	p, _ := pipeline(t, m, nil)
	o := call(p, "mcp__t__sleep", `{"ms":600000}`, tools.Auto)
	if !o.TimedOut || o.Success {
		t.Fatalf("hang: %+v", o)
	}
	if o := call(p, "mcp__t__echo", `{"text":"still here"}`, tools.Auto); !o.Success {
		t.Fatalf("after the hang: %+v", o)
	}
}

func TestServersThatFailToStart(t *testing.T) {
	t.Parallel()
	hang := stdio(t, map[string]string{mcptest.HangStartEnv: "1"})
	hang.StartTimeout = config.Duration(time.Second)
	fail := stdio(t, map[string]string{mcptest.FailStartEnv: "missing API_TOKEN"})
	m := start(t, Options{Servers: map[string]config.MCPServerConfig{
		"hang": hang, "fail": fail,
		"nocmd": {Command: filepath.Join(t.TempDir(), "no-such-server")},
		"off":   {Command: "x", Disabled: true},
		"ok":    stdio(t, nil),
	}})
	if st := status(t, m, "hang"); st.State != Failed || !strings.Contains(st.Err, "did not answer within 1s") {
		t.Fatalf("hang: %+v", st)
	}
	if st := status(t, m, "fail"); st.State != Failed || !strings.Contains(st.Err, "missing API_TOKEN") {
		t.Fatalf("fail: %+v", st)
	}
	if st := status(t, m, "nocmd"); st.State != Failed || !strings.Contains(st.Err, "no-such-server") {
		t.Fatalf("nocmd: %+v", st)
	}
	if st := status(t, m, "off"); st.State != Disabled {
		t.Fatalf("off: %+v", st)
	}
	// A turn still has the working server's tools, and a call to a failed
	// one says why at once.
	p, _ := pipeline(t, m, nil)
	if o := call(p, "mcp__ok__echo", `{"text":"x"}`, tools.Auto); !o.Success {
		t.Fatalf("ok: %+v", o)
	}
	if o := call(p, "mcp__hang__echo", `{}`, tools.Auto); o.Ran || !strings.Contains(o.Output, "not running (failed") {
		t.Fatalf("call to failed: %+v", o)
	}
}

func TestStartingServerIsWaitedFor(t *testing.T) {
	t.Parallel()
	m := Start(Options{Root: t.TempDir(), Servers: map[string]config.MCPServerConfig{"t": stdio(t, nil)}})
	defer m.Close()
	// No Wait: the call right after start waits for the server.
	p, _ := pipeline(t, m, nil)
	if o := call(p, "mcp__t__add", `{"a":2,"b":3}`, tools.Auto); !o.Success || o.Output != "5" {
		t.Fatalf("add: %+v", o)
	}
}

func TestSecretsAreNotInherited(t *testing.T) {
	t.Setenv("INFER_TEST_SECRET", "s3cret")
	t.Setenv("INFER_TEST_PLAIN", "plain")
	m := start(t, Options{
		SecretEnv: []string{"INFER_TEST_SECRET"},
		Servers:   map[string]config.MCPServerConfig{"t": stdio(t, map[string]string{"GIVEN": "${INFER_TEST_PLAIN}-x"})},
	})
	p, _ := pipeline(t, m, nil)
	for args, want := range map[string]string{
		`{"name":"INFER_TEST_SECRET"}`: "INFER_TEST_SECRET is not set",
		`{"name":"INFER_TEST_PLAIN"}`:  "INFER_TEST_PLAIN=plain",
		`{"name":"GIVEN"}`:             "GIVEN=plain-x",
	} {
		if o := call(p, "mcp__t__env", args, tools.Auto); o.Output != want {
			t.Errorf("%s: %q, want %q", args, o.Output, want)
		}
	}
}

func TestHTTPServer(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(mcptest.HTTPHandler("Authorization", "Bearer tok-123"))
	t.Cleanup(srv.Close) // after the manager's own cleanup: it holds a stream open
	env := map[string]string{"MCP_TOKEN": "tok-123"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	m := start(t, Options{LookupEnv: lookup, Servers: map[string]config.MCPServerConfig{
		"web":      {URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer ${MCP_TOKEN}"}},
		"nokey":    {URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer ${MISSING_TOKEN}"}},
		"wrongkey": {URL: srv.URL},
	}})
	if st := status(t, m, "web"); st.State != Ready || st.Transport != "http" || len(st.Tools) == 0 {
		t.Fatalf("web: %+v", st)
	}
	if st := status(t, m, "nokey"); st.State != Failed || !strings.Contains(st.Err, "MISSING_TOKEN is not set") {
		t.Fatalf("nokey: %+v", st)
	}
	if st := status(t, m, "wrongkey"); st.State != Failed {
		t.Fatalf("wrongkey: %+v", st)
	}
	p, _ := pipeline(t, m, nil)
	if o := call(p, "mcp__web__echo", `{"text":"over http"}`, tools.Auto); !o.Success || o.Output != "echo: over http" {
		t.Fatalf("http echo: %+v", o)
	}
}

func TestSandboxedServer(t *testing.T) {
	sb := sandbox.Detect()
	testreq.Check(t, testreq.Bubblewrap, sb.Confines(), sb.Problem())
	root, outside := t.TempDir(), t.TempDir()
	// The sandbox gives the server a private /tmp, where the test binary
	// lives: run a copy from inside the project.
	exe, _ := os.Executable()
	copyFile(t, exe, filepath.Join(root, "server"))
	cfg := stdio(t, nil)
	cfg.Command = filepath.Join(root, "server")
	cfg.Env["GIVEN"] = "given-to-it"
	free := cfg
	free.Sandbox = new(bool)
	t.Setenv("DATABASE_URL", "postgres://u:db-secret@h/db")
	t.Setenv("INFER_TEST_LISTED", "listed")
	m := start(t, Options{Root: root, Sandbox: sb, Confine: sandbox.Policy{Network: true, Env: []string{"INFER_TEST_LISTED"}}, Servers: map[string]config.MCPServerConfig{"box": cfg, "free": free}})
	if st := status(t, m, "box"); st.State != Ready || !st.Sandboxed {
		t.Fatalf("box: %+v", st)
	}
	if st := status(t, m, "free"); st.State != Ready || st.Sandboxed {
		t.Fatalf("free: %+v", st)
	}
	p, _ := pipeline(t, m, nil)
	// Confined, the server inherits what confined commands do (the list
	// and sandbox.env) and what its own env entries give it.
	for server, want := range map[string]map[string]string{
		"box":  {"DATABASE_URL": "DATABASE_URL is not set", "INFER_TEST_LISTED": "INFER_TEST_LISTED=listed", "GIVEN": "GIVEN=given-to-it"},
		"free": {"DATABASE_URL": "DATABASE_URL=postgres://u:db-secret@h/db", "GIVEN": "GIVEN=given-to-it"},
	} {
		for name, w := range want {
			if o := call(p, "mcp__"+server+"__env", `{"name":"`+name+`"}`, tools.Auto); o.Output != w {
				t.Errorf("%s's %s: %q, want %q", server, name, o.Output, w)
			}
		}
	}
	if o := call(p, "mcp__box__write", `{"path":"`+filepath.Join(root, "in.txt")+`","text":"x"}`, tools.Auto); !o.Success {
		t.Fatalf("write inside: %+v", o)
	}
	if o := call(p, "mcp__box__write", `{"path":"`+filepath.Join(outside, "out.txt")+`","text":"x"}`, tools.Auto); o.Success {
		t.Fatalf("the sandboxed server wrote outside the project: %+v", o)
	}
	if o := call(p, "mcp__free__write", `{"path":"`+filepath.Join(outside, "out.txt")+`","text":"x"}`, tools.Auto); !o.Success {
		t.Fatalf("the opted-out server could not write: %+v", o)
	}
	none := Start(Options{Root: root, Sandbox: sandbox.Unavailable(io.EOF), Servers: map[string]config.MCPServerConfig{"box": cfg}})
	defer none.Close()
	if st := waitState(t, none, "box", Failed); !strings.Contains(st.Err, "sandbox: false under mcp.servers.box") {
		t.Fatalf("no sandbox: %+v", st)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}
