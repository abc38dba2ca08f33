package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/internal/testreq"
	"github.com/infer-workspace/infer/session/config"
)

// tmuxScreen is one detached tmux session on a private server: the test
// types into it and reads the screen back, as a person would.
type tmuxScreen struct {
	t      *testing.T
	socket string
	env    []string
	exited string // the file the command's exit status goes to
}

// Screen size of the session: wide enough for the two-column layout.
const tmuxCols, tmuxRows = 120, 40

// startTmux runs command in a new detached session of its own tmux server
// (-L with a unique name, no configuration file), so the test never
// touches a server of the person running it. The server dies with the test.
func startTmux(t *testing.T, dir string, env []string, exitFile string, args ...string) *tmuxScreen {
	t.Helper()
	s := &tmuxScreen{t: t, socket: fmt.Sprintf("infer-test-%d-%d", os.Getpid(), time.Now().UnixNano()), env: env, exited: exitFile}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	// The shell records the exit status and keeps the window open, so a
	// failure's last screen can still be read.
	command := strings.Join(quoted, " ") + "; echo $? > " + shellQuote(exitFile) + "; sleep 600"
	if out, err := s.run("new-session", "-d", "-s", "infer", "-x", strconv.Itoa(tmuxCols), "-y", strconv.Itoa(tmuxRows), "-c", dir, command); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	// kill-server leaves the socket file behind; it is ours to remove.
	sock, _ := s.run("display-message", "-p", "#{socket_path}")
	t.Cleanup(func() {
		s.run("kill-server")
		if p := strings.TrimSpace(sock); filepath.IsAbs(p) {
			os.Remove(p)
		}
	})
	return s
}

func (s *tmuxScreen) run(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-L", s.socket, "-f", "/dev/null", "-u"}, args...)...)
	cmd.Env = s.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// typeLine types text literally, then presses enter.
func (s *tmuxScreen) typeLine(text string) {
	s.t.Helper()
	if out, err := s.run("send-keys", "-t", "infer", "-l", text); err != nil {
		s.t.Fatalf("typing %q: %v\n%s", text, err, out)
	}
	s.press("Enter")
}

// press sends one named key (Enter, Escape, C-c, y).
func (s *tmuxScreen) press(key string) {
	s.t.Helper()
	if out, err := s.run("send-keys", "-t", "infer", key); err != nil {
		s.t.Fatalf("pressing %s: %v\n%s", key, err, out)
	}
}

// screen is what the pane shows now, as plain text.
func (s *tmuxScreen) screen() string {
	out, err := s.run("capture-pane", "-p", "-t", "infer")
	if err != nil {
		return "(no screen: " + err.Error() + ")\n" + out
	}
	return out
}

// waitUntil polls the screen until ok accepts it. The deadline only
// guards against a hang; it is not a speed check.
func (s *tmuxScreen) waitUntil(what string, ok func(screen string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		sc := s.screen()
		if strings.Contains(sc, "level=") {
			s.t.Fatalf("a log line was written over the workspace:\n%s", sc)
		}
		if ok(sc) {
			return sc
		}
		if time.Now().After(deadline) {
			status := "still running"
			if b, err := os.ReadFile(s.exited); err == nil {
				status = "exited " + strings.TrimSpace(string(b))
			}
			s.t.Fatalf("the screen never showed %s (infer %s):\n%s", what, status, sc)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitFor waits until the screen contains every string.
func (s *tmuxScreen) waitFor(want ...string) string {
	s.t.Helper()
	return s.waitUntil(fmt.Sprintf("%q", want), func(sc string) bool {
		for _, w := range want {
			if !strings.Contains(sc, w) {
				return false
			}
		}
		return true
	})
}

// exitCode waits for the shell around infer to write its exit status.
func (s *tmuxScreen) exitCode(file string) string {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(file); err == nil && strings.TrimSpace(string(b)) != "" {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("infer did not exit:\n%s", s.screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tmuxDirs is a throwaway world for one infer: its home, a project, the
// XDG directories, and the environment that points at them.
type tmuxDirs struct {
	base, home, project, state string
	env                        []string
}

func newTmuxDirs(t *testing.T) tmuxDirs {
	t.Helper()
	base := t.TempDir()
	d := tmuxDirs{base: base, home: filepath.Join(base, "home"), project: filepath.Join(base, "project"), state: filepath.Join(base, "state")}
	for _, dir := range []string{d.home, d.project, d.state} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// A small, fixed environment: no API keys (offline/demo only), and
	// every directory infer writes to is the test's own.
	d.env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + base, "TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
		"INFER_HOME=" + d.home, "XDG_STATE_HOME=" + d.state,
		"XDG_CACHE_HOME=" + filepath.Join(base, "cache"), "XDG_CONFIG_HOME=" + filepath.Join(base, "config"),
	}
	return d
}

func needTmux(t *testing.T) {
	t.Helper()
	testreq.Program(t, testreq.Tmux)
	if testing.Short() {
		t.Skip("-short: skipping the tmux end-to-end test")
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// flat joins a screen's wrapped lines: borders become spaces and runs of
// spaces one, so a sentence can be found whatever the pane width.
func flat(screen string) string {
	screen = strings.NewReplacer("│", " ", "┃", " ", "\n", " ").Replace(screen)
	return strings.Join(strings.Fields(screen), " ")
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestTmuxWorkspaceEndToEnd runs `infer` in a real terminal (tmux) with
// infer-sim as the browser extension, and uses it the way a person would:
// chat, watch the browser pane, approve a command, interrupt a long
// answer, quit.
func TestTmuxWorkspaceEndToEnd(t *testing.T) {
	t.Parallel()
	needTmux(t)
	needSandbox(t)
	infer, sim := inferBinary(t), simBinary(t)
	d := newTmuxDirs(t)
	base, home, project, state, env := d.base, d.home, d.project, d.state, d.env

	port := freePort(t)
	initCmd := exec.Command(infer, "init", "--port", strconv.Itoa(port))
	initCmd.Env = env
	if out, err := initCmd.CombinedOutput(); err != nil {
		t.Fatalf("infer init: %v\n%s", err, out)
	}
	bu, _, err := config.LoadBrowserUse(config.BrowserUsePath(home))
	if err != nil {
		t.Fatal(err)
	}

	exitFile := filepath.Join(base, "exit-code")
	tm := startTmux(t, project, env, exitFile, infer, "--model", "offline/demo")
	tm.waitFor("Message the agent", "○ waiting for the browser extension", "port "+strconv.Itoa(port))

	simLog, err := os.Create(filepath.Join(base, "infer-sim.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer simLog.Close()
	simCmd := exec.Command(sim, "--port", strconv.Itoa(port), "--token", bu.Extension.Token)
	simCmd.Env, simCmd.Stdout, simCmd.Stderr = env, simLog, simLog
	if err := simCmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { simCmd.Process.Kill(); simCmd.Wait() })
	defer func() {
		if t.Failed() {
			logs, _ := os.ReadFile(filepath.Join(base, "infer-sim.log"))
			t.Logf("infer-sim's log:\n%s", logs)
			logs, _ = os.ReadFile(filepath.Join(state, "infer", "infer.log"))
			t.Logf("infer's log:\n%s", logs)
		}
	}()
	tm.waitFor("● connected · extension", "browser: ● connected")

	// A message: the answer streams into the chat and the tabs the
	// extension reports appear in the browser pane.
	tm.typeLine("tabs")
	tm.waitFor("You", "│ tabs", "Calling BrowserTabs.", "✓ BrowserTabs", "Done.", "▶ controlled · • focused", "✓ tabs · ")

	// A command that needs approval: it waits until the person allows it.
	tm.typeLine("run touch approved.txt")
	tm.waitFor("⚠ Bash · from the agent", "$ touch approved.txt")
	if _, err := os.Stat(filepath.Join(project, "approved.txt")); err == nil {
		t.Fatal("the command ran before it was approved")
	}
	// A request that just arrived ignores keys for a moment; the hint
	// goes away when it takes them.
	tm.waitUntil("the approval ready for keys", func(sc string) bool {
		return strings.Contains(sc, "⚠ Bash · from the agent") && !strings.Contains(sc, "keys wait a moment")
	})
	tm.press("y")
	tm.waitFor("✓ Bash touch approved.txt", "No tool calls waiting for you.")
	if _, err := os.Stat(filepath.Join(project, "approved.txt")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}

	// A long answer, stopped with Escape.
	tm.typeLine("stream 100000")
	tm.waitFor("working · esc stops", " 10 11 12 ")
	tm.press("Escape")
	tm.waitUntil("the interrupted notice", func(sc string) bool {
		return strings.Contains(sc, "⏹ Interrupted.") && !strings.Contains(sc, "working · esc stops")
	})

	// ctrl+c twice quits; the process exits 0.
	tm.press("C-c")
	tm.waitFor("press ctrl+c again to quit")
	tm.press("C-c")
	if code := tm.exitCode(exitFile); code != "0" {
		t.Fatalf("infer exited %s after ctrl+c twice", code)
	}

	// Diagnostics went to the log file, under XDG_STATE_HOME.
	logs, err := os.ReadFile(filepath.Join(state, "infer", "infer.log"))
	if err != nil || !strings.Contains(string(logs), "extension connected") || !strings.Contains(string(logs), "infer quit") {
		t.Fatalf("infer.log: %v\n%s", err, logs)
	}
}

// TestTmuxWorkspaceWithoutPairing: before `infer init` there is no
// browser_use.yaml; the workspace still opens, says how to set up the
// browser, chats, and quits with /quit.
func TestTmuxWorkspaceWithoutPairing(t *testing.T) {
	t.Parallel()
	needTmux(t)
	d := newTmuxDirs(t)
	exitFile := filepath.Join(d.base, "exit-code")
	tm := startTmux(t, d.project, d.env, exitFile, inferBinary(t), "--model", "offline/demo", "--mode", "plan")
	tm.waitFor("○ browser use is off", "browser: ○ off", "mode: plan")
	// Flattened, the chat's wrapped hint may fall between the pane's rows.
	if s := flat(tm.screen()); !strings.Contains(s, "browser_use.yaml does not exist: run") || !strings.Contains(s, "`infer init` to create the pairing token") {
		t.Fatalf("the pane should say to run infer init:\n%s", tm.screen())
	}
	tm.typeLine("hello")
	tm.waitFor("│ hello", "offline demo model")
	tm.typeLine("/quit")
	if code := tm.exitCode(exitFile); code != "0" {
		t.Fatalf("infer exited %s after /quit", code)
	}
}

func TestTUIFlagsAreCheckedFirst(t *testing.T) {
	newHome(t)
	for _, args := range [][]string{{"--mode", "yolo"}, {"--port", "70000"}, {"--port", "-1"}} {
		_, errOut, code := infer(t, args...)
		if code != exitUsage || !strings.Contains(errOut, args[0]) {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
	// Without a terminal the workspace cannot open: the help is printed.
	out, errOut, code := infer(t, "--mode", "plan")
	if code != 0 || !strings.Contains(out, "Available Commands:") || !strings.Contains(errOut, "not a terminal") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestTUIBridgeOffReason(t *testing.T) {
	home := newHome(t)
	if got := bridgeOffReason(home); !strings.Contains(got, "does not exist") || !strings.Contains(got, "infer init") {
		t.Errorf("missing file: %q", got)
	}
	b := config.NewBrowserUse(config.DefaultPort)
	b.Enabled = false
	if err := config.CreateBrowserUse(config.BrowserUsePath(home), b); err != nil {
		t.Fatal(err)
	}
	if got := bridgeOffReason(home); !strings.Contains(got, "enabled is false") {
		t.Errorf("disabled: %q", got)
	}
}

func TestTUIStartupNotices(t *testing.T) {
	t.Parallel()
	warnings := "infer: warning: config.yaml: unknown key agent.mdoe\n" +
		"infer: the browser bridge is off: browser_use.yaml: does not exist; run `infer init` to create it\n\n"
	got := startupNotices(warnings, "browser_use.yaml does not exist")
	if len(got) != 1 || got[0] != "warning: config.yaml: unknown key agent.mdoe" {
		t.Fatalf("the bridge line is the pane's to show: %q", got)
	}
	if got := startupNotices(warnings, ""); len(got) != 2 {
		t.Fatalf("without the pane saying it, the bridge line stays: %q", got)
	}
}

// TestTmuxHungUpTerminalEndsInfer: when the terminal goes away, infer
// shuts down in order (what was said is saved) and frees the bridge's
// port, instead of running on with nobody to see it.
func TestTmuxHungUpTerminalEndsInfer(t *testing.T) {
	t.Parallel()
	needTmux(t)
	needHangups(t)
	infer := inferBinary(t)
	d := newTmuxDirs(t)
	port := freePort(t)
	initCmd := exec.Command(infer, "init", "--port", strconv.Itoa(port))
	initCmd.Env = d.env
	if out, err := initCmd.CombinedOutput(); err != nil {
		t.Fatalf("infer init: %v\n%s", err, out)
	}
	logPath := filepath.Join(d.state, "infer", "infer.log")
	t.Cleanup(func() {
		// Should infer outlive the test after all, it is not left behind.
		exec.Command("pkill", "-f", "--", "--port "+strconv.Itoa(port)+"$").Run()
		if t.Failed() {
			logs, _ := os.ReadFile(logPath)
			t.Logf("infer's log:\n%s", logs)
		}
	})

	// infer runs under a script that traps SIGHUP for its own clean-up,
	// as `make demo` runs it. Whether a SIGHUP reaches infer depends on
	// the shells between it and the terminal (TestWatchTerminal covers the
	// case where none does); either way infer must stop.
	script := "trap 'exit 130' HUP; " + shellQuote(infer) + " --model offline/demo --port " + strconv.Itoa(port) + "; true"
	tm := startTmux(t, d.project, d.env, filepath.Join(d.base, "exit-code"), "bash", "-c", script)
	tm.waitFor("Message the agent", "port "+strconv.Itoa(port))
	tm.typeLine("hello before the hangup")
	tm.waitFor("offline demo model")
	if out, err := tm.run("kill-server"); err != nil {
		t.Fatalf("tmux kill-server: %v\n%s", err, out)
	}

	deadline := time.Now().Add(30 * time.Second)
	for {
		ln, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			ln.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("infer still holds port %d after its terminal went away: %v", port, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	logs, err := os.ReadFile(logPath)
	if err != nil || !strings.Contains(string(logs), "infer quit") {
		t.Fatalf("infer should have shut down in order: %v\n%s", err, logs)
	}
	saved, err := filepath.Glob(filepath.Join(d.home, "projects", "*", "conversations", "*.jsonl"))
	if err != nil || len(saved) != 1 {
		t.Fatalf("conversations saved: %v %v", saved, err)
	}
	if b, err := os.ReadFile(saved[0]); err != nil || !strings.Contains(string(b), "hello before the hangup") {
		t.Fatalf("the conversation lost its message: %v\n%s", err, b)
	}
}
