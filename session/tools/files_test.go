package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	var lines []string
	for i := 1; i <= 30; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	writeFiles(t, env.Root, map[string]string{
		"a.txt":       strings.Join(lines, "\n") + "\n",
		"crlf.txt":    "one\r\ntwo\r\n",
		"empty.txt":   "",
		"long.txt":    strings.Repeat("é", 5000),
		"dir/x.txt":   "x",
		"bin/data.db": "ab\x00cd",
	})
	out := run(t, env, "Read", `{"path": "a.txt"}`)
	if !out.Success || !strings.HasPrefix(out.Output, "     1\tline 1\n     2\tline 2\n") || !strings.HasSuffix(out.Output, "    30\tline 30\n") {
		t.Fatalf("full read: %+v", out)
	}
	out = run(t, env, "Read", `{"path": "a.txt", "offset": 10, "limit": 3}`)
	want := "    10\tline 10\n    11\tline 11\n    12\tline 12\n[... a.txt continues: showing lines 10-12 of 30; read more with offset=13 ...]\n"
	if out.Output != want {
		t.Errorf("window read:\n%q\nwant\n%q", out.Output, want)
	}
	out = run(t, env, "Read", fmt.Sprintf(`{"path": %q}`, filepath.Join(env.Root, "crlf.txt")))
	if out.Output != "     1\tone\n     2\ttwo\n" {
		t.Errorf("absolute path, CRLF: %q", out.Output)
	}
	out = run(t, env, "Read", `{"path": "long.txt"}`)
	if !strings.Contains(out.Output, "[... line cut at 2000 characters ...]") || strings.Count(out.Output, "é") != 2000 {
		t.Errorf("long line not cut cleanly: %d runes", len([]rune(out.Output)))
	}
	if out = run(t, env, "Read", `{"path": "empty.txt"}`); !out.Success || out.Output != "empty.txt is empty." {
		t.Errorf("empty: %+v", out)
	}

	for args, want := range map[string]string{
		`{"path": "missing.txt"}`:            "missing.txt does not exist; use Tree or Grep",
		`{"path": "dir"}`:                    "dir is a directory; use Tree",
		`{"path": "bin/data.db"}`:            "bin/data.db is a binary file (5 bytes)",
		`{"path": "a.txt", "offset": 31}`:    "a.txt has 30 lines, so offset 31 is past its end",
		`{"path": "a.txt", "offset": "two"}`: `argument "offset" must be an integer ≥ 1, got "two"`,
	} {
		out := run(t, env, "Read", args)
		if out.Success || !strings.Contains(out.Output, want) || out.Error == "" {
			t.Errorf("Read %s: %+v, want error containing %q", args, out, want)
		}
	}
}

func TestWrite(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	out := run(t, env, "Write", `{"path": "new/deep/file.txt", "content": "héllo\n"}`)
	if !out.Success || out.Output != "Created new/deep/file.txt (7 bytes)." {
		t.Fatalf("create: %+v", out)
	}
	p := filepath.Join(env.Root, "new/deep/file.txt")
	if data, _ := os.ReadFile(p); string(data) != "héllo\n" {
		t.Errorf("content %q", data)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	out = run(t, env, "Write", `{"path": "new/deep/file.txt", "content": ""}`)
	if !out.Success || out.Output != "Overwrote new/deep/file.txt (0 bytes)." {
		t.Fatalf("overwrite: %+v", out)
	}
	if info, _ := os.Stat(p); info.Mode().Perm() != 0o600 {
		t.Errorf("overwrite changed the mode to %v", info.Mode().Perm())
	}
	if out = run(t, env, "Write", `{"path": "new", "content": "x"}`); out.Success || !strings.Contains(out.Output, "new is a directory") {
		t.Errorf("directory: %+v", out)
	}
	if out = run(t, env, "Write", `{"path": "x.txt"}`); out.Success || !strings.Contains(out.Output, `missing required argument "content"`) {
		t.Errorf("missing content: %+v", out)
	}
	if err := os.WriteFile(filepath.Join(env.Root, "blocker"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out = run(t, env, "Write", `{"path": "blocker/x.txt", "content": "x"}`); out.Success || !strings.Contains(out.Output, "could not create the directory") {
		t.Errorf("parent is a file: %+v", out)
	}
}

func TestEdit(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	writeFiles(t, env.Root, map[string]string{
		"main.go": "package main\n\nfunc a() {}\nfunc b() {}\nfunc a2() {}\n",
	})
	read := func() string {
		data, _ := os.ReadFile(filepath.Join(env.Root, "main.go"))
		return string(data)
	}
	out := run(t, env, "Edit", `{"path": "main.go", "old_string": "func b() {}", "new_string": "func b() { return }"}`)
	if !out.Success || out.Output != "Replaced 1 occurrence in main.go (the first at line 4)." {
		t.Fatalf("edit: %+v", out)
	}
	if !strings.Contains(read(), "func b() { return }") {
		t.Error("file not edited")
	}
	out = run(t, env, "Edit", `{"path": "main.go", "old_string": "func a", "new_string": "func x"}`)
	if out.Success || !strings.Contains(out.Output, "old_string occurs 2 times in main.go (at lines 3, 5)") || !strings.Contains(out.Output, "replace_all") {
		t.Errorf("ambiguous: %+v", out)
	}
	before := read()
	out = run(t, env, "Edit", `{"path": "main.go", "old_string": "func zz", "new_string": "x"}`)
	if out.Success || !strings.Contains(out.Output, "old_string was not found in main.go") {
		t.Errorf("not found: %+v", out)
	}
	if read() != before {
		t.Error("a failed edit changed the file")
	}
	out = run(t, env, "Edit", `{"path": "main.go", "old_string": "func a", "new_string": "func x", "replace_all": true}`)
	if !out.Success || !strings.Contains(out.Output, "Replaced 2 occurrences") || strings.Contains(read(), "func a") {
		t.Errorf("replace_all: %+v\n%s", out, read())
	}
	for args, want := range map[string]string{
		`{"path": "main.go", "old_string": "x", "new_string": "x"}`: "the same",
		`{"path": "main.go", "old_string": "", "new_string": "x"}`:  `argument "old_string" must be a non-empty string`,
		`{"path": "nope.go", "old_string": "a", "new_string": "b"}`: "nope.go does not exist",
		`{"path": "main.go", "old_string": "a", "new_string": 5}`:   `argument "new_string" must be a string, got 5`,
	} {
		if out := run(t, env, "Edit", args); out.Success || !strings.Contains(out.Output, want) {
			t.Errorf("Edit %s: %+v, want %q", args, out, want)
		}
	}
}

func TestGrep(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	writeFiles(t, env.Root, map[string]string{
		"main.go":               "package main\n// TODO: one\nfunc main() {}\n",
		"pkg/util.go":           "package pkg\n// TODO: two\n",
		"pkg/notes.md":          "TODO: three\n",
		".git/config":           "TODO: hidden\n",
		"node_modules/x/a.js":   "// TODO: vendored\n",
		"bin/blob":              "TODO\x00binary",
		"pkg/deep/more/file.go": "x := 1 // todo lower\n",
	})
	out := run(t, env, "Grep", `{"pattern": "TODO"}`)
	want := "main.go:2: // TODO: one\npkg/notes.md:1: TODO: three\npkg/util.go:2: // TODO: two\n3 matches in 3 files.\n"
	if !out.Success || out.Output != want {
		t.Errorf("grep all:\n%s\nwant\n%s", out.Output, want)
	}
	out = run(t, env, "Grep", `{"pattern": "(?i)todo", "path": "pkg", "glob": "*.go"}`)
	want = "pkg/deep/more/file.go:1: x := 1 // todo lower\npkg/util.go:2: // TODO: two\n2 matches in 2 files.\n"
	if out.Output != want {
		t.Errorf("grep path+glob:\n%s\nwant\n%s", out.Output, want)
	}
	out = run(t, env, "Grep", `{"pattern": "TODO", "path": "pkg", "glob": "deep/*/*.go"}`)
	if out.Output != "No matches for /TODO/ in pkg." {
		t.Errorf("relative glob: %q", out.Output)
	}
	if out = run(t, env, "Grep", `{"pattern": "todo", "path": "pkg/deep/more/file.go"}`); !strings.HasPrefix(out.Output, "pkg/deep/more/file.go:1:") {
		t.Errorf("single file: %q", out.Output)
	}
	var many strings.Builder
	for i := range 300 {
		fmt.Fprintf(&many, "hit %d\n", i)
	}
	writeFiles(t, env.Root, map[string]string{"many.txt": many.String()})
	out = run(t, env, "Grep", `{"pattern": "^hit", "path": "many.txt"}`)
	if strings.Count(out.Output, "many.txt:") != 200 || !strings.Contains(out.Output, "[... stopped after 200 matches; narrow the pattern") {
		t.Errorf("cap: %d matches, tail %q", strings.Count(out.Output, "many.txt:"), out.Output[len(out.Output)-80:])
	}
	for args, want := range map[string]string{
		`{"pattern": "("}`:                 "not a valid Go regular expression",
		`{"pattern": "x", "path": "nope"}`: "nope does not exist",
		`{"pattern": "x", "glob": "[a"}`:   "glob \"[a\" is malformed",
	} {
		if out := run(t, env, "Grep", args); out.Success || !strings.Contains(out.Output, want) {
			t.Errorf("Grep %s: %+v, want %q", args, out, want)
		}
	}
}

func TestTree(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	writeFiles(t, env.Root, map[string]string{
		"go.mod":                "",
		"cmd/infer/main.go":     "",
		"cmd/infer/deep/a/b.go": "",
		".git/HEAD":             "",
		"node_modules/x/y.js":   "",
	})
	if err := os.Symlink("go.mod", filepath.Join(env.Root, "link")); err != nil {
		t.Fatal(err)
	}
	out := run(t, env, "Tree", `{}`)
	want := "./\n  cmd/\n    infer/\n      deep/ (1 entries)\n      main.go\n  go.mod\n  link -> go.mod\n  node_modules/ (not expanded)\n"
	if !out.Success || out.Output != want {
		t.Errorf("tree:\n%s\nwant\n%s", out.Output, want)
	}
	out = run(t, env, "Tree", `{"path": "cmd", "depth": 1}`)
	if out.Output != "cmd/\n  infer/ (2 entries)\n" {
		t.Errorf("depth 1: %q", out.Output)
	}
	for i := range 1100 {
		writeFiles(t, env.Root, map[string]string{fmt.Sprintf("many/f%04d", i): ""})
	}
	out = run(t, env, "Tree", `{"path": "many"}`)
	if strings.Count(out.Output, "\n") != 1001 || !strings.Contains(out.Output, "[... stopped after 1000 entries") {
		t.Errorf("cap: %d lines", strings.Count(out.Output, "\n"))
	}
	for args, want := range map[string]string{
		`{"path": "go.mod"}`: "go.mod is a file, not a directory; use Read",
		`{"path": "nope"}`:   "nope does not exist",
	} {
		if out := run(t, env, "Tree", args); out.Success || !strings.Contains(out.Output, want) {
			t.Errorf("Tree %s: %+v, want %q", args, out, want)
		}
	}
}
