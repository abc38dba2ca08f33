//go:build unix

package store

import (
	"errors"
	"syscall"
)

// lockMode selects a shared (readers) or exclusive (writers) advisory lock.
type lockMode int

const (
	lockShared lockMode = iota
	lockExclusive
)

// flock takes an advisory lock on f, waiting for it. flock(2) locks belong to
// the open file description, so two descriptors opened separately exclude
// each other even inside one process; that is what lets goroutines and other
// infer processes share a conversation file. The one exception is the
// descriptor a store keeps open for its appends, which its goroutines share:
// a mutex orders those (see appender).
func flock(f File, mode lockMode) error {
	how := syscall.LOCK_SH
	if mode == lockExclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// tryFlock takes an exclusive advisory lock on f without waiting, and
// reports false when another open file description holds a lock on it.
// Like flock's, the lock goes with the descriptor: closing it, or the
// holder's death, releases it, so a crashed holder never leaves a
// conversation locked.
func tryFlock(f File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case !errors.Is(err, syscall.EINTR):
			return false, err
		}
	}
}

// funlock releases the lock flock took on f, for a caller that keeps f
// open.
func funlock(f File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// processGone reports whether no process has id pid. EPERM means one
// exists that this user may not signal.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
