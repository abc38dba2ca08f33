package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTmuxApprovalShowsTheWholeCommand is finding 9 of issue 21 in a real
// terminal: a command pasted with sixty blank lines and forty more lines
// before its payload. The box names the blank run and its count, takes no
// allow key while the payload has not been on screen, and allows once the
// person has scrolled to the end.
func TestTmuxApprovalShowsTheWholeCommand(t *testing.T) {
	t.Parallel()
	needTmux(t)
	d := newTmuxDirs(t)
	exitFile := filepath.Join(d.base, "exit-code")
	tm := startTmux(t, d.project, d.env, exitFile, inferBinary(t), "--model", "offline/demo", "--mode", "standard")
	tm.waitFor("Message the agent")

	var b strings.Builder
	b.WriteString("run echo hi" + strings.Repeat("\n", 61))
	for i := range 40 {
		fmt.Fprintf(&b, "echo step %d\n", i)
	}
	b.WriteString("touch payload.txt")
	// Pasted, as a person would bring in a long command: tmux wraps the
	// buffer in bracketed-paste marks, so the newlines stay in the message.
	if out, err := tm.run("set-buffer", "--", b.String()); err != nil {
		t.Fatalf("tmux set-buffer: %v\n%s", err, out)
	}
	if out, err := tm.run("paste-buffer", "-p", "-t", "infer"); err != nil {
		t.Fatalf("tmux paste-buffer: %v\n%s", err, out)
	}
	tm.press("Enter")
	tm.waitFor("⚠ Bash · from the agent", "$ echo hi", "⟨60 blank lines⟩", "more lines below")
	tm.waitUntil("the approval ready for keys", func(sc string) bool {
		return strings.Contains(sc, "⚠ Bash · from the agent") && !strings.Contains(sc, "keys wait a moment")
	})

	// y before the end: nothing. The arrow after it shows that the pane
	// has read both keys, in order.
	tm.press("y")
	tm.press("Down")
	tm.waitFor("scroll 1/")
	if _, err := os.Stat(filepath.Join(d.project, "payload.txt")); err == nil {
		t.Fatal("the command ran before its end was shown")
	}
	if sc := tm.screen(); !strings.Contains(sc, "⚠ Bash · from the agent") {
		t.Fatalf("the request was answered before its end was shown:\n%s", sc)
	}

	tm.press("End")
	tm.waitFor("touch payload.txt", "y allow once")
	tm.press("y")
	tm.waitFor("No tool calls waiting for you.")
	tm.waitUntil("the command's result", func(string) bool {
		_, err := os.Stat(filepath.Join(d.project, "payload.txt"))
		return err == nil
	})
	tm.typeLine("/quit")
	if code := tm.exitCode(exitFile); code != "0" {
		t.Fatalf("infer exited %s after /quit", code)
	}
}

// TestTmuxApprovalRunsInsideUnlessOutsideIsChosen is finding 9 of issue
// 22 in a real terminal. A command that names a path outside the project
// offers no "always": a does nothing there and the box says so. The box
// says in one line that an approved command runs inside the sandbox, and
// nothing of the browser panel; y runs it there (it cannot write outside
// the project), and o, its own key, runs it outside.
func TestTmuxApprovalRunsInsideUnlessOutsideIsChosen(t *testing.T) {
	t.Parallel()
	needTmux(t)
	needSandbox(t)
	d := newTmuxDirs(t)
	exitFile := filepath.Join(d.base, "exit-code")
	tm := startTmux(t, d.project, d.env, exitFile, inferBinary(t), "--model", "offline/demo", "--mode", "standard")
	tm.waitFor("Message the agent")
	outside := filepath.Join(d.base, "outside.txt")
	ready := func() {
		t.Helper()
		tm.waitUntil("the approval ready for keys", func(sc string) bool {
			return strings.Contains(sc, "$ touch ../outside.txt") && !strings.Contains(sc, "keys wait a moment")
		})
	}

	tm.typeLine("run touch ../outside.txt")
	sc := tm.waitUntil("the box with its where-line and keys", func(sc string) bool {
		f := flat(sc)
		return strings.Contains(f, "Runs inside the sandbox: writes only the project, network through infer.") &&
			strings.Contains(f, "o run outside the sandbox, once")
	})
	if strings.Contains(sc, "panel") || strings.Contains(sc, "Always allow") {
		t.Fatalf("the box speaks of the browser panel or offers always:\n%s", sc)
	}
	ready()

	// a: no "always" here, so nothing is answered, and the box says why.
	tm.press("a")
	tm.waitUntil("the hint for a", func(sc string) bool { return strings.Contains(flat(sc), "no 'always' for this request") })
	if sc := tm.screen(); !strings.Contains(sc, "⚠ Bash · from the agent") {
		t.Fatalf("a answered a request that offers no always:\n%s", sc)
	}

	// y: it runs, in the sandbox, so nothing is written outside (what
	// it writes lands in the sandbox's private /tmp, or fails).
	tm.press("y")
	tm.waitFor("No tool calls waiting for you.", "Bash touch ../outside.txt · ")
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("a command allowed once wrote outside the project")
	}

	// o: outside the sandbox, with the person's permissions.
	tm.typeLine("run touch ../outside.txt")
	tm.waitUntil("the second request", func(sc string) bool { return strings.Contains(flat(sc), "o run outside the sandbox, once") })
	ready()
	tm.press("o")
	tm.waitUntil("the command run outside", func(string) bool {
		_, err := os.Stat(outside)
		return err == nil
	})
	tm.typeLine("/quit")
	if code := tm.exitCode(exitFile); code != "0" {
		t.Fatalf("infer exited %s after /quit", code)
	}
}
