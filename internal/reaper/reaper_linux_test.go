package reaper

import (
	"os"
	"testing"
)

// TestStatReadsParent checks the /proc/<pid>/stat parsing the reaper walks
// its tree with.
func TestStatReadsParent(t *testing.T) {
	ppid, state, ok := stat(os.Getpid())
	if !ok || ppid != os.Getppid() || state == 'Z' {
		t.Errorf("stat = %d %q %v, want parent %d", ppid, state, ok, os.Getppid())
	}
	if _, _, ok := stat(-1); ok {
		t.Error("a process that does not exist was found")
	}
}

// TestDisabledUntilMain checks that a binary which never called Main does
// not start reapers: it would run itself, not a reaper.
func TestDisabledUntilMain(t *testing.T) {
	if Enabled() {
		t.Fatal("enabled before Main")
	}
	Main()
	if !Enabled() {
		t.Fatal("not enabled after Main on Linux")
	}
}
