package tools

import "syscall"

// childProcAttr puts a command in a process group of its own and has the
// kernel kill it when infer dies, even by SIGKILL, so that no command a
// crash interrupted keeps running unwatched. (In the sandbox, bubblewrap's
// pid namespace also takes down everything the command started.)
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
