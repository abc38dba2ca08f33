package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/netproxy"
	"github.com/infer-workspace/infer/session/sandbox"
)

// server is one configured server. Its fields below cfg are guarded by
// m.mu.
type server struct {
	m    *Manager
	name string
	cfg  config.MCPServerConfig

	state     State
	err       string
	sandboxed bool
	session   *mcp.ClientSession
	list      []*tool
	byName    map[string]*tool
	// ready is closed when a start attempt ends (ready or failed).
	ready chan struct{}
	// stop ends the current life early (Restart); nil when none runs.
	stop chan struct{}
}

func (s *server) statusLocked() Status {
	st := Status{Name: s.name, Transport: s.cfg.Transport(), State: s.state, Err: s.err, Sandboxed: s.sandboxed}
	if s.state == Ready {
		for _, t := range s.list {
			st.Tools = append(st.Tools, ToolInfo{Name: t.name, Remote: t.remote, Description: t.desc, ReadOnly: t.readOnly})
		}
	}
	return st
}

func (s *server) startTimeout() time.Duration {
	if d := s.cfg.StartTimeout.Std(); d > 0 {
		return d
	}
	if v, _ := runnerCache(s.cfg.Command, s.cfg.Args); v != "" {
		// npx and uvx download the server and its dependencies first,
		// which on a first start takes longer than starting does.
		return runnerStartTimeout
	}
	return config.DefaultMCPStartTimeout
}

func (s *server) callTimeout() time.Duration {
	if d := s.cfg.Timeout.Std(); d > 0 {
		return d
	}
	return s.m.opts.CallTimeout
}

// waitReady waits until the current start attempt ends or ctx does, and
// reports whether the attempt ended.
func (s *server) waitReady(ctx context.Context) bool {
	s.m.mu.Lock()
	ch := s.ready
	s.m.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	case <-s.m.ctx.Done():
		return false
	}
}

// restart starts a new life unless one is starting; force also ends a
// running one (Restart), otherwise only a crashed or failed server is
// started again.
func (s *server) restart(force bool) {
	m := s.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || s.state == Starting {
		return
	}
	if s.state == Ready || s.state == Disabled {
		if !force || s.state == Disabled {
			return
		}
		if s.stop != nil {
			close(s.stop)
			s.stop = nil
		}
	}
	s.state, s.err = Starting, ""
	s.ready = make(chan struct{})
	m.notifyLocked()
	m.wg.Add(1)
	go s.run()
}

// run is one life of the server: start it, list its tools, and watch it
// until it ends, infer shuts down or Restart stops it.
func (s *server) run() {
	m := s.m
	defer m.wg.Done()
	stop := make(chan struct{})
	cs, proc, err := s.start()
	m.mu.Lock()
	if err != nil {
		if m.closed {
			s.state, s.err = Stopped, ""
		} else {
			s.state, s.err = Failed, err.Error()
			m.log.Warn("mcp: server failed to start", "server", s.name, "err", err)
		}
		close(s.ready)
		m.notifyLocked()
		m.mu.Unlock()
		return
	}
	s.state, s.err, s.session, s.stop = Ready, "", cs, stop
	n := len(s.list)
	close(s.ready)
	m.notifyLocked()
	m.mu.Unlock()
	m.log.Info("mcp: server ready", "server", s.name, "tools", n)

	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()
	var why string
	select {
	case err := <-ended:
		_ = err
		why = "crashed"
	case <-m.ctx.Done():
	case <-stop:
	}
	closeErr := cs.Close()
	if why == "" {
		<-ended
	}
	proc.end()

	m.mu.Lock()
	defer m.mu.Unlock()
	if s.session == cs {
		s.session = nil
	}
	switch {
	case m.closed:
		s.state, s.err = Stopped, ""
	case why == "crashed":
		s.state = Crashed
		s.err = "it stopped"
		if closeErr != nil {
			s.err += " (" + closeErr.Error() + ")"
		}
		s.err += s.hints(proc) + proc.stderrTail() + "; its next call starts it again"
		m.log.Warn("mcp: server crashed", "server", s.name, "err", s.err)
	default:
		return // a Restart began the next life
	}
	m.notifyLocked()
}

// start connects to the server and lists its tools within the start
// timeout. On error nothing is left running.
func (s *server) start() (*mcp.ClientSession, *process, error) {
	ctx, cancel := context.WithTimeout(s.m.ctx, s.startTimeout())
	defer cancel()
	transport, proc, err := s.transport()
	if err != nil {
		return nil, proc, err
	}
	cs, err := s.m.client.Connect(ctx, transport, nil)
	if err != nil {
		proc.end()
		return nil, proc, s.startError(ctx, "could not start", err, proc)
	}
	ts, err := s.listTools(ctx, cs)
	if err != nil {
		_ = cs.Close()
		proc.end()
		return nil, proc, s.startError(ctx, "could not list its tools", err, proc)
	}
	s.m.mu.Lock()
	s.setTools(ts)
	s.m.mu.Unlock()
	return cs, proc, nil
}

func (s *server) startError(ctx context.Context, what string, err error, proc *process) error {
	switch {
	case s.m.ctx.Err() != nil:
		return errClosed
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%s: it did not answer within %s (mcp.servers.%s.start_timeout)%s%s", what, s.startTimeout(), s.name, s.hints(proc), proc.stderrTail())
	}
	return fmt.Errorf("%s: %v%s%s", what, err, s.hints(proc), proc.stderrTail())
}

// hints says what the sandbox did to a server that failed, and how to
// change it; a confined server usually only prints a file or network
// error that does not name the sandbox.
func (s *server) hints(proc *process) string {
	if proc == nil || !proc.confined {
		return ""
	}
	var out []string
	if r := proc.refused.String(); r != "" {
		out = append(out, "infer's network proxy refused it: "+r)
	}
	if p := underTemp(s.m.opts.Root, s.cfg.Command, s.cfg.Args); p != "" {
		out = append(out, fmt.Sprintf("%s is in the temp folder, and a sandboxed server has a private /tmp of its own where it is not found: move the server's files out of the temp folder, or set sandbox: false under mcp.servers.%s in ~/.infer/config.yaml (a project's config cannot) to run it unconfined", p, s.name))
	}
	if proc.stderr != nil {
		if readOnlyHit(proc.stderr.String()) {
			out = append(out, "it could not write a folder, and in the sandbox all but the project, its private /tmp and sandbox.writable is read-only: add that folder to sandbox.writable in ~/.infer/config.yaml")
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "; " + strings.Join(out, "; ")
}

// setTools installs the listed tools; m.mu is held.
func (s *server) setTools(ts []*tool) {
	s.list = ts
	s.byName = make(map[string]*tool, len(ts))
	for _, t := range ts {
		s.byName[t.name] = t
	}
}

// list asks the server for its tools (every page).
func (s *server) listTools(ctx context.Context, cs *mcp.ClientSession) ([]*tool, error) {
	var out []*tool
	seen := map[string]bool{}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if t == nil {
			continue
		}
		nt := newTool(s, t)
		if seen[nt.name] {
			s.m.log.Warn("mcp: two tools share a name once made safe; the second is left out", "server", s.name, "tool", t.Name)
			continue
		}
		seen[nt.name] = true
		out = append(out, nt)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// transport builds the way to reach the server: a stdio child (confined
// unless the person opted out) or a streamable HTTP endpoint.
func (s *server) transport() (mcp.Transport, *process, error) {
	proc := &process{}
	if s.cfg.URL != "" {
		h := http.Header{}
		for k, v := range s.cfg.Headers {
			ev, err := config.ExpandEnv(v, s.m.opts.LookupEnv)
			if err != nil {
				return nil, proc, fmt.Errorf("header %s: %v", k, err)
			}
			h.Set(k, ev)
		}
		client := &http.Client{Transport: headerTransport{base: http.DefaultTransport, h: h}}
		return &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: client, MaxRetries: 1, DisableStandaloneSSE: true}, proc, nil
	}
	opts := s.m.opts
	sb := opts.Sandbox
	confine := s.cfg.Confined() && sb != nil && sb.Kind() != sandbox.Off
	env, err := s.env(confine)
	if err != nil {
		return nil, proc, err
	}
	var cmd *exec.Cmd
	if confine {
		if !sb.Confines() {
			return nil, proc, fmt.Errorf("it runs in the sandbox, and no sandbox is available here (%v); set sandbox: false under mcp.servers.%s in your own config.yaml (a project's cannot) to run it with your full permissions", sb.Problem(), s.name)
		}
		pol := opts.Confine
		pol.Root = opts.Root
		proc.confined, proc.refused = true, &refusals{}
		if v, name := runnerCache(s.cfg.Command, s.cfg.Args); v != "" && !setsEnv(s.cfg.Env, v) {
			dir, err := ownCache(opts.CacheDir, s.name, name)
			if err != nil {
				return nil, proc, err
			}
			env = append(env, v+"="+dir)
			pol.Writable = append(slices.Clip(pol.Writable), dir)
		}
		if pol.Network && sb.Kind() == sandbox.Bubblewrap {
			// Its only way out is a proxy of its own, deciding for it.
			decide := refuseHosts
			if opts.Network != nil {
				decide = opts.Network(s.name)
			}
			refused := proc.refused
			px, err := netproxy.Start(func(ctx context.Context, d netproxy.Dest) error {
				err := decide(ctx, d)
				if err != nil {
					refused.add(err)
				}
				return err
			})
			if err != nil {
				return nil, proc, fmt.Errorf("its network proxy could not start: %w", err)
			}
			pol.NetProxy, proc.closeNet = px.Socket(), func() { px.Close() }
		}
		if cmd, err = sb.Command(pol, env, s.cfg.Command, s.cfg.Args...); err != nil {
			proc.end()
			return nil, proc, err
		}
	} else {
		cmd = exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Env = env
		cmd.Dir = opts.Root
	}
	s.m.mu.Lock()
	s.sandboxed = confine
	s.m.mu.Unlock()
	proc.stderr = &tail{max: 2048}
	cmd.Stderr = proc.stderr
	cmd.SysProcAttr = procAttr(confine)
	proc.cmd = cmd
	return &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, proc, nil
}

// env is a stdio server's environment: infer's own without its secrets
// (and, confined, cut down to what confined commands inherit, the same
// list and sandbox.env), plus the configured variables with ${VAR}
// expanded, which the person gave this server on purpose.
func (s *server) env(confine bool) ([]string, error) {
	hidden := map[string]bool{}
	for _, n := range s.m.opts.SecretEnv {
		hidden[n] = true
	}
	for n := range s.cfg.Env {
		hidden[n] = true // replaced below
	}
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !hidden[name] && (!confine || sandbox.KeepsEnv(name, s.m.opts.Confine.Env)) {
			out = append(out, kv)
		}
	}
	names := make([]string, 0, len(s.cfg.Env))
	for n := range s.cfg.Env {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		v, err := config.ExpandEnv(s.cfg.Env[n], s.m.opts.LookupEnv)
		if err != nil {
			return nil, fmt.Errorf("env %s: %v", n, err)
		}
		out = append(out, n+"="+v)
	}
	return out, nil
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	base http.RoundTripper
	h    http.Header
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range t.h {
		r.Header[k] = vs
	}
	return t.base.RoundTrip(r)
}

// process is a stdio server's child, for its stderr and to make sure that
// everything it started is gone.
type process struct {
	cmd    *exec.Cmd
	stderr *tail
	// closeNet stops the server's network proxy; nil when it has none.
	closeNet func()
	// confined is set for a server in the sandbox; refused collects what
	// its proxy refused.
	confined bool
	refused  *refusals
}

// end kills the server's process group and stops its network proxy.
func (p *process) end() {
	if p == nil {
		return
	}
	p.kill()
	if p.closeNet != nil {
		p.closeNet()
	}
}

func (p *process) stderrTail() string {
	if p == nil || p.stderr == nil {
		return ""
	}
	t := strings.TrimSpace(p.stderr.String())
	if t == "" {
		return ""
	}
	return "; it wrote: " + t
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.b), "�")
}

// refuseHosts is the decider of a server whose Options give none.
func refuseHosts(_ context.Context, d netproxy.Dest) error {
	return fmt.Errorf("infer blocked the connection to %s: nobody can allow hosts for this MCP server; add %q to network.allow in ~/.infer/config.yaml", d, d.Host)
}
