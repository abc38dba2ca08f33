//go:build !linux

package reaper

import (
	"os"
	"syscall"
)

// supported is false: the reaper needs Linux's child subreaper.
const supported = false

// decodeStatus is never used here: no reaper reports.
func decodeStatus(uint32) (ws syscall.WaitStatus) { return ws }

func selfPath() (string, error) { return os.Executable() }

func armParentDeath(*syscall.SysProcAttr) {}

func serve(statusFD int, args []string) int { return 127 }
