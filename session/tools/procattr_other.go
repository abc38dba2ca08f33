//go:build !linux

package tools

import "syscall"

// childProcAttr puts a command in a process group of its own, so that a
// timeout or interrupt stops everything it started; a confined one also
// in a session of its own, without the person's terminal. This system
// has no parent-death signal.
func childProcAttr(confined bool) *syscall.SysProcAttr {
	if confined {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return &syscall.SysProcAttr{Setpgid: true}
}
