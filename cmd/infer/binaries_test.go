package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// The real binaries some tests run, built once per test run into one
// folder that TestMain removes: tests that build them each on their own
// compile the same dependency tree side by side when they run in
// parallel, which on a fresh build cache costs minutes.
var binaries struct {
	dirOnce sync.Once
	dir     string
	dirErr  error

	infer, sim builtBinary
}

// builtBinary is one binary built at most once.
type builtBinary struct {
	once sync.Once
	path string
	err  error
}

// binariesDir is the folder the binaries are built into.
func binariesDir() (string, error) {
	binaries.dirOnce.Do(func() {
		binaries.dir, binaries.dirErr = os.MkdirTemp("", "infer-test-bin-")
	})
	return binaries.dir, binaries.dirErr
}

// removeBinaries removes what the tests built; TestMain calls it last.
func removeBinaries() {
	if binaries.dir != "" {
		os.RemoveAll(binaries.dir)
	}
}

// build builds pkg as name, once, and returns its path.
func (b *builtBinary) build(t *testing.T, name, pkg string) string {
	t.Helper()
	b.once.Do(func() {
		dir, err := binariesDir()
		if err != nil {
			b.err = err
			return
		}
		// Each in a folder of its own: a script puts infer-sim's on its
		// PATH, where an infer binary would shadow the test's own.
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, name, name)
		if out, err := exec.Command("go", "build", "-o", b.path, pkg).CombinedOutput(); err != nil {
			b.err = err
			t.Logf("%s", out)
		}
	})
	if b.err != nil {
		t.Fatalf("building %s: %v", name, b.err)
	}
	return b.path
}

// inferBinary is cmd/infer, built once per test run.
func inferBinary(t *testing.T) string { return binaries.infer.build(t, "infer", ".") }

// simBinary is cmd/infer-sim, built once per test run.
func simBinary(t *testing.T) string { return binaries.sim.build(t, "infer-sim", "../infer-sim") }
