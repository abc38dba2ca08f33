package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func openHistoryTest(t *testing.T, path string) *History {
	t.Helper()
	h, err := OpenHistory(path)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func mustAdd(t *testing.T, h *History, entries ...string) {
	t.Helper()
	for _, e := range entries {
		if err := h.Add(e); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHistoryRules(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "history.jsonl")
	for name, h := range map[string]*History{"file": openHistoryTest(t, path), "memory": MemoryHistory()} {
		t.Run(name, func(t *testing.T) {
			if got := h.List(); got == nil || len(got) != 0 {
				t.Fatalf("empty history lists %#v, want an empty non-nil slice", got)
			}
			mustAdd(t, h, "  fix the tests \n", "", " \t\n", "fix the tests", "task check", "fix the tests",
				"line one\n  indented line two\n", "line one\n  indented line two", `quotes " and \ and <html>`)
			want := []string{"fix the tests", "task check", "fix the tests", "line one\n  indented line two", `quotes " and \ and <html>`}
			if got := h.List(); !slices.Equal(got, want) {
				t.Fatalf("List = %q\nwant %q", got, want)
			}
		})
	}
	// Entries, newlines included, survive a reopen.
	if got := openHistoryTest(t, path).List(); len(got) != 5 || got[3] != "line one\n  indented line two" {
		t.Fatalf("reopened: %q", got)
	}
	if data, _ := os.ReadFile(path); strings.Count(string(data), "\n") != 5 {
		t.Fatalf("want one line per entry:\n%s", data)
	}
}

func TestHistoryCapAndCompaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	h := openHistoryTest(t, path)
	mem := MemoryHistory()
	const total = 2 * historyCompactAt
	for i := range total {
		mustAdd(t, h, fmt.Sprint("entry ", i))
		mustAdd(t, mem, fmt.Sprint("entry ", i))
		if i%500 == 0 {
			if lines := strings.Count(readFile(t, path), "\n"); lines > historyCompactAt {
				t.Fatalf("file has %d lines after %d entries", lines, i+1)
			}
		}
	}
	for name, got := range map[string][]string{"file": h.List(), "memory": mem.List(), "reopened": openHistoryTest(t, path).List()} {
		if len(got) != historyCap || got[0] != fmt.Sprint("entry ", total-historyCap) || got[historyCap-1] != fmt.Sprint("entry ", total-1) {
			t.Fatalf("%s: %d entries from %q to %q", name, len(got), got[0], got[len(got)-1])
		}
	}
	if lines := strings.Count(readFile(t, path), "\n"); lines > historyCompactAt {
		t.Fatalf("file has %d lines", lines)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestHistoryToleratesATornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	os.WriteFile(path, []byte("\"one\"\nnot json\n\"two\"\n\"thr"), 0o600)
	h := openHistoryTest(t, path)
	if got := h.List(); !slices.Equal(got, []string{"one", "two"}) {
		t.Fatalf("List = %q", got)
	}
	mustAdd(t, h, "three")
	if got := readFile(t, path); got != "\"one\"\nnot json\n\"two\"\n\"three\"\n" {
		t.Fatalf("file after repair:\n%q", got)
	}
	// A whole entry without its newline is kept.
	os.WriteFile(path, []byte("\"one\"\n\"two\""), 0o600)
	mustAdd(t, h, "three")
	if got := h.List(); !slices.Equal(got, []string{"one", "two", "three"}) {
		t.Fatalf("List = %q", got)
	}
}

func TestHistorySharedBetweenProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	a, b := openHistoryTest(t, path), openHistoryTest(t, path)
	mustAdd(t, a, "from a")
	// b sees a's entry, and skips it as the newest duplicate.
	mustAdd(t, b, "from a")
	if got := b.List(); !slices.Equal(got, []string{"from a"}) {
		t.Fatalf("b lists %q", got)
	}

	const writers, each = 6, 400
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		h := a
		if w%2 == 1 {
			h = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := h.Add(fmt.Sprintf("w%d\n#%d", w, i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := openHistoryTest(t, path).List()
	if len(got) != historyCap {
		t.Fatalf("%d entries", len(got))
	}
	// 2401 entries overflow the cap and force compactions while others
	// wait on the lock. Each writer's entries were written in order, so
	// what survives of a writer is a gapless run ending at its newest
	// entry; a lost or duplicated entry breaks the run.
	next := map[int]int{}
	for _, e := range got {
		if e == "from a" {
			continue
		}
		var w, i int
		if _, err := fmt.Sscanf(e, "w%d\n#%d", &w, &i); err != nil {
			t.Fatalf("mangled entry %q", e)
		}
		if n, ok := next[w]; ok && i != n {
			t.Fatalf("writer %d: entry %d follows %d", w, i, n-1)
		}
		next[w] = i + 1
	}
	for w, n := range next {
		if n != each {
			t.Fatalf("writer %d: newest entry %d lost", w, each-1)
		}
	}
	if !slices.Equal(a.List(), got) || !slices.Equal(b.List(), got) {
		t.Fatal("the two histories disagree")
	}
}

func TestHistoryWriteErrorIsReported(t *testing.T) {
	ffs := &faultFS{FS: OS, suffix: "history.jsonl"}
	path := filepath.Join(t.TempDir(), "history.jsonl")
	h, err := openHistory(path, ffs)
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, h, "kept")
	ffs.set(func(f *faultFS) { f.writeErr = syscall.ENOSPC })
	err = h.Add("lost")
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "saving input history to "+path) {
		t.Fatalf("Add on a full disk = %v", err)
	}
	ffs.set(func(f *faultFS) { f.writeErr = nil })
	mustAdd(t, h, "after")
	if got := openHistoryTest(t, path).List(); !slices.Equal(got, []string{"kept", "after"}) {
		t.Fatalf("List = %q", got)
	}
}

func TestOpenHistoryErrors(t *testing.T) {
	if _, err := OpenHistory(""); err == nil {
		t.Fatal("empty path accepted")
	}
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	os.WriteFile(blocker, nil, 0o600)
	if _, err := OpenHistory(filepath.Join(blocker, "history.jsonl")); err == nil || !strings.Contains(err.Error(), "opening input history") {
		t.Fatalf("history under a file: %v", err)
	}
}
