package tools

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestArtifactsCapPrunesTheOldest: saving past the cap deletes the oldest
// files, in every subfolder, and keeps the newest ones; a benchmark once
// left 1,139 screenshots (113 MB) behind.
func TestArtifactsCapPrunesTheOldest(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	const size, files = 100, keepNewestArtifacts + 10
	env.ArtifactsMaxBytes = (keepNewestArtifacts + 5) * size
	start := time.Date(2026, 9, 2, 10, 30, 0, 0, time.UTC)
	var saved []string
	for i := range files {
		at := start.Add(time.Duration(i) * time.Second)
		env.Now = func() time.Time { return at }
		dir := "screenshots"
		if i%7 == 0 {
			dir = "mcp"
		}
		_, abs, err := SaveArtifact(env, dir, ".png", bytes.Repeat([]byte{byte(i)}, size))
		if err != nil {
			t.Fatal(err)
		}
		// The file system's clock may not tick between two saves; the
		// names then order them, as they do here.
		if err := os.Chtimes(abs, at, at); err != nil {
			t.Fatal(err)
		}
		saved = append(saved, abs)
	}
	var left []string
	filepath.WalkDir(env.ArtifactsDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			left = append(left, p)
		}
		return nil
	})
	slices.Sort(left)
	want := slices.Clone(saved[5:])
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Fatalf("after %d saves of %d bytes with a cap of %d, kept\n%q\nwant the newest 25:\n%q", files, size, env.ArtifactsMaxBytes, left, want)
	}
}

// TestArtifactsCapKeepsTheNewest: files larger than the cap are still kept
// when they are among the newest, so the screenshot just taken always
// loads in the chat.
func TestArtifactsCapKeepsTheNewest(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.ArtifactsMaxBytes = 10
	var last string
	for i := range keepNewestArtifacts + 3 {
		at := time.Date(2026, 9, 2, 10, 30, i, 0, time.UTC)
		env.Now = func() time.Time { return at }
		_, abs, err := SaveArtifact(env, "screenshots", ".png", make([]byte, 50))
		if err != nil {
			t.Fatal(err)
		}
		os.Chtimes(abs, at, at)
		last = abs
	}
	entries, err := os.ReadDir(filepath.Join(env.ArtifactsDir, "screenshots"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != keepNewestArtifacts {
		t.Errorf("%d files left, want the newest %d", len(entries), keepNewestArtifacts)
	}
	if _, err := os.Stat(last); err != nil {
		t.Errorf("the screenshot just saved is gone: %v", err)
	}
}
