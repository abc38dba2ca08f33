package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/sim"
)

// connectOpenTask connects the opentask profile of infer-sim to url.
func connectOpenTask(t *testing.T, url, token string) (*sim.Client, *sim.Subscription) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := sim.NewClient(sim.ClientOptions{URL: url, Token: token, Profile: sim.OpenTask, Browser: &sim.Minimal{},
		MinBackoff: time.Second, MaxBackoff: time.Second})
	sub := c.Subscribe()
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; sub.Close() })
	if err := c.WaitConnected(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return c, sub
}

// chatEventOf decodes the AG-UI type, code and text of a chat frame.
func chatEventOf(f wire.ChatEvent) (typ, code, text string) {
	var e struct{ Type, Code, Delta string }
	json.Unmarshal(f.Event, &e)
	return e.Type, e.Code, e.Delta
}

// TestSigtermEndsThePanelsRunBeforeClosing: infer serve stopped by SIGTERM
// during a turn sends the panel the run's end (a notice, then RUN_ERROR
// with code "interrupted") before it closes the socket; it once closed
// the socket first, leaving opentask on "Working…" for good.
func TestSigtermEndsThePanelsRunBeforeClosing(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the infer binary")
	}
	home, token := initHome(t)
	p := startServe(t, home, t.TempDir())
	c, sub := connectOpenTask(t, p.url, token)
	if err := c.SendUserMessage(testCtx(t), "stream 100000"); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.WaitFor(testCtx(t), sub, func(f wire.ChatEvent) bool {
		typ, _, _ := chatEventOf(f)
		return typ == "TEXT_MESSAGE_CONTENT"
	}); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatal("infer serve did not stop after SIGTERM")
	}
	checkRunEndedBeforeClose(t, sub)
}

// TestSigtermEndsThePanelsHeadlessRunBeforeClosing: the same for infer
// headless with the panel attached to its bridge.
func TestSigtermEndsThePanelsHeadlessRunBeforeClosing(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the infer binary")
	}
	home, token := initHome(t)
	cmd := exec.Command(inferBinary(t), "headless", "-v", "--port", "0", "-o", "json", "stream 100000")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "INFER_HOME="+home)
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listenLine.FindString(sc.Text()); m != "" && strings.Contains(sc.Text(), "browser bridge listening") {
				urls <- m
			}
		}
		cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() { cmd.Process.Kill(); <-done })
	var url string
	select {
	case url = <-urls:
	case <-done:
		t.Fatal("infer headless ended without serving the bridge")
	}
	_, sub := connectOpenTask(t, url, token)
	if _, err := sim.WaitFor(testCtx(t), sub, func(f wire.ChatEvent) bool {
		typ, _, _ := chatEventOf(f)
		return typ == "TEXT_MESSAGE_CONTENT"
	}); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("infer headless did not stop after SIGTERM")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("exit %d, want %d", code, exitInterrupted)
	}
	checkRunEndedBeforeClose(t, sub)
}

// checkRunEndedBeforeClose checks that the panel got the interrupted
// run's notice and RUN_ERROR, once infer is gone: whatever infer sent is
// in the subscription by then, and the client cannot reconnect to a
// process that is no more.
func checkRunEndedBeforeClose(t *testing.T, sub *sim.Subscription) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var notice strings.Builder
	f, err := sim.WaitFor(ctx, sub, func(f wire.ChatEvent) bool {
		typ, _, text := chatEventOf(f)
		if typ == "TEXT_MESSAGE_CONTENT" {
			notice.WriteString(text)
		}
		return typ == "RUN_ERROR"
	})
	if err != nil {
		t.Fatalf("the panel got no RUN_ERROR before infer closed the socket: %v", err)
	}
	if _, code, _ := chatEventOf(f); code != "interrupted" {
		t.Errorf("RUN_ERROR code %q, want interrupted", code)
	}
	if !strings.Contains(notice.String(), "Interrupted") {
		t.Errorf("no notice text before the RUN_ERROR; the text ends %q", tail(notice.String(), 200))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestTmuxSigtermEndsThePanelsRunBeforeClosing: the same for the TUI, which
// used to close the bridge before its workspace, on SIGTERM and on quit.
func TestTmuxSigtermEndsThePanelsRunBeforeClosing(t *testing.T) {
	t.Parallel()
	needTmux(t)
	infer := inferBinary(t)
	d := newTmuxDirs(t)
	port := freePort(t)
	initCmd := exec.Command(infer, "init", "--port", strconv.Itoa(port))
	initCmd.Env = d.env
	if out, err := initCmd.CombinedOutput(); err != nil {
		t.Fatalf("infer init: %v\n%s", err, out)
	}
	bu, _, err := config.LoadBrowserUse(config.BrowserUsePath(d.home))
	if err != nil {
		t.Fatal(err)
	}
	exitFile := filepath.Join(d.base, "exit-code")
	tm := startTmux(t, d.project, d.env, exitFile, infer, "--model", "offline/demo")
	tm.waitFor("Message the agent", "port "+strconv.Itoa(port))
	shell, err := tm.run("display-message", "-p", "#{pane_pid}")
	if err != nil {
		t.Fatalf("the pane's shell: %v %s", err, shell)
	}
	out, err := exec.Command("pgrep", "-P", strings.TrimSpace(shell)).Output()
	pids := strings.Fields(string(out))
	if err != nil || len(pids) != 1 {
		t.Fatalf("infer's pid under the pane's shell %s: %q %v", shell, out, err)
	}
	pid, err := strconv.Atoi(pids[0])
	if err != nil {
		t.Fatal(err)
	}

	c, sub := connectOpenTask(t, fmt.Sprintf("ws://127.0.0.1:%d/ws", port), bu.Extension.Token)
	if err := c.SendUserMessage(testCtx(t), "stream 100000"); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.WaitFor(testCtx(t), sub, func(f wire.ChatEvent) bool {
		typ, _, _ := chatEventOf(f)
		return typ == "TEXT_MESSAGE_CONTENT"
	}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	tm.exitCode(exitFile)
	checkRunEndedBeforeClose(t, sub)
}
