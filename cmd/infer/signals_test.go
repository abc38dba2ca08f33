package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// signalStreamingHeadless starts `infer headless -o json` on a long
// stream in project, sends sig once the answer is streaming, and checks
// the run ends like an interrupt: exit 130, the last line a run_error
// with code "interrupted". It returns the output's lines.
func signalStreamingHeadless(t *testing.T, home, project string, sig os.Signal) []string {
	t.Helper()
	cmd := exec.Command(inferBinary(t), "headless", "-o", "json", "stream 100000")
	cmd.Dir = project
	cmd.Env = append(os.Environ(), "INFER_HOME="+home)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killer := time.AfterFunc(hlGuard, func() { cmd.Process.Kill() }) // a hang fails below
	defer killer.Stop()
	var lines []string
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) == 3 { // run_started, then streaming text
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit %d after %v, want %d\n%s", code, sig, exitInterrupted, stderr.String())
	}
	if len(lines) < 4 || !strings.Contains(lines[len(lines)-1], `"type":"run_error"`) || !strings.Contains(lines[len(lines)-1], `"code":"interrupted"`) {
		t.Fatalf("output after %v ends with %q", sig, lines[len(lines)-1])
	}
	return lines
}

// needHangups skips where the tests themselves ignore SIGHUP, as under
// nohup: the infer they start inherits that and rightly outlives a hang-up
// (TestServeUnderNohupOutlivesAHangup), so a test that hangs up on it would
// fail for the way it was run, not for anything in infer.
func needHangups(t *testing.T) {
	t.Helper()
	if signal.Ignored(syscall.SIGHUP) {
		t.Skip("SIGHUP is ignored here (the tests run under nohup), so the infer they start would rightly outlive a hang-up")
	}
}

// TestHangupStopsHeadlessAndKeepsThePartialAnswer sends SIGHUP, what a
// closed terminal or a dropped ssh session delivers, and SIGTERM to
// streaming headless runs: each must end like an interrupt with the
// partial answer saved, not die with nothing written.
func TestHangupStopsHeadlessAndKeepsThePartialAnswer(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the infer binary")
	}
	needHangups(t)
	for _, sig := range []os.Signal{syscall.SIGHUP, syscall.SIGTERM} {
		home, project := t.TempDir(), t.TempDir()
		signalStreamingHeadless(t, home, project, sig)
		files, _ := filepath.Glob(filepath.Join(home, "projects", "*", "conversations", "*.jsonl"))
		if len(files) != 1 {
			t.Fatalf("%v: conversation files: %v", sig, files)
		}
		data, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), `"role":"assistant"`) {
			t.Fatalf("%v: the partial answer was not saved:\n%s", sig, data)
		}
	}
}

// TestHangupStopsServeCleanly: infer serve shuts down in order on SIGHUP,
// as on SIGINT and SIGTERM, instead of dying with its files half written.
func TestHangupStopsServeCleanly(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the infer binary")
	}
	needHangups(t)
	home, _ := initHome(t)
	p := startServe(t, home, t.TempDir())
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatal("infer serve did not stop after SIGHUP")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit %d after SIGHUP, want 0 (a clean shutdown)", code)
	}
}

// TestServeUnderNohupOutlivesAHangup: `nohup infer serve &` is how people
// keep infer running after logging out; the hang-up must not stop it.
func TestServeUnderNohupOutlivesAHangup(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the infer binary")
	}
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Skip("no nohup on this system")
	}
	home, _ := initHome(t)
	cmd := exec.Command(nohup, inferBinary(t), "serve", "--port", "0")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "INFER_HOME="+home)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	defer func() { cmd.Process.Kill(); <-done }()
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.Contains(sc.Text(), "listening on") {
		t.Fatalf("infer serve did not start: %q", sc.Text())
	}
	go io.Copy(io.Discard, out)
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		t.Fatalf("infer serve under nohup stopped on SIGHUP (exit %d)", cmd.ProcessState.ExitCode())
	case <-time.After(500 * time.Millisecond):
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("infer serve did not stop on SIGTERM")
	}
}
