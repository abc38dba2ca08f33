package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func entryOf(n int, tag string) string {
	return tag + ":" + strings.Repeat("x", n-len(tag)-1)
}

func totalBytes(entries []string) int {
	n := 0
	for _, e := range entries {
		n += len(e)
	}
	return n
}

// TestHistoryByteCaps adds entries of every size: one over 64 KiB is not
// kept, and the newest entries are served up to 1 MiB in all, the oldest
// dropped first, in memory, on disk and after a reopen; the file stays
// bounded.
func TestHistoryByteCaps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	for name, h := range map[string]*History{"file": openHistoryTest(t, path), "memory": MemoryHistory()} {
		t.Run(name, func(t *testing.T) {
			mustAdd(t, h, "small")
			mustAdd(t, h, entryOf(historyMaxEntry+1, "huge"))
			if got := h.List(); len(got) != 1 || got[0] != "small" {
				t.Fatalf("an entry over the cap was kept: %d entries", len(got))
			}
			mustAdd(t, h, entryOf(historyMaxEntry, "max"))
			if got := h.List(); len(got) != 2 || !strings.HasPrefix(got[1], "max:") {
				t.Fatalf("an entry at the cap was not kept: %d entries", len(got))
			}
			const n = 100 // 100 × 60 KiB: far over 1 MiB in all
			for i := range n {
				mustAdd(t, h, entryOf(60<<10, fmt.Sprint("e", i)))
			}
			got := h.List()
			if total := totalBytes(got); total > historyMaxBytes || total+60<<10 <= historyMaxBytes {
				t.Fatalf("List serves %d bytes in %d entries; want as many as fit in %d", total, len(got), historyMaxBytes)
			}
			if last := got[len(got)-1]; !strings.HasPrefix(last, fmt.Sprint("e", n-1, ":")) {
				t.Fatalf("newest entry %.8q", last)
			}
			if first := got[0]; !strings.HasPrefix(first, fmt.Sprint("e", n-len(got), ":")) {
				t.Fatalf("oldest served entry %.8q, want e%d", first, n-len(got))
			}
			if name == "memory" {
				if kept := totalBytes(h.entries); kept > 2*historyMaxBytes+historyMaxEntry {
					t.Fatalf("memory history keeps %d bytes", kept)
				}
				return
			}
			if size := fileSize(t, path); size > historyCompactBytes+historyMaxEntry+64 {
				t.Fatalf("history file is %d bytes", size)
			}
			if re := openHistoryTest(t, path).List(); len(re) != len(got) || re[0] != got[0] {
				t.Fatalf("reopened: %d entries", len(re))
			}
		})
	}
}

// TestHistoryFileGrownByAnOlderInfer opens a history file that an infer
// without byte caps left (megabyte entries, and far more than 1 MiB in
// all): the big entries are skipped, only the tail of the file is read,
// and the next entry compacts it.
func TestHistoryFileGrownByAnOlderInfer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	var buf bytes.Buffer
	for i := range 6 {
		line, _ := encodeHistoryLine(entryOf(1<<20, fmt.Sprint("big", i)))
		buf.Write(line)
	}
	for i := range 3000 {
		line, _ := encodeHistoryLine(entryOf(1000, fmt.Sprint("old", i)))
		buf.Write(line)
	}
	line, _ := encodeHistoryLine(entryOf(1<<20, "bignewest"))
	buf.Write(line)
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	h := openHistoryTest(t, path)
	got := h.List()
	if len(got) == 0 || totalBytes(got) > historyMaxBytes || !strings.HasPrefix(got[len(got)-1], "old2999:") {
		t.Fatalf("List: %d entries, %d bytes, newest %.10q", len(got), totalBytes(got), got[len(got)-1])
	}
	for _, e := range got {
		if len(e) > historyMaxEntry {
			t.Fatalf("an entry of %d bytes is served", len(e))
		}
	}
	mustAdd(t, h, "new")
	if size := fileSize(t, path); size > historyMaxBytes+64 {
		t.Fatalf("not compacted: %d bytes", size)
	}
	re := openHistoryTest(t, path).List()
	if re[len(re)-1] != "new" || !strings.HasPrefix(re[len(re)-2], "old2999:") {
		t.Fatalf("after compaction: %d entries ending %.10q", len(re), re[len(re)-2:])
	}
}
