//go:build !unix

package store

// lockMode selects a shared (readers) or exclusive (writers) advisory lock.
type lockMode int

const (
	lockShared lockMode = iota
	lockExclusive
)

// flock is a no-op where flock(2) does not exist: a single infer process per
// project is then assumed. Appends are still single writes, and readers
// tolerate a torn last line, so the worst case is a lost concurrent append.
func flock(File, lockMode) error { return nil }

// tryFlock always succeeds where flock(2) does not exist, for the reason
// flock is a no-op: one infer process per project is assumed, so a
// conversation is never found held (see Store.Hold).
func tryFlock(File) (bool, error) { return true, nil }

// funlock is a no-op, as flock is.
func funlock(File) error { return nil }

// processGone cannot tell here, so every holder counts as alive.
func processGone(int) bool { return false }
