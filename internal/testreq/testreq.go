// Package testreq is how a test says it needs something of the machine
// that Go cannot provide: bubblewrap, Chromium, tmux. Outside CI such a
// test skips with the reason and the install line, so `make test` on a
// laptop without them is green and says what it left out; under CI (the
// CI environment variable set, as .ci/run does after installing them all)
// it fails instead, so a broken install can never pass as a skip.
//
// Every skip it makes begins with SkipPrefix, which the summary that
// `make test` prints at the end groups by, and every need is listed in
// Needs, which the report `make test` prints first walks.
package testreq

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// SkipPrefix begins every message this package skips or fails with,
// followed by the need's name and a colon.
const SkipPrefix = "needs "

// Need is one thing some tests cannot run without.
type Need struct {
	// Name is what a person would install, as the skip says it.
	Name string
	// Ident is the name of the package variable that holds this Need;
	// the report finds the tests that need it by that name.
	Ident string
	// Install is the command that installs it on Debian or Ubuntu.
	Install string
	// Programs are the names looked up on PATH, first found wins.
	Programs []string
}

// The needs of infer's tests. A test that needs the sandbox asks
// sandbox.Detect rather than only looking bwrap up, since bubblewrap can be
// installed and still unable to make its namespaces; it reports what is
// wrong through Lacking.
var (
	Bubblewrap = Need{Name: "bubblewrap", Ident: "Bubblewrap", Install: "apt-get install -y bubblewrap", Programs: []string{"bwrap"}}
	Chromium   = Need{Name: "Chromium", Ident: "Chromium", Install: "apt-get install -y chromium", Programs: []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}}
	Tmux       = Need{Name: "tmux", Ident: "Tmux", Install: "apt-get install -y tmux", Programs: []string{"tmux"}}
	// Procps is for the tests that count processes with pgrep to see that
	// none outlives infer; without it they could only time out.
	Procps = Need{Name: "pgrep", Ident: "Procps", Install: "apt-get install -y procps", Programs: []string{"pgrep"}}
)

// Needs is every Need above, in the order the report lists them.
var Needs = []Need{Bubblewrap, Chromium, Tmux, Procps}

// InCI reports whether the tests run under CI, where nothing may be
// skipped for want of a program.
func InCI() bool { return os.Getenv("CI") != "" }

// Find returns the path of the first of n's programs on PATH, or "".
func (n Need) Find() string {
	for _, name := range n.Programs {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// MachineEnv names the environment variable `make test` sets to what the
// report's state says of this machine. Every check here reads it, and go
// test keys its cache on the variables a test read: so a test that skipped
// for want of bubblewrap runs again once bubblewrap is installed, where
// otherwise the cache, which ignores files outside the module such as
// /usr/bin/bwrap, would replay the skip.
const MachineEnv = "INFER_TEST_MACHINE"

// Check ends t through Lacking unless ok; problem says what is wrong.
// It is for needs found by other means than PATH, such as the sandbox,
// which sandbox.Detect probes.
func Check(t testing.TB, n Need, ok bool, problem any) {
	t.Helper()
	os.Getenv(MachineEnv)
	if !ok {
		Lacking(t, n, problem)
	}
}

// Program returns the path of n's program, or ends t through Lacking when
// none is on PATH.
func Program(t testing.TB, n Need) string {
	t.Helper()
	os.Getenv(MachineEnv)
	p := n.Find()
	if p == "" {
		Lacking(t, n, fmt.Sprintf("none of %s on PATH", strings.Join(n.Programs, ", ")))
	}
	return p
}

// Lacking ends t because n is missing or unusable, problem saying how: it
// skips outside CI and fails under CI.
func Lacking(t testing.TB, n Need, problem any) {
	t.Helper()
	os.Getenv(MachineEnv)
	msg := Message(n, problem)
	if InCI() {
		t.Fatalf("%s (CI must have it: .ci/run installs it)", msg)
		return
	}
	t.Skip(msg)
}

// Message is the line a test lacking n ends with.
func Message(n Need, problem any) string {
	return fmt.Sprintf("%s%s: %v (install: %s)", SkipPrefix, n.Name, problem, n.Install)
}
