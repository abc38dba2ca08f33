package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// demoWorld is `make demo` as a person runs it: scripts/demo.sh in a
// terminal, with a home of its own and none of infer's variables set, so
// that whatever the demo writes outside its own folder lands in home or
// tmp, where the test sees it.
type demoWorld struct {
	home, tmp, exit, bin string
	env                  []string
}

func newDemoWorld(t *testing.T) demoWorld {
	t.Helper()
	needTmux(t)
	base := t.TempDir()
	bin := filepath.Join(base, "bin")
	w := demoWorld{home: filepath.Join(base, "you"), tmp: filepath.Join(base, "tmp"), exit: filepath.Join(base, "exit"), bin: bin}
	for _, dir := range []string{bin, w.home, w.tmp} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for name, path := range map[string]string{"infer": inferBinary(t), "infer-sim": simBinary(t)} {
		if err := os.Symlink(path, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	w.env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + w.home, "TMPDIR=" + w.tmp, "TERM=xterm-256color",
		"LANG=C.UTF-8", "LC_ALL=C.UTF-8", "INFER_BIN=" + bin,
	}
	return w
}

func (w demoWorld) start(t *testing.T, args ...string) *tmuxScreen {
	t.Helper()
	script, err := filepath.Abs("../../scripts/demo.sh")
	if err != nil {
		t.Fatal(err)
	}
	return startTmux(t, w.home, w.env, w.exit, append([]string{"bash", script}, args...)...)
}

// files lists what is under dir, relative to it.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDemoHintIsSeenBeforeTheWorkspace: the demo's "type this first" hint
// is on the screen until the person opens the workspace; it was once
// printed a second before the workspace covered it.
func TestDemoHintIsSeenBeforeTheWorkspace(t *testing.T) {
	t.Parallel()
	w := newDemoWorld(t)
	s := w.start(t)
	s.waitFor("type this first:   open demo.infer.localhost; read h1", "press enter to open the workspace")
	s.press("Enter")
	s.waitFor("● connected · extension infer-sim", "Message the agent")
	s.press("C-c")
	s.waitFor("press ctrl+c again to quit")
	s.press("C-c")
	if code := s.exitCode(w.exit); code != "0" {
		t.Fatalf("the demo exited %s:\n%s", code, s.screen())
	}
}

// TestDemoKeepsItsStateInItsFolder: a whole demo, workspace and all,
// leaves nothing in the home folder (it once wrote ~/.local/state/infer
// and ~/.cache/infer there) nor in the temp folder.
func TestDemoKeepsItsStateInItsFolder(t *testing.T) {
	t.Parallel()
	w := newDemoWorld(t)
	s := w.start(t)
	sc := s.waitUntil("the demo's prompt or its workspace", func(sc string) bool {
		return strings.Contains(sc, "press enter to open the workspace") || strings.Contains(sc, "Message the agent")
	})
	if strings.Contains(sc, "press enter to open the workspace") {
		s.press("Enter")
	}
	s.waitFor("● connected · extension infer-sim", "Message the agent")
	s.press("C-c")
	s.waitFor("press ctrl+c again to quit")
	s.press("C-c")
	if code := s.exitCode(w.exit); code != "0" {
		t.Fatalf("the demo exited %s:\n%s", code, s.screen())
	}
	if got := files(t, w.home); len(got) != 0 {
		t.Errorf("the demo wrote to the home folder: %q", got)
	}
	if got := files(t, w.tmp); len(got) != 0 {
		t.Errorf("the demo left files in the temp folder: %q", got)
	}
}

// TestDemoSaysWhyTheSimulatorStopped: with --browser chrome and no
// Chromium, the demo stops at once with infer-sim's reason and keeps its
// log, naming where, instead of a workspace waiting for a browser while
// the log that says why is deleted.
func TestDemoSaysWhyTheSimulatorStopped(t *testing.T) {
	t.Parallel()
	w := newDemoWorld(t)
	s := w.start(t, "--browser", "chrome", "--chrome-path", "/nonexistent/chromium")
	if code := s.exitCode(w.exit); code != "1" {
		t.Fatalf("the demo exited %s:\n%s", code, s.screen())
	}
	screen := s.screen()
	for _, want := range []string{"infer-sim stopped before it could connect", "/nonexistent/chromium", "install Chromium"} {
		if !strings.Contains(flat(screen), want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	m := regexp.MustCompile(`its logs are kept in (\S+)`).FindStringSubmatch(flat(screen))
	if m == nil {
		t.Fatalf("the screen names no kept log:\n%s", screen)
	}
	log, err := os.ReadFile(filepath.Join(m[1], "infer-sim.log"))
	if err != nil || !strings.Contains(string(log), "/nonexistent/chromium") {
		t.Errorf("the kept log: %v\n%s", err, log)
	}
	if !strings.HasPrefix(m[1], w.tmp) {
		t.Errorf("the log was kept in %s, outside TMPDIR %s", m[1], w.tmp)
	}
}

// TestDemoSaysWhenTheSimulatorDiesMidway: an infer-sim that stops while
// the workspace is open (its browser crashed, say) is reported when the
// person quits, with its log kept, rather than removed with the rest.
func TestDemoSaysWhenTheSimulatorDiesMidway(t *testing.T) {
	t.Parallel()
	w := newDemoWorld(t)
	s := w.start(t)
	s.waitFor("press enter to open the workspace")
	s.press("Enter")
	s.waitFor("● connected · extension infer-sim", "Message the agent")
	sim := processOf(t, filepath.Join(w.bin, "infer-sim"))
	if err := sim.Kill(); err != nil {
		t.Fatal(err)
	}
	s.press("C-c")
	s.waitFor("press ctrl+c again to quit")
	s.press("C-c")
	if code := s.exitCode(w.exit); code != "1" {
		t.Fatalf("the demo exited %s:\n%s", code, s.screen())
	}
	screen := flat(s.screen())
	if !strings.Contains(screen, "infer-sim stopped while the workspace ran") || !strings.Contains(screen, "its logs are kept in") {
		t.Errorf("the demo did not say infer-sim stopped:\n%s", s.screen())
	}
}

// processOf finds the one running process whose program is path, by its
// command line in /proc.
func processOf(t *testing.T, path string) *os.Process {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc to find the process in")
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if argv0, _, _ := strings.Cut(string(cmdline), "\x00"); argv0 == path {
			p, err := os.FindProcess(pid)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	t.Fatalf("no process runs %s", path)
	return nil
}
