//go:build unix

package netproxy

import (
	"os"
	"syscall"
)

// terminating are the signals the forwarder outlives.
var terminating = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// exitLike ends as the command did: killed by the same signal, so the
// caller sees the signal and not an exit code, or with its exit code.
func exitLike(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		syscall.Kill(os.Getpid(), ws.Signal())
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}
