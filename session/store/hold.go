package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// ErrHeld matches (with errors.Is) every *HeldError: the conversation is
// open for writing in another infer process.
var ErrHeld = errors.New("conversation is open in another infer process")

// Holder describes the process that holds a conversation, as it wrote
// itself into the conversation's lock file.
type Holder struct {
	PID int `json:"pid"`
	// Command is the program and its subcommand, e.g. "infer serve".
	Command string    `json:"command,omitempty"`
	Host    string    `json:"host,omitempty"`
	Since   time.Time `json:"since"`
}

// HeldError is Hold's answer for a conversation that another writer
// holds.
type HeldError struct {
	ID string
	// Holder is who holds it; zero when the lock file could not be read
	// (its holder was still writing it).
	Holder Holder
}

// Where names the holding process for a person: "infer serve (pid 1234)",
// with the host added when it is not this one, or "another infer process"
// when the holder is unknown.
func (e *HeldError) Where() string {
	h := e.Holder
	if h.PID <= 0 {
		return "another infer process"
	}
	cmd := h.Command
	if cmd == "" {
		cmd = "infer"
	}
	if me, err := os.Hostname(); h.Host != "" && (err != nil || h.Host != me) {
		return fmt.Sprintf("%s (pid %d on %s)", cmd, h.PID, h.Host)
	}
	return fmt.Sprintf("%s (pid %d)", cmd, h.PID)
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("conversation %s is open in %s", e.ID, e.Where())
}

// Is makes errors.Is(err, ErrHeld) true.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// Hold is a claim on being the one writer of a conversation, from
// Store.Hold. Release it when done; process death releases it too.
type Hold struct {
	s    *Store
	id   string
	once sync.Once
}

// held is a conversation this store holds: the locked lock file, and how
// many Holds share it.
type held struct {
	f    File
	refs int
}

// lockPath is the file whose exclusive flock marks conversation id's writer.
func (s *Store) lockPath(id string) string {
	return filepath.Join(s.dir, id+".lock")
}

// Hold claims conversation id for writing turns, so that two processes
// never interleave their turns in it. It fails with a *HeldError, which
// names the holder, when another store holds it: another process, or
// another Store of this process (flock locks belong to open file
// descriptions, so two stores exclude each other as two processes do).
// Holds of one store nest: the same store may hold a conversation several
// times, and it is released with the last Release.
//
// Holding is cooperative. Appends do not check it, since each append is
// safe under its own file lock; what it prevents is two agents building
// turns on a history each believes to be the latest. A memory store's
// conversations belong to its process, so Hold always succeeds there.
func (s *Store) Hold(id string) (*Hold, error) {
	if !validID(id) {
		return nil, notFound(id)
	}
	if s.mem != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.mem[id] == nil {
			return nil, notFound(id)
		}
		return &Hold{}, nil
	}
	if _, err := s.fs.Stat(s.Path(id)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, notFound(id)
		}
		return nil, fmt.Errorf("opening conversation %s: %w", id, err)
	}
	s.holdMu.Lock()
	defer s.holdMu.Unlock()
	if h := s.holds[id]; h != nil {
		h.refs++
		return &Hold{s: s, id: id}, nil
	}
	f, err := s.lockFile(id)
	if err != nil {
		return nil, err
	}
	if s.holds == nil {
		s.holds = make(map[string]*held)
	}
	s.holds[id] = &held{f: f, refs: 1}
	return &Hold{s: s, id: id}, nil
}

// lockFile takes the exclusive lock on id's lock file and writes this
// process into it. A releasing holder deletes the file (see Release), so,
// as in openLocked, a lock won on a file that is no longer at the path
// protects nothing and is tried again.
func (s *Store) lockFile(id string) (File, error) {
	path := s.lockPath(id)
	for {
		f, err := s.fs.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("opening conversation %s: %w", id, err)
		}
		ok, err := tryFlock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("opening conversation %s: locking %s: %w", id, path, err)
		}
		if !ok {
			h := readHolder(f)
			f.Close()
			return nil, &HeldError{ID: id, Holder: h}
		}
		mine, err1 := f.Stat()
		cur, err2 := s.fs.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(mine, cur) {
			// The holder's description is for people only: failing to
			// write it (a full disk) costs a vaguer message, not the lock.
			if data, err := json.Marshal(thisHolder(s.now())); err == nil && f.Truncate(0) == nil {
				f.Write(append(data, '\n'))
			}
			return f, nil
		}
		f.Close()
		if err1 != nil {
			return nil, fmt.Errorf("opening conversation %s: %w", id, err1)
		}
		if err2 != nil && !errors.Is(err2, fs.ErrNotExist) {
			return nil, fmt.Errorf("opening conversation %s: %w", id, err2)
		}
	}
}

// maxHolderSize bounds what is read of a lock file.
const maxHolderSize = 4 << 10

// readHolder reads the holder a lock file describes; zero when it is
// empty or unreadable (its holder may be writing it right now).
func readHolder(f File) Holder {
	buf := make([]byte, maxHolderSize)
	n, _ := f.ReadAt(buf, 0)
	var h Holder
	if json.Unmarshal(buf[:n], &h) != nil {
		return Holder{}
	}
	return h
}

// thisHolder describes this process.
func thisHolder(now time.Time) Holder {
	h := Holder{PID: os.Getpid(), Command: commandName(os.Args), Since: now.UTC()}
	h.Host, _ = os.Hostname()
	return h
}

// commandName is the program's name plus its subcommand ("infer serve"),
// which tells a person which of their infer windows has a conversation
// open. Only a first argument that looks like a subcommand is kept, so
// that a prompt given on the command line is not copied into the file.
func commandName(args []string) string {
	if len(args) == 0 {
		return ""
	}
	name := filepath.Base(args[0])
	if len(args) > 1 && looksLikeSubcommand(args[1]) {
		name += " " + args[1]
	}
	return name
}

func looksLikeSubcommand(s string) bool {
	if s == "" || len(s) > 20 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && c != '-' {
			return false
		}
	}
	return true
}

// Release gives up the hold; the conversation's lock is released with
// its store's last hold. Releasing twice, or a nil Hold, does nothing.
func (h *Hold) Release() {
	if h == nil || h.s == nil {
		return
	}
	h.once.Do(h.release)
}

func (h *Hold) release() {
	s, id := h.s, h.id
	s.holdMu.Lock()
	defer s.holdMu.Unlock()
	e := s.holds[id]
	if e == nil {
		return
	}
	if e.refs--; e.refs > 0 {
		return
	}
	delete(s.holds, id)
	// The file is removed while still locked, so that nobody can win a
	// lock on it that the next holder, creating a new file, would not
	// see; lockFile checks for exactly that.
	if err := s.fs.Remove(s.lockPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.warn(fmt.Errorf("conversation %s: removing its lock file: %w", id, err))
	}
	e.f.Close()
}

// orphaned reports whether conversation id's open calls have nobody left
// to answer them: no lock file, or one whose holder process on this host
// is gone (kill -9 leaves the file behind). It only reads, so a listing
// never gets in the way of a process about to hold the conversation; a
// holder being written, on another host, or on a system without process
// probes counts as alive.
func (s *Store) orphaned(id string) bool {
	f, err := s.fs.OpenFile(s.lockPath(id), os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	h := readHolder(f)
	f.Close()
	if h.PID <= 0 {
		return false
	}
	if host, _ := os.Hostname(); h.Host != "" && h.Host != host {
		return false
	}
	return processGone(h.PID)
}
