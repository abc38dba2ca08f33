package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/infer-workspace/infer/assets"
	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/bridge/panelsync"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/catalog"
	"github.com/infer-workspace/infer/session/llm/demo"
	"github.com/infer-workspace/infer/session/mcpclient"
	"github.com/infer-workspace/infer/session/mcpserver"
	"github.com/infer-workspace/infer/session/sandbox"
	"github.com/infer-workspace/infer/session/skills"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/tools/bashguard"
	"github.com/infer-workspace/infer/session/tools/grants"
)

// appOptions says which parts of infer a command needs.
type appOptions struct {
	// Bridge starts the extension bridge. BridgeRequired makes a missing or
	// disabled browser_use.yaml an error instead of a warning.
	Bridge, BridgeRequired bool
	// Port overrides extension.port when PortSet (0 picks a free port).
	Port    int
	PortSet bool
	// Model and Mode override config.yaml for this process when set.
	Model, Mode string
	// Log receives diagnostics.
	Log *slog.Logger
	// Warn receives configuration warnings for the person.
	Warn io.Writer
	// NoBridgeWhy says why the caller left Bridge off, for the browser
	// tools to tell the model and the person (such as --no-bridge); when
	// empty, the reason is read from browser_use.yaml.
	NoBridgeWhy string
	// StoreFS carries the conversation store's file operations; nil is
	// the real filesystem. Tests inject a failing disk through it.
	StoreFS store.FS
}

// app is one assembled infer: the workspace, its stores, and the bridge.
type app struct {
	home, root string
	cfg        config.Config
	browserUse config.BrowserUse
	store      *store.Store
	history    *store.History
	grants     *grants.Store
	catalog    *catalog.Catalog
	ws         *session.Workspace
	srv        *bridge.Server
	tokens     *tokenWatch // follows a token rotation while the bridge runs
	sync       *panelsync.Sync
	log        *slog.Logger
	sandbox    *sandbox.Sandbox
	env        *tools.Env
	mcp        *mcpclient.Manager
	mcpSocket  *mcpserver.Listener

	stopDiscovery context.CancelFunc
	discoveryDone chan struct{}
}

// openApp wires everything from the configuration files. On error nothing
// is left running.
func openApp(opts appOptions) (a *app, err error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	warn := opts.Warn
	if warn == nil {
		warn = io.Discard
	}
	home, err := config.Home()
	if err != nil {
		return nil, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	root, err := config.ProjectRoot(wd)
	if err != nil {
		return nil, err
	}
	cfg, warnings, err := config.LoadConfig(home, root)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		fmt.Fprintln(warn, "infer: warning:", w)
	}
	a = &app{home: home, root: root, cfg: cfg, log: log}
	defer func() {
		if err != nil {
			a.Close()
			a = nil
		}
	}()

	if opts.Bridge {
		bu, warnings, berr := config.LoadBrowserUse(config.BrowserUsePath(home))
		for _, w := range warnings {
			fmt.Fprintln(warn, "infer: warning:", w)
		}
		switch {
		case berr != nil && opts.BridgeRequired:
			return a, berr
		case berr != nil:
			fmt.Fprintln(warn, "infer: the browser bridge is off:", berr)
			opts.Bridge = false
		case !bu.Enabled && opts.BridgeRequired:
			return a, fmt.Errorf("%s: enabled is false, so the browser bridge is off; set enabled: true to let the extension connect", config.DisplayPath(config.BrowserUsePath(home)))
		case !bu.Enabled:
			opts.Bridge = false
		}
		a.browserUse = bu
	}

	projDir := config.ProjectDir(home, root)
	if cfg.Storage.IsEnabled() {
		// Recovered problems (a torn last line after a crash) go to the log,
		// never straight to a terminal the TUI may own.
		warnStore := func(err error) { log.Warn("conversation store", "problem", err) }
		if a.store, err = store.Open(config.ConversationsDir(home, root), store.Options{Warn: warnStore, FS: opts.StoreFS}); err != nil {
			return a, err
		}
		if a.history, err = store.OpenHistory(filepath.Join(projDir, "history.jsonl")); err != nil {
			return a, err
		}
	} else {
		a.store = store.OpenMemory()
		a.history = store.MemoryHistory()
	}
	if err = config.EnsureDir(projDir); err != nil {
		return a, err
	}
	if a.grants, err = grants.Open(filepath.Join(projDir, "grants.json")); err != nil {
		return a, err
	}
	guard, err := bashguard.New(bashguard.Config{Root: root, Allow: cfg.Tools.Bash.Allow, Deny: cfg.Tools.Bash.Deny})
	if err != nil {
		return a, fmt.Errorf("%s: tools.bash: %w", config.DisplayPath(config.ConfigPath(home)), err)
	}

	cacheDir, cerr := config.CacheDir("models")
	if cerr != nil {
		log.Debug("no cache directory for model discovery", "err", cerr)
	}
	a.catalog = catalog.New(cfg, catalog.Options{Offline: demo.New(), CacheDir: cacheDir, ConfigPath: config.DisplayPath(config.ConfigPath(home))})

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
			return a, fmt.Errorf("unknown mode %q: use standard, plan, auto or auto-with-judge", m)
		}
		mode = parsed
	}
	effort, err := llm.ParseEffort(cfg.Agent.Effort)
	if err != nil {
		return a, err
	}
	model := cfg.Model
	if opts.Model != "" {
		model = opts.Model
	}
	if model == "" {
		model = a.catalog.Default()
	}
	if _, _, rerr := a.catalog.Resolve(model); rerr != nil {
		err := rerr
		if !strings.Contains(rerr.Error(), model) {
			err = fmt.Errorf("model %q: %w", model, rerr)
		}
		if opts.Model != "" {
			// --model is a command-line mistake, whichever command took
			// it: docs/headless.md gives such mistakes exit code 2.
			return a, exitError{exitUsage, err}
		}
		return a, err
	}

	a.sandbox = sandboxFor(cfg)
	if w := a.sandbox.Warning(); w != "" {
		fmt.Fprintln(warn, "infer: warning:", w)
		log.Warn("sandbox: "+w, "sandbox", a.sandbox.String())
	} else {
		log.Info("sandbox in force for commands nobody approved", "sandbox", a.sandbox.String(), "network", cfg.Sandbox.NetworkAllowed())
	}
	env := &tools.Env{
		Root: root, ArtifactsDir: config.ArtifactsDir(home, root), SecretEnv: secretEnv(cfg),
		Sandbox: a.sandbox, Confine: confinePolicy(cfg, home),
	}
	if !opts.Bridge {
		env.BrowserOff = opts.NoBridgeWhy
		if env.BrowserOff == "" {
			env.BrowserOff = bridgeOffReason(home)
		}
	}
	a.env = env
	a.mcp = startMCP(cfg, home, root, a.sandbox, log)
	timeouts := map[string]time.Duration{}
	if d := cfg.Tools.Bash.Timeout.Std(); d > 0 {
		timeouts["Bash"] = d
	}
	// A browser tool waits for the extension's answer: give it the
	// configured command timeout plus a margin, so extension.command_timeout
	// is what actually bounds a browser command, above or below 30 s.
	if d := a.browserUse.Extension.CommandTimeout.Std(); opts.Bridge && d > 0 {
		for _, name := range []string{"BrowserNavigate", "BrowserClick", "BrowserType", "BrowserRead", "BrowserScreenshot", "BrowserTabs"} {
			timeouts[name] = d + 5*time.Second
		}
	}
	var ws *session.Workspace
	judgeModel := func() string {
		if cfg.Agent.JudgeModel != "" {
			return cfg.Agent.JudgeModel
		}
		return ws.Model()
	}
	ws, err = session.New(session.Options{
		Store: a.store, History: a.history, Catalog: a.catalog,
		Model: model, Mode: mode, Effort: effort, Temperature: cfg.Agent.Temperature,
		MaxSteps: cfg.Agent.MaxSteps, System: cfg.Agent.SystemPrompt,
		Overrides: a.catalog.Overrides,
		Tools: tools.PipelineConfig{
			Env: env, Guard: guard, Grants: a.grants, Timeouts: timeouts,
			Judge:   session.Judge{Catalog: a.catalog, Model: judgeModel},
			Sources: []tools.Source{a.mcp},
		},
		Skills: liveSkills.List,
		Titler: session.ModelTitler(a.catalog),
		Logger: log,
	})
	if err != nil {
		return a, err
	}
	a.ws = ws

	if opts.Bridge {
		port := a.browserUse.Extension.Port
		if opts.PortSet {
			port = opts.Port
		}
		a.sync = panelsync.New(ws, log)
		a.srv, err = bridge.Listen(bridge.Options{
			Port: port, Token: a.browserUse.Extension.Token,
			CommandTimeout: a.browserUse.Extension.CommandTimeout.Std(),
			ArtifactsDir:   env.ArtifactsDir,
			Panel:          a.sync, Logger: log,
			OnStatus: ws.SetBrowserStatus,
		})
		if err != nil {
			return a, err
		}
		env.Browser = ws.WatchBrowser(a.srv)
		a.tokens = watchToken(config.BrowserUsePath(home), a.srv, a.browserUse.Extension.Token, a.browserUse.Extension.Port, log, tokenCheckEvery)
		a.mcpSocket = listenMCP(home, a.tokens.Token, ws, log)
	}

	// Discovery runs in the background and never delays startup; a new
	// list is announced to front ends when it lands.
	ctx, cancel := context.WithCancel(context.Background())
	a.stopDiscovery = cancel
	a.discoveryDone = make(chan struct{})
	go func() {
		defer close(a.discoveryDone)
		if err := a.catalog.Refresh(ctx); err != nil && !errors.Is(err, context.Canceled) {
			log.Debug("model discovery", "err", err)
		}
		ws.ModelsChanged()
	}()
	return a, nil
}

// Close shuts down so that nothing is lost: the workspace first (the
// running turn is interrupted and finishes writing, publishing its last
// events), then the panel mirror forwards what was published, then the
// bridge sends what is queued and closes the connection, and the stores
// last.
func (a *app) Close() error {
	if a == nil {
		return nil
	}
	if a.stopDiscovery != nil {
		a.stopDiscovery()
		<-a.discoveryDone
	}
	if a.mcpSocket != nil {
		a.mcpSocket.Close() // cancels its calls, withdrawing their approvals
	}
	if a.ws != nil {
		a.ws.Close()
	}
	if a.mcp != nil {
		a.mcp.Close()
	}
	if a.sync != nil {
		a.sync.Close()
	}
	if a.tokens != nil {
		a.tokens.Close()
	}
	if a.srv != nil {
		a.srv.Close()
	}
	var errs []error
	if a.history != nil {
		errs = append(errs, a.history.Close())
	}
	if a.env != nil {
		errs = append(errs, a.env.Close())
	}
	return errors.Join(errs...)
}

// sandboxFor is the sandbox config.yaml asks for: off, or the best this
// system has (which may be none; then every command asks).
func sandboxFor(cfg config.Config) *sandbox.Sandbox {
	if cfg.Sandbox.Mode == config.SandboxOff {
		return sandbox.Disabled()
	}
	return sandbox.Detect()
}

// confinePolicy is the sandbox's policy from config.yaml: what may be
// written beside the project, and what may never be read — infer's home
// (the bridge token, conversations, grants), the person's secret stores
// and sandbox.deny_read.
func confinePolicy(cfg config.Config, home string) sandbox.Policy {
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
	deny := append([]string{home}, sandbox.SecretStores(userHome)...)
	return sandbox.Policy{
		Writable: expand(cfg.Sandbox.Writable),
		DenyRead: append(deny, expand(cfg.Sandbox.DenyRead)...),
		Network:  cfg.Sandbox.NetworkAllowed(),
		Home:     userHome,
	}
}

// secretEnv names the variables Bash commands must not inherit: every
// provider key infer may read, and INFER_TOKEN, which people export for
// infer-sim and which holds the bridge token.
func secretEnv(cfg config.Config) []string {
	return append(catalog.KeyVariables(cfg), "INFER_TOKEN")
}

// newLogger builds the stderr logger for --log-format.
func newLogger(w io.Writer, format string, level slog.Level) (*slog.Logger, error) {
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(format) {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usageError{fmt.Errorf("unknown --log-format %q: use text or json", format)}
}
