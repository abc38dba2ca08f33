//go:build unix

package bashguard

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO where a glob or the link walk expects a folder must not stall the
// guard: opening a FIFO to read waits for a writer that never comes.
func TestFIFODoesNotBlock(t *testing.T) {
	g, root, _ := project(t, false)
	if err := syscall.Mkfifo(filepath.Join(root, "ff"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, cmd := range []string{"ls ff/*", "cat f*/x", "grep -R x ."} {
			g.Allowed(cmd, true)
			g.CheckAuto(cmd)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the guard blocked on a FIFO")
	}
}
