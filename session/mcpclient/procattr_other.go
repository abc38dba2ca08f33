//go:build !linux

package mcpclient

import "syscall"

// procAttr gives a stdio server a process group (or, confined, a session)
// of its own, so that kill reaches everything it started.
func procAttr(confined bool) *syscall.SysProcAttr {
	if confined {
		return &syscall.SysProcAttr{Setsid: true}
	}
	return &syscall.SysProcAttr{Setpgid: true}
}
