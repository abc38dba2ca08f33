package mcpclient

import "syscall"

// procAttr gives a stdio server a process group (or, confined, a session)
// of its own, so that kill reaches everything it started, and has the
// kernel kill it when infer dies, so no server outlives a crash.
func procAttr(confined bool) *syscall.SysProcAttr {
	if confined {
		return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	}
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
