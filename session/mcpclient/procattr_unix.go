//go:build unix

package mcpclient

import (
	"syscall"
)

// kill stops whatever the server's process group still holds: a server
// may leave children behind, and CommandTransport waits only for the
// server itself.
func (p *process) kill() {
	if p == nil || p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
}
