package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/infer-workspace/infer/assemble"
	"github.com/infer-workspace/infer/bridge/seat"
)

// seatLine says where this infer's browser is: the bridge it listens on,
// the infer whose browser it uses until that one stops, or why it has
// neither yet.
func seatLine(a *assemble.Infer) string {
	if h, ok := a.Seat.Holder(); ok {
		return "standing by: this infer uses the browser of " + seat.Describe(h) + ", and takes the port over when that one stops"
	}
	if a.Seat.Holding() {
		return "listening on " + a.Seat.URL()
	}
	return "waiting for the bridge's port: " + a.Seat.Status().Reason
}

func newServeCmd() *cobra.Command {
	var port int
	var logFormat string
	var verbose bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the workspace and the browser bridge without the terminal UI",
		Long: `serve runs the same workspace as "infer", without the terminal UI: the browser
extension's side panel (or any client of the bridge) chats with the agent,
approves tool calls and switches models and modes.

It prints one line with the bridge's address once it listens, logs to stderr,
and shuts down cleanly on SIGINT, SIGTERM or SIGHUP, finishing every write.
When another infer of yours already holds the bridge's port, serve stands
by: it uses that infer's browser, says so, and takes the port over when
that infer stops.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := bridgeCommandStart(cmd, port, verbose, logFormat)
			if err != nil {
				return err
			}
			home, wd, err := dirs(cmd.Context())
			if err != nil {
				return err
			}
			a, err := openApp(home, wd, appOptions{
				Bridge: true, BridgeRequired: true,
				Port: port, PortSet: cmd.Flags().Changed("port"),
				Log: log, Warn: cmd.ErrOrStderr(), Command: "infer serve",
			})
			if err != nil {
				return err
			}
			sigs := []os.Signal{syscall.SIGINT, syscall.SIGTERM}
			if !signal.Ignored(syscall.SIGHUP) { // nohup infer serve outlives the terminal
				sigs = append(sigs, syscall.SIGHUP)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), sigs...)
			defer stop()
			serveErr := make(chan error, 1)
			go func() { serveErr <- a.Serve(ctx) }()
			fmt.Fprintf(cmd.OutOrStdout(), "infer: %s (project %s, model %s)\n", seatLine(a), a.Root, a.Workspace.Model())
			log.Info("serving", "url", a.Seat.URL(), "holding", a.Seat.Holding(), "project", a.Root, "model", a.Workspace.Model(), "mode", a.Workspace.Mode())
			select {
			case <-ctx.Done():
				log.Info("shutting down")
			case err = <-serveErr:
			}
			if cerr := a.Close(); err == nil {
				err = cerr
			}
			return err
		},
	}
	cmd.Flags().IntVar(&port, "port", 0, "port to listen on at 127.0.0.1 (default: extension.port from browser_use.yaml; 0 picks a free port)")
	cmd.Flags().StringVar(&logFormat, "log-format", "text", "log format on stderr: text or json")
	cmd.Flags().BoolVarP(&verbose, "verbose", "v", false, "log debug details (frames dropped, discovery)")
	return cmd
}
