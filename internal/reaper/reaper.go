// Package reaper makes a command's whole process tree end with infer. A
// command a person chose to run outside the sandbox (or allowed where
// there is none) runs where no pid namespace holds what it starts: bash
// gets a parent-death signal, but a `sleep 1000 &` or a `setsid` daemon
// it left would outlive a crashed or killed infer. So infer starts such
// a command under a reaper: its own binary again, under a name of its
// own ("infer-reaper"), which becomes the subreaper of everything the
// command starts, tells infer when bash itself has ended, and, once
// infer is gone (even by SIGKILL) or stops the command, ends every
// process left under it.
//
// The reaper runs only in binaries whose main calls Main first; elsewhere
// Enabled is false and commands run as before.
package reaper

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// argv0 names the reaper process, so `ps` says what it is; envMarker
// confirms that infer started it (a program merely named so is not one)
// and gives the descriptor of its status pipe.
const (
	argv0     = "infer-reaper"
	envMarker = "INFER_REAPER"
)

var enabled bool

// Main runs the reaper and exits when this process was started as one, and
// otherwise records that the binary can start reapers. Call it first in
// main (and in TestMain of tests that run commands).
func Main() {
	if len(os.Args) >= 2 && os.Args[0] == argv0 {
		if fd, err := strconv.Atoi(os.Getenv(envMarker)); err == nil && fd > 2 {
			// syscall.Exit, not os.Exit: the reaper has nothing to flush,
			// and a race-enabled build would otherwise linger a second.
			syscall.Exit(serve(fd, os.Args[1:]))
		}
	}
	enabled = supported
}

// Enabled reports whether Wrap may be used: the system supports it and this
// binary called Main.
func Enabled() bool { return enabled }

// Watch follows one wrapped command.
type Watch struct {
	r, w   *os.File
	exited chan Exit
}

// Exit is how bash ended, as the reaper saw it.
type Exit struct {
	Status syscall.WaitStatus
	// Left is true when bash left processes running (which the reaper
	// waits for, or ends with infer); false when the reaper is about to
	// exit too.
	Left bool
}

// Wrap rewrites cmd, built to run a program directly, to run it under a
// reaper: the same program, arguments, folder, environment and output.
// Call Started after cmd.Start. The parent-death signal in
// cmd.SysProcAttr becomes SIGTERM, which the reaper catches to end the
// tree.
func Wrap(cmd *exec.Cmd) (*Watch, error) {
	self, err := selfPath()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	path := cmd.Path
	args := append([]string{argv0, path}, cmd.Args...)
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Path = self
	cmd.Args = args
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	cmd.Env = append(env[:len(env):len(env)], envMarker+"="+strconv.Itoa(2+len(cmd.ExtraFiles)))
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	armParentDeath(cmd.SysProcAttr)
	return &Watch{r: r, w: w, exited: make(chan Exit, 1)}, nil
}

// Started closes infer's copy of the status pipe's write end and starts
// listening for bash's end. Call it once cmd.Start has returned (even with
// an error).
func (w *Watch) Started() {
	w.w.Close()
	go func() {
		defer w.r.Close()
		var b [5]byte
		if n, _ := readFull(w.r, b[:]); n == len(b) {
			w.exited <- Exit{
				Status: decodeStatus(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24),
				Left:   b[4] != 0,
			}
		}
		close(w.exited)
	}()
}

// Exited yields how bash ended once it has, whatever it left running; it
// is closed without a value when the reaper died first.
func (w *Watch) Exited() <-chan Exit { return w.exited }

func readFull(f *os.File, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := f.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
