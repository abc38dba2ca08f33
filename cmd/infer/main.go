// Command infer is a terminal workspace where a person and an AI agent work
// together, including in the person's own browser through an extension
// that dials infer's local WebSocket bridge.
//
// The main package only parses the command line, wires the libraries and
// maps errors to exit codes: 0 success, 1 failure, 2 usage error.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/infer-workspace/infer/internal/reaper"
	"github.com/infer-workspace/infer/session/netproxy"
)

func main() {
	// A reaper started for an approved command is this binary again; it
	// runs and exits here, before anything else.
	reaper.Main()
	// Inside the sandbox infer's own binary is the network forwarder of a
	// confined command (see session/netproxy); then it is nothing else.
	netproxy.MaybeForward()
	// Subcommands that run until stopped (serve, headless, the TUI) watch
	// this context, so Ctrl+C, SIGTERM and a hang-up (a closed terminal, a
	// dropped ssh session) end them cleanly, keeping what was written,
	// instead of killing them mid-write.
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		// Under nohup SIGHUP is ignored on purpose, so that infer outlives
		// the terminal; asking for it would undo that.
		sigs = append(sigs, syscall.SIGHUP)
	}
	ctx, stop := signal.NotifyContext(context.Background(), sigs...)
	stopProfile := startCPUProfile()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stopProfile()
	stop()
	os.Exit(code)
}
