package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// countingFS counts the transcripts opened for writing.
type countingFS struct {
	FS
	mu     sync.Mutex
	writes int
}

func (c *countingFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	if strings.HasSuffix(name, ".jsonl") && flag&(os.O_RDWR|os.O_WRONLY) != 0 {
		c.mu.Lock()
		c.writes++
		c.mu.Unlock()
	}
	return c.FS.OpenFile(name, flag, perm)
}

func (c *countingFS) opened() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes
}

func TestAppendsKeepTheTranscriptOpen(t *testing.T) {
	cfs := &countingFS{FS: OS}
	s, err := Open(t.TempDir(), Options{FS: cfs, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	id := mustCreate(t, s)
	before := cfs.opened()
	for i := range 10 {
		mustAppend(t, s, id, user(fmt.Sprint("m", i)))
		if err := s.AppendToolResult(id, Message{Role: RoleTool, ToolCallID: fmt.Sprint("c", i), Content: "r"}, true); err != nil {
			t.Fatal(err)
		}
	}
	if n := cfs.opened() - before; n != 1 {
		t.Fatalf("20 appends opened the transcript %d times, want once", n)
	}
	if n := checkLines(t, s.Path(id)); n != 1+10*3 {
		t.Fatalf("%d lines, want %d", n, 1+10*3)
	}
	if c := mustLoad(t, s, id); len(c.Messages) != 20 || !c.ToolResults["c9"] {
		t.Fatalf("loaded %d messages, results %v", len(c.Messages), c.ToolResults)
	}
}

func TestAnAppendFollowsAReplacedTranscript(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir)
	id := mustCreate(t, s)
	mustAppend(t, s, id, user("before"))
	// Another program rewrites the transcript and renames it into place,
	// as an editor does: the file the store holds open is no longer it.
	old, err := os.ReadFile(s.Path(id))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := openTest(t, t.TempDir())
	donor := mustCreate(t, other)
	mustAppend(t, other, donor, user("added elsewhere"))
	donorLines, err := os.ReadFile(other.Path(donor))
	if err != nil {
		t.Fatal(err)
	}
	added := strings.SplitAfter(string(donorLines), "\n")[1]
	tmp := s.Path(id) + ".edit"
	if err := os.WriteFile(tmp, append(old, added...), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, s.Path(id)); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, id, user("after"))
	var got []string
	for _, m := range mustLoad(t, s, id).Messages {
		got = append(got, m.Content)
	}
	if strings.Join(got, ",") != "before,added elsewhere,after" {
		t.Fatalf("messages %q: the append went to the replaced file", got)
	}
}

func TestAnAppendAfterAnotherStoreDeletedTheConversation(t *testing.T) {
	dir := t.TempDir()
	s1, _ := openTest(t, dir)
	s2, _ := openTest(t, dir)
	id := mustCreate(t, s1)
	mustAppend(t, s1, id, user("kept open"))
	if err := s2.Delete(id); err != nil {
		t.Fatal(err)
	}
	if err := s1.Append(id, user("into the deleted file")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("append after delete = %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(s1.Path(id)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the transcript came back: %v", err)
	}
}

func TestDeleteClosesTheKeptTranscript(t *testing.T) {
	s, _ := openTest(t, t.TempDir())
	id := mustCreate(t, s)
	mustAppend(t, s, id, user("x"))
	if err := s.Delete(id); err != nil {
		t.Fatal(err)
	}
	s.appMu.Lock()
	kept := s.apps[id]
	s.appMu.Unlock()
	if kept != nil {
		t.Fatal("the deleted conversation's transcript is still kept open")
	}
	if err := s.Append(id, user("y")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("append after delete = %v, want ErrNotFound", err)
	}
}

func TestKeptTranscriptsAreBounded(t *testing.T) {
	s, _ := openTest(t, t.TempDir())
	var ids []string
	for range maxAppenders + 3 {
		ids = append(ids, mustCreate(t, s))
	}
	for round := range 2 {
		for i, id := range ids {
			mustAppend(t, s, id, user(fmt.Sprintf("%d-%d", i, round)))
			s.appMu.Lock()
			n := len(s.apps)
			s.appMu.Unlock()
			if n > maxAppenders {
				t.Fatalf("%d transcripts kept open, at most %d", n, maxAppenders)
			}
		}
	}
	for i, id := range ids {
		var got []string
		for _, m := range mustLoad(t, s, id).Messages {
			got = append(got, m.Content)
		}
		if want := fmt.Sprintf("%d-0,%d-1", i, i); strings.Join(got, ",") != want {
			t.Fatalf("conversation %d: %q, want %q", i, got, want)
		}
	}
}

func TestAFailedAppendReopensTheTranscript(t *testing.T) {
	s, ffs, _ := openFaulty(t)
	id := mustCreate(t, s)
	mustAppend(t, s, id, user("one"))
	ffs.set(func(f *faultFS) { f.syncErr = errors.New("the disk failed") })
	if err := s.Append(id, user("lost")); err == nil {
		t.Fatal("an append whose fsync failed succeeded")
	}
	s.appMu.Lock()
	a := s.apps[id]
	s.appMu.Unlock()
	if a == nil || a.f != nil {
		t.Fatal("the transcript stays open after a failed append")
	}
	ffs.set(func(f *faultFS) { f.syncErr = nil })
	mustAppend(t, s, id, user("two"))
	if got := contents(t, s, id); got != "one,two" {
		t.Fatalf("after recovery: %q", got)
	}
}

// Delete never waits on an append that waits for Delete's own lock: an
// append holds its appender while it waits in flock, so Delete lets the
// appender go before it locks. Another holder's lock makes both wait here,
// Delete first, so that it is likely to get the lock first once that
// holder lets go (which one does is up to the kernel: the case runs a few
// times).
func TestDeleteWhileAnAppendWaitsForTheLock(t *testing.T) {
	for range 10 {
		s, _ := openTest(t, t.TempDir())
		id := mustCreate(t, s)
		mustAppend(t, s, id, user("x"))
		other, err := openLocked(s.fs, s.Path(id), os.O_RDONLY, lockExclusive)
		if err != nil {
			t.Fatal(err)
		}
		deleted := make(chan error, 1)
		go func() { deleted <- s.Delete(id) }()
		time.Sleep(5 * time.Millisecond) // let Delete reach the lock, as it would in use
		appended := make(chan error, 1)
		go func() { appended <- s.Append(id, user("y")) }()
		for deadline := time.Now().Add(10 * time.Second); !appendWaits(s, id); {
			if time.Now().After(deadline) {
				t.Fatal("the append never started")
			}
			runtime.Gosched()
		}
		other.Close()
		for _, ch := range []chan error{appended, deleted} {
			select {
			case err := <-ch:
				if err != nil && !errors.Is(err, ErrNotFound) {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("an append and a delete of one conversation wait for each other")
			}
		}
		if _, err := os.Stat(s.Path(id)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the transcript is still there: %v", err)
		}
	}
}

// appendWaits reports whether an append to id holds its appender.
func appendWaits(s *Store, id string) bool {
	s.appMu.Lock()
	a := s.apps[id]
	s.appMu.Unlock()
	if a == nil {
		return false
	}
	if a.mu.TryLock() {
		a.mu.Unlock()
		return false
	}
	return true
}
