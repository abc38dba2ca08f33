package testreq

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder stands for a test: it keeps how Lacking ended it instead of
// ending the real one.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skip(args ...any)                  { r.skipped = fmt.Sprint(args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestLackingSkipsOutsideCI(t *testing.T) {
	t.Setenv("CI", "")
	r := &recorder{TB: t}
	Lacking(r, Bubblewrap, "bubblewrap is not installed")
	if r.failed != "" {
		t.Fatalf("failed outside CI: %q", r.failed)
	}
	want := "needs bubblewrap: bubblewrap is not installed (install: apt-get install -y bubblewrap)"
	if r.skipped != want {
		t.Fatalf("skip message %q, want %q", r.skipped, want)
	}
}

func TestLackingFailsUnderCI(t *testing.T) {
	t.Setenv("CI", "true")
	r := &recorder{TB: t}
	Lacking(r, Chromium, "none on PATH")
	if r.skipped != "" {
		t.Fatalf("skipped under CI: %q", r.skipped)
	}
	if !strings.HasPrefix(r.failed, "needs Chromium: none on PATH") || !strings.Contains(r.failed, "CI must have it") {
		t.Fatalf("failure message %q", r.failed)
	}
}

func TestProgramFindsWhatIsOnPath(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "fake-tmux")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	t.Setenv("CI", "")
	n := Need{Name: "fake", Install: "nothing", Programs: []string{"absent-program", "fake-tmux"}}
	r := &recorder{TB: t}
	if got := Program(r, n); got != prog || r.skipped != "" || r.failed != "" {
		t.Fatalf("Program = %q (skipped %q, failed %q), want %q", got, r.skipped, r.failed, prog)
	}
	n.Programs = []string{"absent-program"}
	r = &recorder{TB: t}
	if got := Program(r, n); got != "" || !strings.Contains(r.skipped, "none of absent-program on PATH") {
		t.Fatalf("Program = %q, skipped %q", got, r.skipped)
	}
}

func TestNeedsListsEveryNeed(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range Needs {
		if n.Name == "" || n.Ident == "" || n.Install == "" || len(n.Programs) == 0 {
			t.Errorf("incomplete need %+v", n)
		}
		seen[n.Ident] = true
	}
	for _, n := range []Need{Bubblewrap, Chromium, Tmux, Procps} {
		if !seen[n.Ident] {
			t.Errorf("%s is not in Needs", n.Ident)
		}
	}
}
