package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	stdlog "log"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/adrg/xdg"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/infer-workspace/infer/assemble"
	"github.com/infer-workspace/infer/bridge/seat"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/sandbox"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/tui"
)

// tuiOptions are the root command's flags: `infer` with no subcommand
// opens the terminal workspace.
type tuiOptions struct {
	model, mode string
	port        int
	portSet     bool
	// cont resumes the project's most recent conversation (-c).
	cont bool
}

// setupTUI makes the root command open the terminal workspace and gives
// it the workspace's flags.
func setupTUI(root *cobra.Command) {
	var o tuiOptions
	root.Flags().StringVar(&o.model, "model", "", "model to start with, as provider/model (default: model in config.yaml, else the first available)")
	root.Flags().StringVar(&o.mode, "mode", "", "agent mode to start with: standard, plan, auto or auto-with-judge (default: agent.mode in config.yaml)")
	root.Flags().BoolVarP(&o.cont, "continue", "c", false, "resume this project's most recent conversation instead of starting a new one")
	root.Flags().IntVar(&o.port, "port", 0, "port for the browser extension at 127.0.0.1 (default: extension.port from browser_use.yaml; 0 picks a free port)")
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if o.mode != "" {
			if _, ok := tools.ParseMode(o.mode); !ok {
				return usageError{fmt.Errorf("unknown --mode %q: use standard, plan, auto or auto-with-judge", o.mode)}
			}
		}
		o.portSet = cmd.Flags().Changed("port")
		if o.portSet && (o.port < 0 || o.port > 65535) {
			return usageError{fmt.Errorf("--port %d: use a number from 1 to 65535, or 0 for a free port", o.port)}
		}
		if !interactive(cmd) {
			// Piped or scripted: there is no screen to draw on, and the
			// help is what someone running `infer | less` wants.
			fmt.Fprintln(cmd.ErrOrStderr(), "infer: not a terminal, so the workspace cannot open; `infer serve` runs it without one")
			return cmd.Help()
		}
		return runTUI(cmd.Context(), cmd.ErrOrStderr(), o)
	}
}

// interactive reports whether both ends of the command are a terminal.
func interactive(cmd *cobra.Command) bool {
	out, ok := cmd.OutOrStdout().(*os.File)
	return ok && term.IsTerminal(out.Fd()) && term.IsTerminal(os.Stdin.Fd())
}

// runTUI opens the workspace in the current project, serves the bridge in
// the background and shows the TUI until the person quits or a signal
// (SIGINT, SIGTERM, SIGHUP) ends it; then everything is shut down in order
// and every write finishes.
//
// While the TUI owns the terminal nothing may print to it: diagnostics go
// to a log file, and warnings found while starting are handed to the TUI.
func runTUI(ctx context.Context, stderr io.Writer, o tuiOptions) (err error) {
	logPath, logFile, err := openTUILog()
	if err != nil {
		return err
	}
	defer logFile.Close()
	log := slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelInfo}))
	defer quietDefaultLoggers(log)()

	// Before the workspace is built: the answer decides its configuration.
	if quit, err := askTrustAtStart(ctx, log); err != nil || quit {
		return err
	}

	home, wd, err := dirs(ctx)
	if err != nil {
		return err
	}
	var warnings bytes.Buffer
	a, err := openApp(home, wd, appOptions{
		Bridge: true, Port: o.port, PortSet: o.portSet,
		Model: o.model, Mode: o.mode,
		Log: log, Warn: &warnings, Command: "infer",
		// Only here is a person at infer's own terminal to say whether a
		// confined command may reach a host; serve, headless and mcp
		// refuse hosts that are neither allowed nor granted.
		HostApprovals: true,
	})
	if err != nil {
		io.Copy(stderr, &warnings) // the TUI never started: the terminal is still ours
		return err
	}
	defer func() {
		if cerr := a.Close(); err == nil {
			err = cerr
		}
	}()
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGHUP, syscall.SIGTERM)
	defer stop()
	ctx, hungUp := context.WithCancel(ctx)
	defer hungUp()
	go watchTerminal(ctx, os.Stdout.Fd(), terminalCheckEvery, func() {
		log.Warn("the terminal went away (hung up); shutting down")
		hungUp()
	})
	if a.Seat != nil {
		serveCtx, stopServe := context.WithCancel(ctx)
		served := make(chan error, 1)
		go func() { served <- a.Serve(serveCtx) }()
		// Runs before a.Close: ending serveCtx closes the workspace, the
		// panel and the bridge in that order (see assemble.Infer.Serve), so
		// the panel gets the end of the turn a quit or a signal interrupts.
		defer func() {
			stopServe()
			if err := <-served; err != nil {
				log.Warn("browser bridge", "err", err)
			}
		}()
	}

	opts := tui.Options{
		Root:   a.Root,
		Token:  a.BrowserUse.Extension.Token,
		Port:   a.BrowserUse.Extension.Port,
		Grants: a.Grants,
		MCP:    mcpView{a.MCP},
	}
	var banner string
	if a.Seat != nil {
		opts.Port = a.Seat.Port()
		opts.CurrentToken = a.Token
		log.Info("infer started", "project", a.Root, "url", a.Seat.URL(), "holding", a.Seat.Holding(), "model", a.Workspace.Model(), "mode", a.Workspace.Mode())
		if h, ok := a.Seat.Holder(); ok {
			// A second infer opens instead of exiting; this says whose
			// browser it drives, and that it carries on when that one stops.
			banner = "This infer uses the browser of " + seat.Describe(h) + ", which holds the extension's port; it takes the port over when that infer stops. The browser pane says who holds it now."
		}
	} else {
		opts.BrowserOff = bridgeOffReason(a.Home)
		log.Info("infer started without the browser bridge", "project", a.Root, "why", opts.BrowserOff)
	}
	opts.Notices = startupNotices(warnings.String(), opts.BrowserOff)
	if banner != "" {
		opts.Notices = append([]string{banner}, opts.Notices...)
	}
	if o.cont {
		if n := continueLatest(a); n != "" {
			opts.Notices = append(opts.Notices, n)
		}
	}
	switch {
	case a.Sandbox.Kind() == sandbox.Off:
		opts.Unconfined = "sandbox off"
	case !a.Sandbox.Confines():
		opts.Unconfined = "no sandbox: commands ask"
	}

	if err := tui.Run(ctx, a.Workspace, opts); err != nil {
		log.Error("terminal UI", "err", err)
		return fmt.Errorf("the terminal UI stopped: %w (details in %s)", err, config.DisplayPath(logPath))
	}
	log.Info("infer quit")
	return nil
}

// continueLatest makes the project's most recent conversation the
// workspace's active one for -c, and returns a notice when there is none
// to resume or it cannot be read; the workspace then starts a new one.
func continueLatest(a *assemble.Infer) string {
	id, err := latestConversation(a.Store)
	if err == nil {
		_, err = a.Workspace.Resume(id)
	}
	switch {
	case errors.Is(err, errNothingToContinue):
		return "--continue: this project has no earlier conversation; this is a new one."
	case err != nil:
		return fmt.Sprintf("--continue: the last conversation could not be resumed (%v); this is a new one.", err)
	}
	return ""
}

// terminalCheckEvery is how often watchTerminal asks whether the terminal
// is still there.
const terminalCheckEvery = time.Second

// watchTerminal calls gone once the terminal on fd has hung up, and
// returns then or when ctx ends. A terminal that closes normally sends
// SIGHUP through the shell that owns it, but not every owner passes it on
// (sh -c, an ssh session whose connection dropped), and Bubble Tea reads
// the end of its input as "no more keys" and keeps running: infer would
// stay behind, holding the bridge's port, with nobody to see it. On Linux
// a hung-up terminal answers every request with EIO, which is what is
// asked here; where a system answers otherwise, SIGHUP remains the signal.
func watchTerminal(ctx context.Context, fd uintptr, every time.Duration, gone func()) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, _, err := term.GetSize(fd); errors.Is(err, syscall.EIO) {
				gone()
				return
			}
		}
	}
}

// maxLogBytes is the size at which the log is moved aside at start.
const maxLogBytes = 8 << 20

// openTUILog opens infer.log under the XDG state directory for appending,
// readable only by the person; a log past maxLogBytes is kept once as
// infer.log.1 and a new one started.
func openTUILog() (string, *os.File, error) {
	path, err := xdg.StateFile(filepath.Join("infer", "infer.log"))
	if err != nil {
		return "", nil, fmt.Errorf("no place for infer's log (set XDG_STATE_HOME to a writable directory): %w", err)
	}
	if st, err := os.Stat(path); err == nil && st.Size() > maxLogBytes {
		if err := os.Rename(path, path+".1"); err != nil {
			return "", nil, fmt.Errorf("rotating %s: %w", path, err)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return "", nil, fmt.Errorf("opening infer's log: %w (set XDG_STATE_HOME to a writable directory)", err)
	}
	return path, f, nil
}

// quietDefaultLoggers sends what libraries log through slog's and log's
// defaults to log, so nothing draws over the TUI, and returns a function
// that restores them.
func quietDefaultLoggers(log *slog.Logger) (restore func()) {
	prev := slog.Default()
	w, flags := stdlog.Writer(), stdlog.Flags()
	slog.SetDefault(log)
	return func() {
		slog.SetDefault(prev)
		stdlog.SetOutput(w)
		stdlog.SetFlags(flags)
	}
}

// bridgeOffReason says why openApp left the bridge off and what to do.
func bridgeOffReason(home string) string {
	path := config.BrowserUsePath(home)
	_, _, err := config.LoadBrowserUse(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return config.DisplayPath(path) + " does not exist: run `infer init` to create the pairing token, then start infer again."
	case err != nil:
		return err.Error() + " Fix it, then start infer again."
	}
	return "enabled is false in " + config.DisplayPath(path) + ": set enabled: true and start infer again to let the extension connect."
}

// startupNotices turns openApp's warnings into lines for the chat. The one
// about the bridge is left out when the browser pane already says it.
func startupNotices(warnings, bridgeOff string) []string {
	var out []string
	for _, line := range strings.Split(warnings, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(line, "infer: "))
		if line == "" || strings.HasPrefix(line, "the browser bridge is off") && bridgeOff != "" {
			continue
		}
		out = append(out, line)
	}
	return out
}
