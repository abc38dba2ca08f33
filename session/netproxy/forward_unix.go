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
// Only signals whose default in a Go program is a plain death are raised
// again: for a crash's signals (SIGSEGV, SIGABRT, SIGQUIT…) the runtime
// would print its own goroutines and exit 2, and it ignores SIGPIPE, so
// those end with 128+n, as a shell reports them.
func exitLike(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		if plainDeath[ws.Signal()] {
			syscall.Kill(os.Getpid(), ws.Signal())
		}
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// plainDeath are the signals that end a Go program at once, without a
// traceback, once nothing is notified of them.
var plainDeath = map[syscall.Signal]bool{
	syscall.SIGINT: true, syscall.SIGTERM: true, syscall.SIGHUP: true, syscall.SIGKILL: true,
	syscall.SIGUSR1: true, syscall.SIGUSR2: true, syscall.SIGALRM: true,
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
