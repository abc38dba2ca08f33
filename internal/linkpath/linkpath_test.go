package linkpath

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRealAndFrom(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	mk("a/b")
	link("a/b", "ab")
	link("../..", "a/b/up")
	link("/", "slash")
	link("loop2", "loop1")
	link("loop1", "loop2")
	link("nowhere/x", "dangling")
	for in, want := range map[string]string{
		"a/b":            root + "/a/b",
		"ab/new/f.txt":   root + "/a/b/new/f.txt",
		"ab/../x":        root + "/a/x", // .. climbs out of the target, not the link's folder
		"a/b/up/ab":      root + "/a/b",
		"dangling/y":     root + "/nowhere/x/y",
		"slash/etc":      "/etc",
		"./a/./b/../b/.": root + "/a/b",
	} {
		if got := From(root, in); got != filepath.FromSlash(want) {
			t.Errorf("From(root, %s) = %s, want %s", in, got, want)
		}
		if got := Real(filepath.Join(root, in)); in != "ab/../x" && got != filepath.FromSlash(want) {
			t.Errorf("Real(%s) = %s, want %s", in, got, want)
		}
	}
	// An absolute path ignores the starting folder.
	if got := From(root, "/"); got != "/" {
		t.Errorf("From(root, /) = %s", got)
	}
	// A loop ends; the kernel refuses such paths anyway.
	_ = From(root, "loop1/x")
}
