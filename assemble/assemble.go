// Package assemble is infer's one composition root: it builds a running
// infer — stores, model catalog, sandbox, tool pipeline, workspace, panel
// sync, browser bridge, the watch on the bridge's token and the socket
// `infer mcp` goes through — from configuration that is already loaded.
// cmd/infer (every command that runs a workspace) and internal/infertest (the
// in-process infer of end-to-end tests) both build through it, so what the
// tests run is what people run; perf measures the binaries built on it.
//
// Every part is complete when New returns: nothing is set afterwards, and
// nothing New builds is changed by another part. Two cycles are broken by
// order, not by mutation. The browser seat is the tools' browser, while the
// panel sync and the status hook it reports to are built on the workspace:
// the seat takes the bridge's port (or becomes the guest of the infer that
// holds it) first, the workspace is built on it, and the seat is handed
// its hooks when it starts serving (seat.Seat.Serve). The tools' Env needs
// what only the workspace has (the browser as it watches it, web search
// with the model the person has chosen): the Env is finished
// before the workspace, with those bound to the workspace New builds next,
// which no tool call can precede.
package assemble

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/infer-workspace/infer/assets"
	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/bridge/panelsync"
	"github.com/infer-workspace/infer/bridge/seat"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/catalog"
	"github.com/infer-workspace/infer/session/llm/demo"
	"github.com/infer-workspace/infer/session/mcpclient"
	"github.com/infer-workspace/infer/session/mcpserver"
	"github.com/infer-workspace/infer/session/netproxy"
	"github.com/infer-workspace/infer/session/sandbox"
	"github.com/infer-workspace/infer/session/skills"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/tools/bashguard"
	"github.com/infer-workspace/infer/session/tools/grants"
)

// Options is what New builds from.
type Options struct {
	// Home is infer's home directory, Root the project's root.
	Home, Root string
	// Config is config.yaml as loaded (home and trusted project merged).
	Config config.Config
	// Bridge gives infer the person's browser with BrowserUse's extension
	// settings: it holds the bridge's port, or uses the browser of the
	// infer that holds it (see package seat). Port replaces their port
	// when PortSet (0 picks a free one, which no other infer shares).
	Bridge     bool
	BrowserUse config.BrowserUse
	Port       int
	PortSet    bool
	// Command is how this infer was started ("infer", "infer serve", …),
	// for the other infers that use its browser to say whose it is.
	Command string
	// CloseGrace bounds how long the bridge waits for a peer's close reply
	// (0: the bridge's default).
	CloseGrace time.Duration
	// BrowserOff says why there is no browser when Bridge is false, for
	// the browser tools to tell the model and the person at once.
	BrowserOff string
	// HostApprovals says a person at infer's own terminal can answer
	// whether a confined command may reach a host (tools.Env's
	// SetHostApprovals); without, such hosts are refused at once.
	HostApprovals bool
	// NoTokenWatch leaves browser_use.yaml unwatched: a rotated token then
	// takes a restart. By default an infer with the bridge follows the
	// file (see tokenWatch), as people's infer must.
	NoTokenWatch bool
	// NoMCPSocket keeps `infer mcp` processes from going through this
	// infer. By default the infer that holds the bridge serves them on
	// mcpserver.SocketPath(Home) while it holds it (see Serve).
	NoMCPSocket bool
	// Model and Mode replace config.yaml's for this process when set.
	Model, Mode string
	// Offline serves the offline/demo model (nil: demo.New()).
	Offline llm.Provider
	// NoDiscovery skips listing the providers' models in the background.
	NoDiscovery bool
	// Sandbox confines commands, approved or not; nil detects what
	// config.yaml asks for (sandbox.Disabled() makes every command ask).
	Sandbox *sandbox.Sandbox
	// StoreFS carries the conversation store's file operations; nil is the
	// real filesystem (tests inject a failing disk).
	StoreFS store.FS
	// Version is infer's version, which MCP servers are told.
	Version string
	// Log receives diagnostics, Warn the configuration warnings meant for
	// the person (both may be nil).
	Log  *slog.Logger
	Warn io.Writer
}

// Infer is one assembled infer. Its fields are its parts, for the front
// ends to use; they are never replaced.
type Infer struct {
	Home, Root string
	Config     config.Config
	BrowserUse config.BrowserUse
	Store      *store.Store
	History    *store.History
	Grants     *grants.Store
	Catalog    *catalog.Catalog
	Sandbox    *sandbox.Sandbox
	Env        *tools.Env
	// MCP runs the MCP servers config.yaml lists; their tools are the
	// workspace's too.
	MCP       *mcpclient.Manager
	Workspace *session.Workspace
	// Seat is the person's browser, whichever infer holds the bridge;
	// Seat and Panel are nil when the bridge is off.
	Seat  *seat.Seat
	Panel *panelsync.Sync
	Log   *slog.Logger

	stopDiscovery context.CancelFunc
	discoveryDone chan struct{}
	// tokens follows browser_use.yaml's token while the bridge runs; nil
	// when the bridge is off or NoTokenWatch.
	tokens  *tokenWatch
	version string
	noMCP   bool

	// mcpSocket lets `infer mcp` go through this infer. Only the infer
	// that holds the bridge serves it, so it comes and goes with the
	// bridge (see Serve); mcpClosed keeps it from coming back once Close
	// started.
	mcpMu     sync.Mutex
	mcpSocket *mcpserver.Listener
	mcpClosed bool
	// closeFront closes the workspace, the panel and the bridge, in that
	// order, once: for Close, and for Serve's context ending.
	closeFront sync.Once
}

// ModelError is New's error for a model that cannot be used (unknown, or
// its provider has no key).
type ModelError struct {
	Model string
	Err   error
}

// Error names the model once, whether or not Err already does.
func (e *ModelError) Error() string {
	if strings.Contains(e.Err.Error(), e.Model) {
		return e.Err.Error()
	}
	return fmt.Sprintf("model %q: %v", e.Model, e.Err)
}

// Unwrap returns the catalog's error.
func (e *ModelError) Unwrap() error { return e.Err }

// New builds an infer. On error nothing is left running.
func New(opts Options) (in *Infer, err error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	warn := opts.Warn
	if warn == nil {
		warn = io.Discard
	}
	cfg, home, root := opts.Config, opts.Home, opts.Root
	in = &Infer{Home: home, Root: root, Config: cfg, BrowserUse: opts.BrowserUse, Log: log,
		version: opts.Version, noMCP: opts.NoMCPSocket}
	defer func() {
		if err != nil {
			in.Close()
			in = nil
		}
	}()

	projDir := config.ProjectDir(home, root)
	if cfg.Storage.IsEnabled() {
		// Recovered problems (a torn last line after a crash) go to the log,
		// never straight to a terminal the TUI may own.
		warnStore := func(err error) { log.Warn("conversation store", "problem", err) }
		if in.Store, err = store.Open(config.ConversationsDir(home, root), store.Options{Warn: warnStore, FS: opts.StoreFS}); err != nil {
			return in, err
		}
		if in.History, err = store.OpenHistory(filepath.Join(projDir, "history.jsonl")); err != nil {
			return in, err
		}
	} else {
		in.Store = store.OpenMemory()
		in.History = store.MemoryHistory()
	}
	if err = config.EnsureDir(projDir); err != nil {
		return in, err
	}
	if in.Grants, err = grants.Open(filepath.Join(projDir, "grants.json")); err != nil {
		return in, err
	}
	guard, err := bashguard.New(bashguard.Config{Root: root, Allow: cfg.Tools.Bash.Allow, Deny: cfg.Tools.Bash.Deny})
	if err != nil {
		return in, fmt.Errorf("%s: tools.bash: %w", config.DisplayPath(config.ConfigPath(home)), err)
	}

	cacheDir, cerr := config.CacheDir("models")
	if cerr != nil {
		log.Debug("no cache directory for model discovery", "err", cerr)
	}
	offline := opts.Offline
	if offline == nil {
		offline = demo.New()
	}
	in.Catalog = catalog.New(cfg, catalog.Options{Offline: offline, CacheDir: cacheDir, ConfigPath: config.DisplayPath(config.ConfigPath(home))})

	liveSkills := skills.NewLive(skills.Options{ProjectRoot: root, Home: home, Catalog: assets.Skills()},
		func(err error) { log.Warn("skill skipped", "err", err) })
	liveSkills.List() // warn about broken skills at start, not at first listing

	mode := tools.Standard
	for _, m := range []string{cfg.Agent.Mode, opts.Mode} {
		if m == "" {
			continue
		}
		parsed, ok := tools.ParseMode(m)
		if !ok {
			return in, fmt.Errorf("unknown mode %q: use standard, plan, auto or auto-with-judge", m)
		}
		mode = parsed
	}
	effort, err := llm.ParseEffort(cfg.Agent.Effort)
	if err != nil {
		return in, err
	}
	model := cfg.Model
	if opts.Model != "" {
		model = opts.Model
	}
	if model == "" {
		model = in.Catalog.Default()
	}
	if _, _, rerr := in.Catalog.Resolve(model); rerr != nil {
		return in, &ModelError{Model: model, Err: rerr}
	}

	// ownSeat is in.Seat for the network gate, which sandboxed MCP servers
	// may consult before the seat exists.
	var ownSeat atomic.Pointer[seat.Seat]
	in.Sandbox = opts.Sandbox
	if in.Sandbox == nil {
		in.Sandbox = SandboxFor(cfg)
	}
	if w := in.Sandbox.Warning(); w != "" {
		fmt.Fprintln(warn, "infer: warning:", w)
		log.Warn("sandbox: "+w, "sandbox", in.Sandbox.String())
	} else {
		log.Info("sandbox in force for commands", "sandbox", in.Sandbox.String(), "network", cfg.Sandbox.NetworkAllowed())
	}
	in.Env = &tools.Env{
		Root: root, ArtifactsDir: config.ArtifactsDir(home, root), SecretEnv: SecretEnv(cfg),
		Sandbox: in.Sandbox, Confine: ConfinePolicy(cfg, home),
		NetAllow: cfg.Network.Allow, ArtifactsMaxBytes: cfg.Storage.ArtifactsMaxBytes(),
		OwnPorts: func() []int {
			// The configured port, whoever holds it, and the one this
			// infer's seat uses (--port may differ).
			ports := []int{opts.BrowserUse.Extension.Port}
			if st := ownSeat.Load(); st != nil {
				ports = append(ports, st.Port())
			}
			return ports
		},
	}
	if !opts.Bridge {
		in.Env.BrowserOff = opts.BrowserOff
	}
	in.Env.SetHostApprovals(opts.HostApprovals)
	// bound is the workspace built below, for what of the Env only it can
	// give. A tool runs only through a workspace's pipeline, the MCP
	// servers' network gate below only decides hosts, so nothing reaches
	// it before it is set.
	var bound atomic.Pointer[session.Workspace]
	in.Env.WebSearch = func(ctx context.Context, query string) (llm.SearchResult, error) {
		return bound.Load().WebSearch(ctx, query)
	}
	// Sandboxed MCP servers may start before the workspace exists; until
	// it does, their hosts are decided without anyone to ask.
	var pipeline atomic.Pointer[tools.Pipeline]
	network := func(server string) netproxy.Decider {
		var (
			once   sync.Once
			decide netproxy.Decider
		)
		return func(ctx context.Context, d netproxy.Dest) error {
			once.Do(func() {
				p := pipeline.Load()
				if p == nil {
					p = tools.NewPipeline(tools.PipelineConfig{Env: in.Env, Grants: in.Grants})
				}
				decide = p.NetworkDecider(server)
			})
			return decide(ctx, d)
		}
	}
	in.MCP = StartMCP(cfg, home, root, in.Sandbox, opts.Version, log, network)
	timeouts := map[string]time.Duration{}
	if d := cfg.Tools.Bash.Timeout.Std(); d > 0 {
		timeouts[tools.NameBash] = d
	}
	ext := opts.BrowserUse.Extension
	// A browser tool waits for the extension's answer: give it the
	// configured command timeout plus a margin, so extension.command_timeout
	// is what actually bounds a browser command, above or below 30 s; and
	// the time it may first wait for an extension to connect, so a command
	// that follows a long wait still has its whole budget.
	if d := ext.CommandTimeout.Std(); opts.Bridge && d > 0 {
		for _, name := range tools.BrowserNames() {
			timeouts[name] = ext.ConnectWait.Std() + d + 5*time.Second
		}
	}

	// The seat is taken before the workspace is built: it is the tools'
	// browser. What it reports to is given when it serves (see Serve).
	if opts.Bridge {
		port := ext.Port
		if opts.PortSet {
			port = opts.Port
		}
		in.Seat, err = seat.New(seat.Options{
			Bridge: bridge.Options{
				Port: port, Token: ext.Token,
				CommandTimeout: ext.CommandTimeout.Std(),
				ArtifactsDir:   in.Env.ArtifactsDir,
				Project:        root,
				CloseGrace:     opts.CloseGrace,
				Logger:         log,
			},
			Home: home, Root: root, Command: opts.Command,
			ConnectWait: ext.ConnectWait.Std(),
			Logger:      log,
		})
		if err != nil {
			return in, err
		}
		ownSeat.Store(in.Seat)
		in.Env.Browser = watchedBrowser{ws: &bound, d: in.Seat}
	}
	// The judge asks the configured judge model; without one, session.New
	// has it ask the model the person uses.
	judge := session.Judge{Catalog: in.Catalog}
	if id := cfg.Agent.JudgeModel; id != "" {
		judge.Model = func() string { return id }
	}
	in.Workspace, err = session.New(session.Options{
		Store: in.Store, History: in.History, Catalog: in.Catalog,
		Model: model, Mode: mode, Effort: effort, Temperature: cfg.Agent.Temperature,
		MaxSteps: cfg.Agent.MaxSteps, System: cfg.Agent.SystemPrompt,
		Overrides: in.Catalog.Overrides,
		Tools: tools.PipelineConfig{
			Env: in.Env, Guard: guard, Grants: in.Grants, Timeouts: timeouts, Judge: judge,
			Sources: []tools.Source{in.MCP},
		},
		Skills: liveSkills.List,
		Titler: session.ModelTitler(in.Catalog),
		Logger: log,
	})
	if err != nil {
		return in, err
	}
	bound.Store(in.Workspace)
	pipeline.Store(in.Workspace.Pipeline())
	if in.Seat != nil {
		in.Panel = panelsync.New(in.Workspace, log)
		if !opts.NoTokenWatch {
			in.tokens = watchToken(config.BrowserUsePath(home), in.Seat, ext.Token, ext.Port, log, tokenCheckEvery)
		}
	}

	// Discovery runs in the background and never delays startup; a new
	// list is announced to front ends when it lands.
	if !opts.NoDiscovery {
		ctx, cancel := context.WithCancel(context.Background())
		in.stopDiscovery = cancel
		in.discoveryDone = make(chan struct{})
		go func() {
			defer close(in.discoveryDone)
			if err := in.Catalog.Refresh(ctx); err != nil && !errors.Is(err, context.Canceled) {
				log.Debug("model discovery", "err", err)
			}
			in.Workspace.ModelsChanged()
		}()
	}
	return in, nil
}

// DiscoveryDone is closed once the background model discovery has ended
// (at once when there is none).
func (in *Infer) DiscoveryDone() <-chan struct{} {
	if in.discoveryDone == nil {
		done := make(chan struct{})
		close(done)
		return done
	}
	return in.discoveryDone
}

// Serve runs the browser seat until ctx ends or Close, reporting the
// browser's state to the workspace and, while this infer holds the
// bridge, the side panel to the panel sync and `infer mcp` processes on
// the MCP socket (unless NoMCPSocket): they find the infer the extension
// is connected to, also after a takeover. It returns at once when the
// bridge is off.
//
// ctx's end (a signal, in the commands) closes the seat as Close does,
// after the workspace has ended its turn and the panel has forwarded the
// turn's end: closing the bridge at once left the panel without the run's
// RUN_ERROR, on "Working…" for good.
func (in *Infer) Serve(ctx context.Context) error {
	if in.Seat == nil {
		return nil
	}
	stop := context.AfterFunc(ctx, in.closeInOrder)
	defer stop()
	hooks := seat.Hooks{Panel: in.Panel, OnStatus: in.Workspace.SetBrowserStatus}
	if !in.noMCP {
		hooks.OnHold, hooks.OnRelease = in.holdMCP, in.releaseMCP
	}
	return in.Seat.Serve(context.WithoutCancel(ctx), hooks)
}

// Token is the pairing token the bridge accepts now: browser_use.yaml's
// as infer started, or the one a rotation put there since.
func (in *Infer) Token() string {
	if in.tokens != nil {
		return in.tokens.Token()
	}
	return in.BrowserUse.Extension.Token
}

// holdMCP starts serving the MCP socket, unless Close has begun. A socket
// that cannot be served costs only `infer mcp` its way through this infer,
// so it is logged, not fatal.
func (in *Infer) holdMCP() {
	in.mcpMu.Lock()
	defer in.mcpMu.Unlock()
	if in.mcpClosed || in.mcpSocket != nil {
		return
	}
	ws := in.Workspace
	l, err := mcpserver.Listen(mcpserver.SocketPath(in.Home), in.Token, func(ctx context.Context, id, name, args string) tools.Outcome {
		return ws.RunTool(ctx, id, name, args, tools.OriginMCP)
	}, in.version, in.Log)
	if err != nil {
		in.Log.Warn("infer mcp clients cannot go through this infer", "err", err)
		return
	}
	in.mcpSocket = l
}

// releaseMCP stops serving the MCP socket; its calls are cancelled,
// withdrawing their approvals.
func (in *Infer) releaseMCP() {
	in.mcpMu.Lock()
	l := in.mcpSocket
	in.mcpSocket = nil
	in.mcpMu.Unlock()
	if l != nil {
		l.Close()
	}
}

// watchedBrowser is the tools' browser: the seat, as the workspace watches
// it (see session.Workspace.WatchBrowser), so that front ends see what it
// did. ws is the workspace assemble builds after the Env.
type watchedBrowser struct {
	ws *atomic.Pointer[session.Workspace]
	d  browser.Driver
}

// Do runs cmd on the seat through the workspace's watch.
func (b watchedBrowser) Do(ctx context.Context, cmd browser.Command) (browser.Result, error) {
	return b.ws.Load().WatchBrowser(b.d).Do(ctx, cmd)
}

// closeInOrder closes the workspace (its running turn is interrupted and
// publishes its end), then the panel mirror (it forwards what was
// published), then the seat (the bridge sends what is queued and closes
// the connection; guests take the port over). A second call waits for the
// first.
func (in *Infer) closeInOrder() {
	in.closeFront.Do(func() {
		if in.Workspace != nil {
			in.Workspace.Close()
		}
		if in.Panel != nil {
			in.Panel.Close()
		}
		if in.Seat != nil {
			in.Seat.Close()
		}
	})
}

// Close shuts down so that nothing is lost: the MCP socket and the token
// watch stop first, then the workspace (the running turn is interrupted and
// finishes writing, publishing its last events), then the panel mirror
// forwards what was published, then the bridge sends what is queued and
// closes the connection, and the stores last. It is safe to call more than
// once.
func (in *Infer) Close() error {
	if in == nil {
		return nil
	}
	in.mcpMu.Lock()
	in.mcpClosed = true
	in.mcpMu.Unlock()
	in.releaseMCP()
	if in.tokens != nil {
		in.tokens.Close()
	}
	if in.stopDiscovery != nil {
		in.stopDiscovery()
		<-in.discoveryDone
		in.stopDiscovery = nil
	}
	in.closeInOrder()
	if in.MCP != nil {
		in.MCP.Close()
	}
	var errs []error
	if in.History != nil {
		errs = append(errs, in.History.Close())
	}
	if in.Env != nil {
		errs = append(errs, in.Env.Close())
	}
	return errors.Join(errs...)
}

// StartMCP starts the MCP servers cfg lists, in the background (see
// mcpclient): stdio servers confined like commands, none of them
// inheriting the provider keys, each reaching the network only
// through a proxy that network decides for (nil refuses every host).
func StartMCP(cfg config.Config, home, root string, sb *sandbox.Sandbox, version string, log *slog.Logger, network func(server string) netproxy.Decider) *mcpclient.Manager {
	return mcpclient.Start(mcpclient.Options{
		Network: network,
		Servers: cfg.MCP.Servers, Root: root,
		Sandbox: sb, Confine: ConfinePolicy(cfg, home), SecretEnv: SecretEnv(cfg),
		CallTimeout: cfg.Tools.Timeout.Std(), Version: version, Logger: log,
	})
}

// SandboxFor is the sandbox config.yaml asks for: off, or the best this
// system has (which may be none; then every command asks).
func SandboxFor(cfg config.Config) *sandbox.Sandbox {
	if cfg.Sandbox.Mode == config.SandboxOff {
		return sandbox.Disabled()
	}
	return sandbox.Detect()
}

// ConfinePolicy is the sandbox's policy from config.yaml: what may be
// written beside the project, what may never be read — infer's home
// (the bridge token, conversations, grants), its state and cache (the
// log, the browser profile), the person's secret stores and
// sandbox.deny_read — and the variables sandbox.env lets in.
func ConfinePolicy(cfg config.Config, home string) sandbox.Policy {
	userHome, _ := os.UserHomeDir()
	expand := func(paths []string) []string {
		out := make([]string, 0, len(paths))
		for _, p := range paths {
			if p == "~" || strings.HasPrefix(p, "~/") {
				if userHome == "" {
					continue
				}
				p = filepath.Join(userHome, p[1:])
			}
			if filepath.IsAbs(p) {
				out = append(out, filepath.Clean(p))
			}
		}
		return out
	}
	deny := append([]string{home}, config.OwnDirs()...)
	deny = append(deny, sandbox.SecretStores(userHome)...)
	return sandbox.Policy{
		Writable: expand(cfg.Sandbox.Writable),
		DenyRead: append(deny, expand(cfg.Sandbox.DenyRead)...),
		Env:      slices.Clone(cfg.Sandbox.Env),
		Network:  cfg.Sandbox.NetworkAllowed(),
		Home:     userHome,
	}
}

// SecretEnv names the variables Bash commands must not inherit: every
// provider key infer may read, and INFER_TOKEN, which people export for
// infer-sim and which holds the bridge token.
func SecretEnv(cfg config.Config) []string {
	return append(catalog.KeyVariables(cfg), "INFER_TOKEN")
}
