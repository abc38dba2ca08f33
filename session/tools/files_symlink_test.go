package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// symlink makes link (relative to root) point at target, as given.
func symlink(t *testing.T, root, target, link string) {
	t.Helper()
	if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
		t.Fatal(err)
	}
}

// assertLink fails unless link (relative to root) is still a symbolic link
// to target.
func assertLink(t *testing.T, root, link, target string) {
	t.Helper()
	got, err := os.Readlink(filepath.Join(root, link))
	if err != nil || got != target {
		t.Errorf("%s is no longer a link to %s: %q, %v", link, target, got, err)
	}
}

func readString(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Writing through a link inside the project used to rename a new file over
// the link, replacing it and leaving its target untouched while reporting
// success. Now the target is written and the link stays.
func TestWriteEditThroughInProjectLink(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	writeFiles(t, env.Root, map[string]string{"docs/real.md": "one\n"})
	symlink(t, env.Root, "docs/real.md", "notes.md")
	symlink(t, env.Root, "docs", "d")
	real := filepath.Join(env.Root, "docs/real.md")

	out := run(t, env, "Write", `{"path": "notes.md", "content": "two\n"}`)
	if !out.Success || out.Output != "Overwrote notes.md through the link to docs/real.md (4 bytes)." {
		t.Fatalf("write: %+v", out)
	}
	if got := readString(t, real); got != "two\n" {
		t.Errorf("target after Write: %q", got)
	}
	assertLink(t, env.Root, "notes.md", "docs/real.md")

	out = run(t, env, "Edit", `{"path": "notes.md", "old_string": "two", "new_string": "three"}`)
	if !out.Success || !strings.Contains(out.Output, "in notes.md through the link to docs/real.md") {
		t.Fatalf("edit: %+v", out)
	}
	if got := readString(t, real); got != "three\n" {
		t.Errorf("target after Edit: %q", got)
	}
	assertLink(t, env.Root, "notes.md", "docs/real.md")

	// A link to a directory on the way keeps working, and keeps the link.
	out = run(t, env, "Write", `{"path": "d/real.md", "content": "four\n"}`)
	if !out.Success || readString(t, real) != "four\n" {
		t.Errorf("write through a directory link: %+v", out)
	}
	assertLink(t, env.Root, "d", "docs")

	// A dangling link inside the project creates its target.
	symlink(t, env.Root, "docs/later.md", "later.md")
	out = run(t, env, "Write", `{"path": "later.md", "content": "new\n"}`)
	if !out.Success || out.Output != "Created later.md through the link to docs/later.md (4 bytes)." {
		t.Fatalf("dangling link: %+v", out)
	}
	if got := readString(t, filepath.Join(env.Root, "docs/later.md")); got != "new\n" {
		t.Errorf("dangling link target: %q", got)
	}
	assertLink(t, env.Root, "later.md", "docs/later.md")
}

// A link inside the project that points out of it is outside the project:
// writing through it asks, and without approval nothing changes.
func TestWriteEditThroughOutsideLinkAsks(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	outside := filepath.Join(filepath.Dir(env.Root), "secret.txt")
	if err := os.WriteFile(outside, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(filepath.Dir(env.Root), "planted.txt")
	symlink(t, env.Root, outside, "out.txt")
	symlink(t, env.Root, "../planted.txt", "dangling.txt")

	for _, c := range []struct{ tool, args string }{
		{"Write", `{"path": "out.txt", "content": "x"}`},
		{"Edit", `{"path": "out.txt", "old_string": "keep", "new_string": "x"}`},
		{"Write", `{"path": "dangling.txt", "content": "x"}`},
	} {
		out := run(t, env, c.tool, c.args)
		if out.Success || !out.Denied || !strings.Contains(out.Output, "outside the project") {
			t.Errorf("%s %s: %+v, want it denied as outside the project", c.tool, c.args, out)
		}
	}
	if got := readString(t, outside); got != "keep\n" {
		t.Errorf("outside file changed to %q", got)
	}
	if _, err := os.Lstat(missing); !os.IsNotExist(err) {
		t.Errorf("a dangling link created %s outside the project: %v", missing, err)
	}
	assertLink(t, env.Root, "out.txt", outside)
	assertLink(t, env.Root, "dangling.txt", "../planted.txt")

	// Approved, the write goes to the file the person was shown, and the
	// link stays a link.
	approver := &scriptedApprover{decision: Decision{Kind: AllowOnce}}
	p := NewPipeline(PipelineConfig{Env: env, Approver: approver})
	out := p.Run(context.Background(), Call{ID: "c1", Name: "Edit", Args: `{"path": "out.txt", "old_string": "keep", "new_string": "changed"}`, Origin: OriginAgent}, Auto)
	if !out.Success {
		t.Fatalf("approved edit: %+v", out)
	}
	if why := approver.last().Why; !strings.Contains(why, "(really "+outside+")") {
		t.Errorf("approval does not name the link's target: %q", why)
	}
	if got := readString(t, outside); got != "changed\n" {
		t.Errorf("approved edit: outside file is %q", got)
	}
	assertLink(t, env.Root, "out.txt", outside)
}

func TestRealPath(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	root := env.Root
	writeFiles(t, root, map[string]string{"a/b/f.txt": ""})
	symlink(t, root, "a/b", "ab")
	symlink(t, root, "../..", "a/b/up")
	symlink(t, root, "loop2", "loop1")
	symlink(t, root, "loop1", "loop2")
	symlink(t, root, "nowhere/x", "dangling")
	for in, want := range map[string]string{
		"a/b/f.txt":       "a/b/f.txt",
		"ab/f.txt":        "a/b/f.txt",
		"ab/new/deep.txt": "a/b/new/deep.txt",
		"a/b/up/ab/f.txt": "a/b/f.txt",
		"dangling":        "nowhere/x",
		"dangling/y":      "nowhere/x/y",
	} {
		if got := realPath(filepath.Join(root, in)); got != filepath.Join(root, want) {
			t.Errorf("realPath(%s) = %s, want %s", in, got, filepath.Join(root, want))
		}
	}
	// A loop ends (the kernel refuses such paths anyway).
	if got := realPath(filepath.Join(root, "loop1")); !(resolvedPaths{root: realPath(root)}).inside(got) {
		t.Errorf("realPath(loop1) = %s", got)
	}
}
