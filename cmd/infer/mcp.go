package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/infer-workspace/infer/assemble"
	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/bridge/mcppanel"
	"github.com/infer-workspace/infer/bridge/seat"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/mcpserver"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/tools/grants"
)

func newMCPCmd() *cobra.Command {
	var port int
	var logFormat string
	var verbose bool
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Offer the person's browser to other agents as an MCP server over stdio",
		Long: `mcp speaks the Model Context Protocol on stdin and stdout, so that Claude Code,
Codex, Cursor and other agents can use the browser you paired with infer:
browser_navigate, browser_click, browser_type, browser_read,
browser_screenshot and browser_tabs, with infer's redaction, page-text caps
and artifacts. Screenshots come back as images.

When infer or infer serve already runs for this home, the calls go through
it: they show in its chat and ask in its approvals pane and the browser
panel, as the agent's own calls do. Otherwise infer mcp hosts the bridge
itself (on extension.port, or --port) with nobody to ask, so it follows
mcp.standalone.mode in config.yaml: standard (the default) runs the
read-only tools (read, screenshot, tabs) and the others only where a saved
"always allow" covers them; plan runs the read-only tools only; auto runs
everything. When another standalone infer mcp already hosts the bridge,
this one uses its browser, and takes the bridge over when it stops. If the
infer these calls go through stops, infer mcp exits with a message saying
so; the MCP client can start it again.

Logs go to stderr; stdout carries only MCP.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := bridgeCommandStart(cmd, port, verbose, logFormat)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runMCP(ctx, cmd.InOrStdin(), cmd.OutOrStdout(), log, port, cmd.Flags().Changed("port"))
		},
	}
	cmd.Flags().IntVar(&port, "port", 0, "bridge port when no infer runs (default: extension.port from browser_use.yaml; 0 picks a free one)")
	cmd.Flags().StringVar(&logFormat, "log-format", "text", "log format on stderr: text or json")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "log debug details")
	return cmd
}

// runMCP serves MCP on in and out until the client leaves or ctx ends:
// through the infer that runs for this home when there is one, else on
// its own.
func runMCP(ctx context.Context, in io.Reader, out io.Writer, log *slog.Logger, port int, portSet bool) error {
	home, err := homeDir(ctx)
	if err != nil {
		return err
	}
	bu, _, err := config.LoadBrowserUse(config.BrowserUsePath(home))
	if err != nil {
		return err
	}
	if !bu.Enabled {
		return fmt.Errorf("%s: enabled is false, so the browser is off; set enabled: true to use it", config.DisplayPath(config.BrowserUsePath(home)))
	}
	path := mcpserver.SocketPath(home)
	conn, err := mcpserver.Dial(ctx, path, bu.Extension.Token)
	switch {
	case err == nil:
		log.Info("going through the running infer: calls show in its chat and ask in its approvals", "socket", path)
		return proxy(ctx, in, out, conn)
	case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ECONNREFUSED):
	default:
		return fmt.Errorf("infer mcp: %w", err)
	}
	return runMCPStandalone(ctx, in, out, log, home, bu, port, portSet)
}

// proxy copies MCP between the client and the running infer until one of
// them ends.
func proxy(ctx context.Context, in io.Reader, out io.Writer, conn net.Conn) error {
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	var clientDone atomic.Bool
	go func() {
		_, _ = io.Copy(conn, in)
		// The client is done: tell infer, which ends the session and
		// closes the connection, ending the copy below.
		clientDone.Store(true)
		if uc, ok := conn.(*net.UnixConn); ok {
			_ = uc.CloseWrite()
		}
	}()
	_, err := io.Copy(out, conn)
	switch {
	case ctx.Err() != nil:
		return nil
	case err != nil && !errors.Is(err, net.ErrClosed):
		return fmt.Errorf("infer mcp: the connection to the running infer broke: %w", err)
	case !clientDone.Load():
		// The infer ended the connection while the client still talks:
		// it stopped. Its session (and what the client was told at
		// initialize) is gone with it, so this process cannot go on
		// quietly; exiting with a reason lets the client start it again.
		return errors.New("infer mcp: the infer these calls went through stopped; start the MCP client (or this server) again to go through the next infer")
	}
	return nil
}

// runMCPStandalone hosts the bridge and runs the browser tools through a
// pipeline with nobody to ask, in mcp.standalone.mode.
func runMCPStandalone(ctx context.Context, in io.Reader, out io.Writer, log *slog.Logger, home string, bu config.BrowserUse, port int, portSet bool) error {
	wd, err := workDir(ctx)
	if err != nil {
		return err
	}
	root, err := config.ProjectRoot(wd)
	if err != nil {
		return err
	}
	cfg, warnings, err := config.LoadConfig(home, root)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		log.Warn(w)
	}
	mode, ok := tools.ParseMode(cfg.MCP.Standalone.Mode)
	if !ok {
		return fmt.Errorf("mcp.standalone.mode %q: use standard, plan or auto", cfg.MCP.Standalone.Mode)
	}
	projDir := config.ProjectDir(home, root)
	if err := config.EnsureDir(projDir); err != nil {
		return err
	}
	gs, err := grants.Open(filepath.Join(projDir, "grants.json"))
	if err != nil {
		return err
	}
	if !portSet {
		port = bu.Extension.Port
	}
	artifacts := config.ArtifactsDir(home, root)
	// A seat, as every infer has: this one holds the bridge, or uses the
	// browser of the infer (another standalone `infer mcp`) that holds it.
	st, err := seat.New(seat.Options{
		Bridge: bridge.Options{
			Port: port, Token: bu.Extension.Token, CommandTimeout: bu.Extension.CommandTimeout.Std(),
			ArtifactsDir: artifacts, Project: root, Logger: log,
		},
		Home: home, Root: root, Command: "infer mcp",
		ConnectWait: bu.Extension.ConnectWait.Std(), Logger: log,
	})
	if err != nil {
		return err
	}
	serveCtx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	// What this seat reports to, all in one place. The panel is answered
	// too while this infer holds the bridge: it talks to whoever does.
	panel := mcppanel.New(string(mode), log)
	hooks := seat.Hooks{Panel: panel}
	go func() { served <- st.Serve(serveCtx, hooks) }()
	defer func() {
		cancel()
		<-served
		st.Close()
	}()
	env := &tools.Env{Root: root, ArtifactsDir: artifacts, Browser: st, SecretEnv: assemble.SecretEnv(cfg),
		ArtifactsMaxBytes: cfg.Storage.ArtifactsMaxBytes()}
	defer env.Close()
	timeouts := map[string]time.Duration{}
	if d := bu.Extension.CommandTimeout.Std(); d > 0 {
		for _, t := range mcpserver.Tools {
			timeouts[t.Infer] = bu.Extension.ConnectWait.Std() + d + 5*time.Second
		}
	}
	// No Approver: a call the policy would ask about is refused, with
	// the reason, since nobody is there to answer.
	pl := tools.NewPipeline(tools.PipelineConfig{Env: env, Grants: gs, Timeouts: timeouts})
	if h, ok := st.Holder(); ok {
		log.Info("no infer with a workspace runs for this home: using the browser of "+seat.Describe(h)+", nobody to ask", "mode", mode, "project", root)
	} else {
		log.Info("no infer runs for this home: hosting the browser bridge, nobody to ask", "url", st.URL(), "mode", mode, "project", root)
	}
	s := mcpserver.New(func(ctx context.Context, id, name, args string) tools.Outcome {
		return panel.Ran(pl.Run(ctx, tools.Call{ID: id, Name: name, Args: args, Origin: tools.OriginMCP}, mode))
	}, versionString())
	err = s.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
