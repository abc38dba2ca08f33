// Package grants stores a project's "always allow" decisions: permissions a
// person gave once so that matching tool calls stop asking. Each grant is
// either a whole tool (Write), a Bash command prefix (git commit), a
// browser action on one site (BrowserClick on https://github.com), every
// tool of one MCP server, or the network host confined commands may reach
// through infer's proxy.
//
// Grants live in one JSON file per project so that a person can read them,
// and `infer permissions list|revoke` can change them while infer runs.
// Every operation re-reads the file under an exclusive flock and replaces it
// atomically, so several infer processes on one project never lose each
// other's changes, and a revoke applies to the next call everywhere. A
// corrupt file is reported, never overwritten.
package grants

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Kind says what a grant covers.
type Kind string

// Grant kinds.
const (
	// KindTool covers every call of one tool.
	KindTool Kind = "tool"
	// KindBash covers Bash commands that start with Prefix and are
	// structurally safe.
	KindBash Kind = "bash"
	// KindSite covers one browser tool on one site (a URL origin).
	KindSite Kind = "site"
	// KindServer covers every tool of one MCP server, named by Server;
	// Tool is that server's tool-name prefix, for people reading the file.
	KindServer Kind = "server"
	// KindHost lets confined commands reach one network host through
	// infer's proxy, named by Host ("example.com", or "127.0.0.1:8080"
	// for a service on the person's own machine, which is granted one
	// port at a time).
	KindHost Kind = "host"
)

// Grant is one saved permission.
type Grant struct {
	ID        string    `json:"id"`
	Kind      Kind      `json:"kind"`
	Tool      string    `json:"tool"`
	Prefix    string    `json:"prefix,omitempty"`
	Site      string    `json:"site,omitempty"`
	Server    string    `json:"server,omitempty"`
	Host      string    `json:"host,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Same reports whether g and o grant the same thing, ignoring ID and time.
func (g Grant) Same(o Grant) bool {
	return g.Kind == o.Kind && g.Tool == o.Tool && g.Prefix == o.Prefix && g.Site == o.Site && g.Server == o.Server && g.Host == o.Host
}

// String describes the grant for people, e.g. "Bash commands starting
// with `git commit`".
func (g Grant) String() string {
	switch g.Kind {
	case KindBash:
		return "Bash commands starting with `" + g.Prefix + "`"
	case KindSite:
		return g.Tool + " on " + g.Site
	case KindServer:
		return "every tool of the MCP server " + g.Server
	case KindHost:
		return "network connections to " + g.Host + " from sandboxed commands"
	default:
		return "every " + g.Tool + " call"
	}
}

func (g Grant) validate() error {
	if g.Tool == "" {
		return errors.New("grant has no tool")
	}
	switch g.Kind {
	case KindTool:
	case KindBash:
		if g.Prefix == "" {
			return errors.New("a bash grant needs a command prefix")
		}
	case KindSite:
		if g.Site == "" {
			return errors.New("a site grant needs a site")
		}
	case KindServer:
		if g.Server == "" {
			return errors.New("a server grant needs the MCP server's name")
		}
	case KindHost:
		if g.Host == "" {
			return errors.New("a host grant needs a host")
		}
	default:
		return fmt.Errorf("unknown grant kind %q (use tool, bash, site, server or host)", g.Kind)
	}
	return nil
}

// file is the on-disk shape; the version lets later formats migrate.
type file struct {
	Version int     `json:"version"`
	Grants  []Grant `json:"grants"`
}

const version = 1

// Store is one project's grants file. It is safe for concurrent use by
// goroutines and by processes.
type Store struct {
	path string
	// mu orders this process's operations; flock orders processes.
	mu  sync.Mutex
	now func() time.Time
}

// Open checks the grants file at path and returns a Store for it. A
// missing file is an empty store (created on the first Add); an unreadable
// or corrupt file is an error that names it.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("grants: no file path given")
	}
	s := &Store{path: path, now: time.Now}
	if _, err := s.List(); err != nil {
		return nil, err
	}
	return s, nil
}

// Path is the grants file.
func (s *Store) Path() string { return s.path }

// List returns the grants, oldest first, as the file holds them now.
func (s *Store) List() ([]Grant, error) {
	var out []Grant
	err := s.locked(false, func(f *file) (bool, error) {
		out = f.Grants
		return false, nil
	})
	return out, err
}

// Add saves g with a fresh ID and creation time and returns it. When an
// identical grant exists, Add returns that one instead of a duplicate.
func (s *Store) Add(g Grant) (Grant, error) {
	if err := g.validate(); err != nil {
		return Grant{}, fmt.Errorf("grants: %w", err)
	}
	var saved Grant
	err := s.locked(true, func(f *file) (bool, error) {
		for _, old := range f.Grants {
			if old.Same(g) {
				saved = old
				return false, nil
			}
		}
		id, err := newID(f.Grants)
		if err != nil {
			return false, err
		}
		g.ID, g.CreatedAt = id, s.now().UTC().Truncate(time.Second)
		f.Grants = append(f.Grants, g)
		saved = g
		return true, nil
	})
	return saved, err
}

// ErrUnknown is returned (wrapped) by Revoke for an ID the file lacks.
var ErrUnknown = errors.New("no such grant")

// Revoke deletes the grant with id.
func (s *Store) Revoke(id string) error {
	return s.locked(true, func(f *file) (bool, error) {
		for i, g := range f.Grants {
			if g.ID == id {
				f.Grants = append(f.Grants[:i], f.Grants[i+1:]...)
				return true, nil
			}
		}
		return false, fmt.Errorf("%w with id %q in %s (run `infer permissions list` to see the ids)", ErrUnknown, id, s.path)
	})
}

// locked runs fn on the file's contents under the lock; when fn reports a
// change, the new contents replace the file atomically before unlocking.
func (s *Store) locked(write bool, fn func(*file) (bool, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir := filepath.Dir(s.path)
	if write {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("grants: create %s: %w", dir, err)
		}
	}
	unlock, err := s.lock(write)
	if err != nil {
		return err
	}
	defer unlock()
	f, err := s.read()
	if err != nil {
		return err
	}
	changed, err := fn(f)
	if err != nil || !changed {
		return err
	}
	return s.write(f)
}

// lock takes a flock on a sibling lock file (the grants file itself is
// replaced by rename, so it cannot carry the lock). Readers of a project
// without a grants directory need no lock: there is nothing to read.
func (s *Store) lock(exclusive bool) (func(), error) {
	lf, err := os.OpenFile(s.path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		if !exclusive && errors.Is(err, fs.ErrNotExist) {
			return func() {}, nil
		}
		return nil, fmt.Errorf("grants: open lock file: %w", err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err = syscall.Flock(int(lf.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		lf.Close()
		return nil, fmt.Errorf("grants: lock %s: %w", s.path, err)
	}
	return func() {
		syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)
		lf.Close()
	}, nil
}

func (s *Store) read() (*file, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return &file{Version: version}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("grants: read %s: %w", s.path, err)
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("grants file %s is not valid JSON (%v): fix it by hand or delete it to forget every saved permission", s.path, err)
	}
	if f.Version > version {
		return nil, fmt.Errorf("grants file %s has version %d, newer than this infer understands (%d): upgrade infer", s.path, f.Version, version)
	}
	for i, g := range f.Grants {
		if g.ID == "" {
			return nil, fmt.Errorf("grants file %s: grant %d has no id: fix it by hand or delete the file", s.path, i+1)
		}
		if err := g.validate(); err != nil {
			return nil, fmt.Errorf("grants file %s: grant %s: %v: fix it by hand or delete the file", s.path, g.ID, err)
		}
	}
	f.Version = version
	return &f, nil
}

// write replaces the file through a synced temporary file and rename, so
// a crash leaves either the old or the new grants, never half of either.
func (s *Store) write(f *file) error {
	if f.Grants == nil {
		f.Grants = []Grant{}
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("grants: encode: %w", err)
	}
	data = append(data, '\n')
	tmp, err := os.CreateTemp(filepath.Dir(s.path), ".grants-*.tmp")
	if err != nil {
		return fmt.Errorf("grants: write %s: %w", s.path, err)
	}
	defer os.Remove(tmp.Name())
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.path)
	}
	if err != nil {
		return fmt.Errorf("grants: write %s: %w", s.path, err)
	}
	return nil
}

// newID returns a short random id, unique within the file, that a person
// can type into `infer permissions revoke`.
func newID(existing []Grant) (string, error) {
	for {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("grants: random id: %w", err)
		}
		id := hex.EncodeToString(b[:])
		taken := false
		for _, g := range existing {
			taken = taken || g.ID == id
		}
		if !taken {
			return id, nil
		}
	}
}
