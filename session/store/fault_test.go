package store

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// faultFS wraps the real filesystem and fails chosen operations on files
// whose name ends in suffix, the way a full or failing disk does.
type faultFS struct {
	FS
	mu        sync.Mutex
	suffix    string
	writeErr  error // a Write stores half its bytes, then fails
	syncErr   error
	truncErr  error
	renameErr error
}

func (f *faultFS) set(apply func(*faultFS)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	apply(f)
}

func (f *faultFS) failing(name string, pick func(*faultFS) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !strings.HasSuffix(name, f.suffix) {
		return nil
	}
	return pick(f)
}

func (f *faultFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	file, err := f.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f, name: name}, nil
}

func (f *faultFS) Rename(oldpath, newpath string) error {
	if err := f.failing(newpath, func(f *faultFS) error { return f.renameErr }); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return f.FS.Rename(oldpath, newpath)
}

type faultFile struct {
	File
	fs   *faultFS
	name string
}

func (f *faultFile) Write(p []byte) (int, error) {
	if err := f.fs.failing(f.name, func(f *faultFS) error { return f.writeErr }); err != nil {
		n, _ := f.File.Write(p[:len(p)/2])
		return n, &fs.PathError{Op: "write", Path: f.name, Err: err}
	}
	return f.File.Write(p)
}

func (f *faultFile) Sync() error {
	if err := f.fs.failing(f.name, func(f *faultFS) error { return f.syncErr }); err != nil {
		return &fs.PathError{Op: "sync", Path: f.name, Err: err}
	}
	return f.File.Sync()
}

func (f *faultFile) Truncate(size int64) error {
	if err := f.fs.failing(f.name, func(f *faultFS) error { return f.truncErr }); err != nil {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: err}
	}
	return f.File.Truncate(size)
}

func openFaulty(t *testing.T) (*Store, *faultFS, *warnings) {
	t.Helper()
	ffs := &faultFS{FS: OS, suffix: ".jsonl"}
	w := &warnings{}
	s, err := Open(t.TempDir(), Options{FS: ffs, Warn: w.add, Now: newClock().Now})
	if err != nil {
		t.Fatal(err)
	}
	return s, ffs, w
}

func contents(t testing.TB, s *Store, id string) string {
	t.Helper()
	var out []string
	for _, m := range mustLoad(t, s, id).Messages {
		out = append(out, m.Content)
	}
	return strings.Join(out, ",")
}

func TestDiskFullIsReportedAndRolledBack(t *testing.T) {
	s, ffs, _ := openFaulty(t)
	id := mustCreate(t, s)
	mustAppend(t, s, id, user("kept one"), user("kept two"))
	before := fileSize(t, s.Path(id))

	ffs.set(func(f *faultFS) { f.writeErr = syscall.ENOSPC })
	err := s.Append(id, user("lost to a full disk"))
	if !errors.Is(err, syscall.ENOSPC) || !strings.HasPrefix(err.Error(), "saving conversation "+id+": ") {
		t.Fatalf("Append on a full disk = %v", err)
	}
	if got := fileSize(t, s.Path(id)); got != before {
		t.Fatalf("partial write left: size %d, was %d", got, before)
	}
	if got := contents(t, s, id); got != "kept one,kept two" {
		t.Fatalf("after the failure: %q", got)
	}
	for name, op := range map[string]func() error{
		"rename":      func() error { return s.Rename(id, "x") },
		"pin":         func() error { return s.SetPinned(id, true) },
		"tool result": func() error { return s.recordToolResult(id, "c", true) },
	} {
		if err := op(); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("%s on a full disk = %v", name, err)
		}
	}

	ffs.set(func(f *faultFS) { f.writeErr = nil })
	mustAppend(t, s, id, user("after space was freed"))
	checkLines(t, s.Path(id))
	if got := contents(t, s, id); got != "kept one,kept two,after space was freed" {
		t.Fatalf("after recovery: %q", got)
	}
	if list, err := s.List(); err != nil || list[0].MessageCount != 3 || list[0].Pinned || list[0].Title != "kept one" {
		t.Fatalf("List = %+v, %v", list, err)
	}
}

func TestFailedRollbackLeavesATornTailThatIsRepaired(t *testing.T) {
	s, ffs, _ := openFaulty(t)
	id := mustCreate(t, s)
	mustAppend(t, s, id, user("kept"))
	ffs.set(func(f *faultFS) { f.writeErr, f.truncErr = syscall.ENOSPC, syscall.EIO })
	if err := s.Append(id, user("half written")); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Append = %v", err)
	}
	ffs.set(func(f *faultFS) { f.writeErr, f.truncErr = nil, nil })
	c := mustLoad(t, s, id)
	if len(c.Messages) != 1 || c.SkippedLines != 1 {
		t.Fatalf("with a torn tail: %d messages, %d skipped", len(c.Messages), c.SkippedLines)
	}
	mustAppend(t, s, id, user("next"))
	checkLines(t, s.Path(id))
	if got := contents(t, s, id); got != "kept,next" {
		t.Fatalf("after repair: %q", got)
	}
}

func TestFailedSyncIsReportedAndRolledBack(t *testing.T) {
	s, ffs, _ := openFaulty(t)
	id := mustCreate(t, s)
	mustAppend(t, s, id, user("kept"))
	ffs.set(func(f *faultFS) { f.syncErr = syscall.EIO })
	if err := s.Append(id, user("not durable")); !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "saving conversation "+id) {
		t.Fatalf("Append with a failing fsync = %v", err)
	}
	ffs.set(func(f *faultFS) { f.syncErr = nil })
	if got := contents(t, s, id); got != "kept" {
		t.Fatalf("after the failure: %q", got)
	}
}

func TestCreateFailureLeavesNothingBehind(t *testing.T) {
	s, ffs, _ := openFaulty(t)
	ffs.set(func(f *faultFS) { f.suffix, f.writeErr = ".jsonl.tmp", syscall.ENOSPC })
	if _, err := s.Create(); !errors.Is(err, syscall.ENOSPC) || !strings.HasPrefix(err.Error(), "creating conversation: ") {
		t.Fatalf("Create on a full disk = %v", err)
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
}

func TestSummaryFailureDoesNotFailTheAppend(t *testing.T) {
	s, ffs, w := openFaulty(t)
	id := mustCreate(t, s)
	ffs.set(func(f *faultFS) { f.suffix, f.renameErr = ".meta.json", syscall.ENOSPC })
	mustAppend(t, s, id, user("saved"))
	if !strings.Contains(w.joined(), "updating its summary") {
		t.Fatalf("no warning: %q", w.joined())
	}
	ffs.set(func(f *faultFS) { f.renameErr = nil })
	if list, err := s.List(); err != nil || list[0].MessageCount != 1 {
		t.Fatalf("List = %+v, %v", list, err)
	}
}
