package mcpclient

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/internal/npmregistry"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/sandbox"
	"github.com/infer-workspace/infer/session/tools"
)

// everythingTree is where .ci/run installs @modelcontextprotocol/server-everything
// (npm install --prefix); INFER_TEST_NPM_EVERYTHING names another.
func everythingTree() string {
	if d := os.Getenv("INFER_TEST_NPM_EVERYTHING"); d != "" {
		return d
	}
	return "/var/cache/infer-test/npm-everything"
}

// require skips the test outside CI when something it needs is missing,
// and fails it under CI (CI=true), where .ci/run installs everything, so
// a broken install cannot pass unseen.
func require(t *testing.T, ok bool, why string) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; .ci/run installs it", why)
	}
	t.Skip(why)
}

// TestNpxServerStartsSandboxedOnceItsRegistryIsAllowed runs the real
// `npx -y @modelcontextprotocol/server-everything` as a sandboxed server,
// as a person would configure it, with a fresh home (read-only inside, as
// the person's is) and an empty cache.
// npx downloads the server from the registry, which here is a loopback
// registry (127.0.0.2, standing for registry.npmjs.org) serving the tree
// .ci/run installed. With nobody to ask, an ungranted registry is refused
// and the error says which host and how to allow it; once network.allow
// lists it, npx downloads into the cache infer gave the server, and the
// server answers.
func TestNpxServerStartsSandboxedOnceItsRegistryIsAllowed(t *testing.T) {
	t.Parallel()
	sb := sandbox.Detect()
	require(t, sb.Kind() == sandbox.Bubblewrap, "the network proxy needs bubblewrap")
	_, err := exec.LookPath("npx")
	require(t, err == nil, "npx is not installed")
	_, err = os.Stat(filepath.Join(everythingTree(), "node_modules", "@modelcontextprotocol", "server-everything", "package.json"))
	require(t, err == nil, "@modelcontextprotocol/server-everything is not installed in "+everythingTree())

	reg, err := npmregistry.Serve(everythingTree(), "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()

	root := t.TempDir()
	// A fresh home, outside the project and /tmp, so read-only inside as
	// the person's own is: npx cannot use its ~/.npm there.
	home, err := os.MkdirTemp(filepath.Dir(everythingTree()), "home-")
	require(t, err == nil, fmt.Sprintf("no fresh home beside the installed tree: %v", err))
	defer os.RemoveAll(home)
	cache := t.TempDir()
	cfg := config.MCPServerConfig{
		Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"},
		Env:          map[string]string{"HOME": home, "npm_config_registry": reg.URL, "npm_config_update_notifier": "false"},
		StartTimeout: config.Duration(3 * time.Minute),
	}
	run := func(allow []string) *Manager {
		// The decider an infer without a terminal gives (serve, headless,
		// infer mcp): network.allow, and nobody to ask.
		gate := tools.NewPipeline(tools.PipelineConfig{Env: &tools.Env{NetAllow: allow}})
		// A hang guard past the server's own start timeout: npx installs
		// a tree of some hundred packages, which on a loaded machine has
		// taken more than the other tests' minute.
		return startWithin(t, Options{Root: root, Sandbox: sb, Confine: sandbox.Policy{Network: true}, CacheDir: cache,
			Network: gate.NetworkDecider, Servers: map[string]config.MCPServerConfig{"everything": cfg}}, time.Duration(cfg.StartTimeout)+time.Minute)
	}

	m := run(nil)
	st := status(t, m, "everything")
	if st.State != Failed || !st.Sandboxed {
		t.Fatalf("with its registry not allowed, the server: %+v", st)
	}
	if reg.Requests() != 0 {
		t.Fatalf("the registry was reached %d times although not allowed", reg.Requests())
	}
	if !strings.Contains(st.Err, "infer blocked the connection to "+reg.Host) || !strings.Contains(st.Err, "network.allow") {
		t.Fatalf("the error does not name the registry and how to allow it: %s", st.Err)
	}
	t.Log("the error the person sees: ", st.Err)
	m.Close()

	m = run([]string{reg.Host})
	st = status(t, m, "everything")
	if st.State != Ready || !st.Sandboxed {
		t.Fatalf("with its registry allowed, the server: %+v", st)
	}
	p, _ := pipeline(t, m, nil)
	if o := call(p, "mcp__everything__echo", `{"message":"through the sandbox"}`, tools.Auto); o.Output != "Echo: through the sandbox" {
		t.Fatalf("echo: %+v", o)
	}
	if reg.Requests() == 0 {
		t.Fatal("the server started without asking the registry")
	}
	if _, err := os.Stat(filepath.Join(cache, "everything", "npm", "_npx")); err != nil {
		t.Fatalf("npx did not download into the server's own cache: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, ".npm")); !os.IsNotExist(err) {
		t.Fatalf("npx used the home's ~/.npm: %v", err)
	}
}

// TestASandboxedServerInTheTempFolderIsToldWhy: a server whose program is
// in /tmp is not found inside, where /tmp is private; the error says so
// and how to fix it, instead of only "no such file".
func TestASandboxedServerInTheTempFolderIsToldWhy(t *testing.T) {
	t.Parallel()
	sb := sandbox.Detect()
	require(t, sb.Kind() == sandbox.Bubblewrap, "the private /tmp needs bubblewrap")
	dir, err := os.MkdirTemp("/tmp", "server")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	exe, _ := os.Executable()
	copyFile(t, exe, filepath.Join(dir, "server"))
	cfg := stdio(t, nil)
	cfg.Command = filepath.Join(dir, "server")
	m := start(t, Options{Root: t.TempDir(), Sandbox: sb, Confine: sandbox.Policy{Network: true},
		Servers: map[string]config.MCPServerConfig{"tmp": cfg}})
	st := status(t, m, "tmp")
	if st.State != Failed {
		t.Fatalf("a server in /tmp started in the sandbox: %+v", st)
	}
	if !strings.Contains(st.Err, cfg.Command+" is in the temp folder") || !strings.Contains(st.Err, "private /tmp") || !strings.Contains(st.Err, "sandbox: false under mcp.servers.tmp") {
		t.Fatalf("the error does not say that /tmp is private inside, and what to do: %s", st.Err)
	}
}

// TestASandboxedServerThatCannotWriteIsToldAboutSandboxWritable: a server
// failing on a read-only folder is told the setting that makes one
// writable.
func TestASandboxedServerThatCannotWriteIsToldAboutSandboxWritable(t *testing.T) {
	t.Parallel()
	sb := sandbox.Detect()
	require(t, sb.Kind() == sandbox.Bubblewrap, "the read-only file system needs bubblewrap")
	cfg := config.MCPServerConfig{Command: "/bin/sh", Args: []string{"-c", "mkdir /usr/infer-test-cache; exit 1"}}
	// What npm printed for a fresh home's ~/.npm, read-only inside.
	npm := config.MCPServerConfig{Command: "/bin/sh", Args: []string{"-c", "echo \"npm error code ENOENT\nnpm error syscall mkdir\" >&2; exit 1"}}
	m := start(t, Options{Root: t.TempDir(), Sandbox: sb, Confine: sandbox.Policy{Network: true},
		Servers: map[string]config.MCPServerConfig{"ro": cfg, "npm": npm}})
	st := status(t, m, "ro")
	if st.State != Failed || !strings.Contains(st.Err, "Read-only file system") {
		t.Fatalf("the server did not fail on a read-only folder: %+v", st)
	}
	if !strings.Contains(st.Err, "add that folder to sandbox.writable in ~/.infer/config.yaml") || !strings.Contains(status(t, m, "npm").Err, "sandbox.writable") {
		t.Fatalf("the error does not name sandbox.writable: %s", st.Err)
	}
}

// TestPackageRunnersAreKnown: the commands that download a server before
// running it get a cache of their own and a longer start; others do not.
func TestPackageRunnersAreKnown(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cmd  string
		args []string
		env  string
	}{
		{"npx", []string{"-y", "pkg"}, "npm_config_cache"},
		{"/usr/bin/npx", nil, "npm_config_cache"},
		{"npm", []string{"exec", "pkg"}, "npm_config_cache"},
		{"uvx", []string{"mcp-server-fetch"}, "UV_CACHE_DIR"},
		{"uv", []string{"tool", "run", "x"}, "UV_CACHE_DIR"},
		{"npm", []string{"start"}, ""},
		{"node", []string{"server.js"}, ""},
	} {
		env, _ := runnerCache(c.cmd, c.args)
		if env != c.env {
			t.Errorf("%s %v: cache variable %q, want %q", c.cmd, c.args, env, c.env)
		}
		s := &server{cfg: config.MCPServerConfig{Command: c.cmd, Args: c.args}}
		if want := (c.env != ""); (s.startTimeout() == runnerStartTimeout) != want {
			t.Errorf("%s %v: start timeout %s", c.cmd, c.args, s.startTimeout())
		}
	}
	s := &server{cfg: config.MCPServerConfig{Command: "npx", StartTimeout: config.Duration(time.Second)}}
	if s.startTimeout() != time.Second {
		t.Errorf("a configured start_timeout is not kept: %s", s.startTimeout())
	}
}
