package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/infer-workspace/infer/assemble"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/store"
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
	// Command is how this infer was started ("infer", "infer serve", …),
	// for the other infers that use its browser to say whose it is.
	Command string
	// HostApprovals says a person at infer's terminal answers whether a
	// confined command may reach a host (see assemble.Options).
	HostApprovals bool
}

// openApp finds the project (from the working directory wd) and the
// configuration (in infer's home and the project), then assembles infer
// (see package assemble: the infer it builds is whole, token watch and
// MCP socket included). On error nothing is left running.
func openApp(home, wd string, opts appOptions) (*assemble.Infer, error) {
	warn := opts.Warn
	if warn == nil {
		warn = io.Discard
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
	var bu config.BrowserUse
	if opts.Bridge {
		var berr error
		bu, warnings, berr = config.LoadBrowserUse(config.BrowserUsePath(home))
		for _, w := range warnings {
			fmt.Fprintln(warn, "infer: warning:", w)
		}
		switch {
		case berr != nil && opts.BridgeRequired:
			return nil, berr
		case berr != nil:
			fmt.Fprintln(warn, "infer: the browser bridge is off:", berr)
			opts.Bridge = false
		case !bu.Enabled && opts.BridgeRequired:
			return nil, fmt.Errorf("%s: enabled is false, so the browser bridge is off; set enabled: true to let the extension connect", config.DisplayPath(config.BrowserUsePath(home)))
		case !bu.Enabled:
			opts.Bridge = false
		}
	}
	browserOff := ""
	if !opts.Bridge {
		browserOff = opts.NoBridgeWhy
		if browserOff == "" {
			browserOff = bridgeOffReason(home)
		}
	}
	in, err := assemble.New(assemble.Options{
		Home: home, Root: root, Config: cfg,
		Bridge: opts.Bridge, BrowserUse: bu, Port: opts.Port, PortSet: opts.PortSet,
		BrowserOff: browserOff,
		Model:      opts.Model, Mode: opts.Mode, StoreFS: opts.StoreFS,
		Version: versionString(), Log: opts.Log, Warn: warn,
		Command: opts.Command, HostApprovals: opts.HostApprovals,
	})
	var bad *assemble.ModelError
	if errors.As(err, &bad) && opts.Model != "" {
		// --model is a command-line mistake, whichever command took it:
		// docs/headless.md gives such mistakes exit code 2.
		return nil, exitError{exitUsage, err}
	}
	if err != nil {
		return nil, err
	}
	return in, nil
}

// bridgeCommandStart checks --port and builds the stderr logger, as every
// command that serves the bridge on its own (serve, mcp) must first.
func bridgeCommandStart(cmd *cobra.Command, port int, verbose bool, logFormat string) (*slog.Logger, error) {
	if cmd.Flags().Changed("port") && (port < 0 || port > 65535) {
		return nil, usageError{fmt.Errorf("--port %d: use a number from 1 to 65535, or 0 for a free port", port)}
	}
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	return newLogger(cmd.ErrOrStderr(), logFormat, level)
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
