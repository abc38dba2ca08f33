package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGoInstallBuildsBothBinaries installs infer and infer-sim as the
// README tells a person to, from the clone with `go install` into a
// GOBIN of the test's own, and runs what it installed: without the
// Makefile's -ldflags the version must still describe the build truly.
// It runs before the parallel tests, on purpose: on a fresh build cache it
// compiles the binaries' dependencies once, where the tests that build
// them would otherwise compile them beside it.
func TestGoInstallBuildsBothBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	gobin := t.TempDir()
	cmd := exec.Command("go", "install", "./cmd/infer", "./cmd/infer-sim")
	cmd.Dir = "../.."
	// A person's go stamps the build from git when it can (-buildvcs=auto);
	// the build cache is shared with the other tests' builds.
	cmd.Env = append(os.Environ(), "GOBIN="+gobin, "GOFLAGS=-buildvcs=auto")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	out, err := exec.Command(filepath.Join(gobin, "infer"), "version").CombinedOutput()
	if err != nil {
		t.Fatalf("infer version: %v\n%s", err, out)
	}
	// "infer dev (go1.26.8, linux/amd64)", or with git's stamp
	// "infer v0.0.0-…-690e6072ce82 (commit 690e6072ce82, go1.26.8, …)".
	want := regexp.MustCompile(`^infer (dev|v\S+) \((commit [0-9a-f]{12}(\+dirty)?, )?go\S+, \w+/\w+\)\n$`)
	if !want.Match(out) {
		t.Errorf("infer version printed %q", out)
	}
	out, err = exec.Command(filepath.Join(gobin, "infer-sim"), "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "infer-sim impersonates infer's browser extension") {
		t.Errorf("infer-sim --help: %v\n%s", err, out)
	}
}

// TestReadmeSaysHowToInstall: a person who has cloned the repository
// learns from the README how to build both binaries with go install, how
// to put them on PATH, and which extension to install from where, as
// `infer init` also says.
func TestReadmeSaysHowToInstall(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"go install ./cmd/infer ./cmd/infer-sim", "$(go env GOPATH)/bin", "opentask", extensionHome, "Load unpacked"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
}
