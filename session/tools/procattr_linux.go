package tools

import "syscall"

// childProcAttr puts a command in a process group of its own and has the
// kernel kill it when infer dies, even by SIGKILL, so that no command a
// crash interrupted keeps running unwatched. A confined command also gets
// a session of its own, without the person's terminal (see
// sandbox.Sandbox.Command); bubblewrap's pid namespace then takes down
// everything it started when bwrap goes.
func childProcAttr(confined bool) *syscall.SysProcAttr {
	if confined {
		return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	}
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
