//go:build !linux

package tools

import "syscall"

// childProcAttr puts a command in a process group of its own, so that a
// timeout or interrupt stops everything it started. This system has no
// parent-death signal.
func childProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
