//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: what the terminal emulator holds
// (master) and what a program in it sees (tty).
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("naming the pty: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("opening the pty's terminal: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// TestWatchTerminal: a terminal whose window closes (its master side
// closed, no signal sent) is noticed, once; a live one is not, and the
// watch ends with its context.
func TestWatchTerminal(t *testing.T) {
	t.Parallel()
	master, tty := openPTY(t)
	gone := make(chan struct{}, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		watchTerminal(ctx, tty.Fd(), 5*time.Millisecond, func() { gone <- struct{}{} })
	}()
	select {
	case <-gone:
		t.Fatal("a live terminal was taken for gone")
	case <-time.After(100 * time.Millisecond):
	}
	master.Close()
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the hung-up terminal was not noticed")
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not end after reporting")
	}
	if len(gone) != 0 {
		t.Fatal("reported more than once")
	}

	// A watch of a live terminal ends with its context.
	_, tty2 := openPTY(t)
	ctx2, cancel2 := context.WithCancel(context.Background())
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		watchTerminal(ctx2, tty2.Fd(), time.Millisecond, func() { t.Error("a live terminal was taken for gone") })
	}()
	time.Sleep(20 * time.Millisecond)
	cancel2()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the watch outlived its context")
	}
}
