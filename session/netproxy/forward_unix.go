//go:build unix

package netproxy

import (
	"errors"
	"os"
	"os/exec"
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

// replaceWith executes name in this process's place, found in PATH as
// exec.Command would find it; it returns only when that fails.
func replaceWith(name string, args []string) error {
	path, err := exec.LookPath(name)
	if err != nil && !errors.Is(err, exec.ErrDot) {
		return err
	}
	return syscall.Exec(path, append([]string{name}, args...), os.Environ())
}
