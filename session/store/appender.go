package store

import (
	"io/fs"
	"os"
	"sync"
)

// An agent's tool loop appends to one conversation twice per call, and
// opening the transcript for each append (open, the runtime's descriptor
// set-up, close) cost about a fifth of the store's share of the loop, the
// fsync aside. So the store keeps the transcripts it appends to open
// between appends, a few at a time. Nothing else changes: every append
// still takes the exclusive flock, checks under it that the path still
// names the open file (another process may have replaced or deleted it),
// takes the size from the descriptor, and fsyncs before it returns. The
// lock is released by unlocking instead of by closing.

// maxAppenders bounds how many transcripts a store keeps open: a process
// appends to the conversation it runs, and now and then to another.
const maxAppenders = 4

// appender is a conversation's transcript as this store keeps it open.
type appender struct {
	// mu serialises this store's appends to the conversation. The flock
	// cannot: it belongs to the open file description, which every
	// goroutine of the store shares.
	mu sync.Mutex
	f  File // nil until opened, and after a failure
	// retired says the store no longer keeps this appender (it was
	// evicted, or its conversation deleted); whoever holds it closes the
	// file after use.
	retired bool
}

// appenderFor returns the appender of conversation id, making room for
// it if needed.
func (s *Store) appenderFor(id string) *appender {
	s.appMu.Lock()
	defer s.appMu.Unlock()
	if a := s.apps[id]; a != nil {
		return a
	}
	if s.apps == nil {
		s.apps = make(map[string]*appender)
	}
	for old := range s.apps {
		if len(s.apps) < maxAppenders {
			break
		}
		s.dropLocked(old)
	}
	a := &appender{}
	s.apps[id] = a
	return a
}

// dropAppender closes conversation id's transcript if this store keeps it
// open, as deleting it must (some systems refuse to remove an open file).
func (s *Store) dropAppender(id string) {
	s.appMu.Lock()
	defer s.appMu.Unlock()
	s.dropLocked(id)
}

// dropLocked retires the appender of id; the caller holds appMu. An append
// in progress finishes first: appenders never take appMu.
func (s *Store) dropLocked(id string) {
	a := s.apps[id]
	if a == nil {
		return
	}
	delete(s.apps, id)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.retired = true
	if a.f != nil {
		a.f.Close()
		a.f = nil
	}
}

// lock returns the transcript at path open for appending and exclusively
// locked, with its information taken under the lock: the file kept open
// when path still names it, else a newly opened one. The caller holds
// a.mu and calls release when done.
func (a *appender) lock(fsys FS, path string) (File, fs.FileInfo, error) {
	if a.f != nil {
		if err := flock(a.f, lockExclusive); err == nil {
			held, err := a.f.Stat()
			if err == nil {
				cur, err := fsys.Stat(path)
				if err == nil && os.SameFile(held, cur) {
					return a.f, held, nil
				}
			}
		}
		// Replaced, deleted or failing: start again from the path, which
		// reports a missing conversation as opening it always did.
		a.f.Close()
		a.f = nil
	}
	f, fi, err := openLockedStat(fsys, path, os.O_RDWR|os.O_APPEND, lockExclusive)
	if err != nil {
		return nil, nil, err
	}
	a.f = f
	return f, fi, nil
}

// release ends an append: it unlocks the file and keeps it open for the
// next one when keep is set and the appender is still the store's, and
// closes it (which also unlocks it) otherwise.
func (a *appender) release(keep bool) {
	if a.f == nil {
		return
	}
	if keep && !a.retired && funlock(a.f) == nil {
		return
	}
	a.f.Close()
	a.f = nil
}
