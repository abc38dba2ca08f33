// Package mcpclient connects infer to the person's MCP servers (config.yaml
// mcp.servers): it starts each one in the background when the workspace
// starts (stdio servers in the sandbox unless the person opts out), lists
// their tools as mcp__<server>__<tool>, and offers them to the tool
// pipeline as a tools.Source, so every call takes the same permission path
// as infer's own tools.
//
// A server that fails to start, crashes or hangs never holds up a turn
// beyond its timeout: a turn lists only the tools of servers that are
// ready, a call waits for a server still starting at most its start
// timeout, and a crashed server is started again on its next call. Every
// change of state is announced on Changed, for the TUI's status line,
// `/mcp` and `infer doctor`.
package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/netproxy"
	"github.com/infer-workspace/infer/session/sandbox"
	"github.com/infer-workspace/infer/session/tools"
)

// State is where a server is in its life.
type State string

// States.
const (
	// Starting: being started and asked for its tools.
	Starting State = "starting"
	// Ready: its tools are offered.
	Ready State = "ready"
	// Failed: it could not be started or listed; Status.Err says why.
	Failed State = "failed"
	// Crashed: it stopped after starting; its next call starts it again.
	Crashed State = "crashed"
	// Disabled: configured with disabled: true.
	Disabled State = "disabled"
	// Stopped: infer is shutting down.
	Stopped State = "stopped"
)

// ToolInfo is one tool a server offers.
type ToolInfo struct {
	// Name is the name the model calls, mcp__<server>__<tool>.
	Name string
	// Remote is the server's own name for it.
	Remote      string
	Description string
	// ReadOnly is the server's claim (readOnlyHint).
	ReadOnly bool
}

// Status is one server as front ends show it.
type Status struct {
	Name string
	// Transport is "stdio" or "http".
	Transport string
	State     State
	// Err says why a server failed or crashed, with the end of what it
	// wrote to stderr; never a header value.
	Err string
	// Sandboxed is true for a stdio server run in the sandbox.
	Sandboxed bool
	Tools     []ToolInfo
}

// Options configures a Manager.
type Options struct {
	// Servers are config.yaml's mcp.servers.
	Servers map[string]config.MCPServerConfig
	// Root is the project folder, where stdio servers run.
	Root string
	// Sandbox confines stdio servers that do not opt out; nil runs them
	// unconfined (tests, embedders). One that cannot confine makes such a
	// server fail with a message saying how to opt out: never unconfined
	// behind the person's back.
	Sandbox *sandbox.Sandbox
	// Confine is the sandbox policy (infer's home and the secret stores
	// hidden, the network as configured); Root is filled in.
	Confine sandbox.Policy
	// Network gives the decider for a sandboxed stdio server's network
	// proxy, its only way out (see package netproxy), by server name; it
	// is called at each start. nil refuses every host.
	Network func(server string) netproxy.Decider
	// CacheDir holds the download caches infer gives sandboxed servers
	// started by npx or uvx, a folder per server; empty is infer-mcp in
	// the person's cache folder (~/.cache/infer-mcp).
	CacheDir string
	// SecretEnv names variables stdio servers do not inherit (provider
	// keys, the bridge token) unless their env names them.
	SecretEnv []string
	// LookupEnv reads the environment for ${VAR}; nil is os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// CallTimeout bounds a call when the server sets no timeout (default
	// config.DefaultToolTimeout).
	CallTimeout time.Duration
	// Version is infer's, announced to servers.
	Version string
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// Manager runs the configured servers. It implements tools.Source and is
// safe for concurrent use.
type Manager struct {
	opts   Options
	log    *slog.Logger
	client *mcp.Client
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	servers map[string]*server
	order   []string
	changed chan struct{} // closed and replaced on every change
	closed  bool
}

var _ tools.Source = (*Manager)(nil)

// Start begins starting every enabled server in the background and
// returns at once.
func Start(opts Options) *Manager {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = config.DefaultToolTimeout
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{opts: opts, log: log, ctx: ctx, cancel: cancel, servers: map[string]*server{}, changed: make(chan struct{})}
	m.client = mcp.NewClient(&mcp.Implementation{Name: "infer", Version: version}, &mcp.ClientOptions{
		// infer offers no roots, sampling or elicitation.
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(_ context.Context, req *mcp.ToolListChangedRequest) {
			m.relist(req.Session)
		},
	})
	for name := range opts.Servers {
		m.order = append(m.order, name)
	}
	sort.Strings(m.order)
	for _, name := range m.order {
		cfg := opts.Servers[name]
		s := &server{m: m, name: name, cfg: cfg, ready: make(chan struct{})}
		m.servers[name] = s
		if cfg.Disabled {
			s.state = Disabled
			close(s.ready)
			continue
		}
		s.state = Starting
		m.wg.Add(1)
		go s.run()
	}
	return m
}

// Close stops every server and waits until they are gone.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	m.wg.Wait()
	return nil
}

// Changed returns a channel closed at the next change of any server's
// state or tools.
func (m *Manager) Changed() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}

// notifyLocked wakes everyone waiting on Changed; m.mu is held.
func (m *Manager) notifyLocked() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// Statuses lists the servers by name.
func (m *Manager) Statuses() []Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Status, 0, len(m.order))
	for _, name := range m.order {
		out = append(out, m.servers[name].statusLocked())
	}
	return out
}

// Wait blocks until no server is starting, or ctx ends.
func (m *Manager) Wait(ctx context.Context) error {
	for {
		ch := m.Changed()
		starting := false
		for _, s := range m.Statuses() {
			starting = starting || s.State == Starting
		}
		if !starting {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// Restart stops the named server, if it runs, and starts it again.
func (m *Manager) Restart(name string) error {
	m.mu.Lock()
	s, ok := m.servers[name]
	if !ok || m.closed {
		m.mu.Unlock()
		return fmt.Errorf("no MCP server is named %q", name)
	}
	m.mu.Unlock()
	s.restart(true)
	return nil
}

// Tools lists the tools of the servers that are ready (tools.Source).
func (m *Manager) Tools() []tools.Tool {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []tools.Tool
	for _, name := range m.order {
		s := m.servers[name]
		if s.state != Ready {
			continue
		}
		for _, t := range s.list {
			out = append(out, t)
		}
	}
	return out
}

// Lookup finds a tool by its mcp__<server>__<tool> name (tools.Source).
// It waits for a server that is starting, and starts a crashed one
// again, within ctx and the server's start timeout.
func (m *Manager) Lookup(ctx context.Context, name string) (tools.Tool, bool) {
	s := m.serverFor(name)
	if s == nil {
		return nil, false
	}
	m.mu.Lock()
	crashed := s.state == Crashed
	m.mu.Unlock()
	if crashed {
		s.restart(false)
	}
	if !s.waitReady(ctx) {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.state != Ready {
		return nil, false
	}
	t, ok := s.byName[name]
	return t, ok
}

// Unavailable explains why name, which names one of this manager's
// servers, cannot be called now; "" when it names none or can be.
func (m *Manager) Unavailable(name string) string {
	s := m.serverFor(name)
	if s == nil {
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch s.state {
	case Ready:
		if _, ok := s.byName[name]; ok {
			return ""
		}
		names := make([]string, len(s.list))
		for i, t := range s.list {
			names[i] = t.name
		}
		return fmt.Sprintf("the MCP server %s has no tool %q; its tools are %s", s.name, strings.TrimPrefix(name, tools.ServerToolPrefix(s.name)), strings.Join(names, ", "))
	case Starting:
		return fmt.Sprintf("the MCP server %s is still starting; try again shortly", s.name)
	case Disabled:
		return fmt.Sprintf("the MCP server %s is disabled in config.yaml", s.name)
	default:
		return fmt.Sprintf("the MCP server %s is not running (%s: %s); the person can see it with /mcp", s.name, s.state, s.err)
	}
}

// serverFor returns the server whose tools' names start like name.
func (m *Manager) serverFor(name string) *server {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return nil
	}
	srv, _, ok := strings.Cut(rest, "__")
	if !ok {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.servers[srv]
}

// relist asks the server behind session for its tools again after it said
// they changed.
func (m *Manager) relist(session *mcp.ClientSession) {
	m.mu.Lock()
	var s *server
	for _, x := range m.servers {
		if x.session == session {
			s = x
		}
	}
	if s == nil || m.closed {
		m.mu.Unlock()
		return
	}
	// Added under the lock, so Close (which sets closed under it) never
	// waits while a goroutine may still be added.
	m.wg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.wg.Done()
		ctx, cancel := context.WithTimeout(m.ctx, s.startTimeout())
		defer cancel()
		ts, err := s.listTools(ctx, session)
		m.mu.Lock()
		defer m.mu.Unlock()
		if err != nil || s.session != session {
			if err != nil {
				m.log.Warn("mcp: relisting tools failed", "server", s.name, "err", err)
			}
			return
		}
		s.setTools(ts)
		m.notifyLocked()
	}()
}

// Summary is the status line's text: "" without servers, else e.g.
// "mcp: 2 ready" or "mcp: 1 ready, 1 failed"; warn is true when a server
// failed or crashed.
func Summary(sts []Status) (text string, warn bool) {
	if len(sts) == 0 {
		return "", false
	}
	counts := map[State]int{}
	for _, s := range sts {
		counts[s.State]++
	}
	var parts []string
	for _, st := range []State{Ready, Starting, Failed, Crashed, Disabled, Stopped} {
		if n := counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	return "mcp: " + strings.Join(parts, ", "), counts[Failed]+counts[Crashed] > 0
}

// errClosed is reported by a server asked to start while infer shuts down.
var errClosed = errors.New("infer is shutting down")
