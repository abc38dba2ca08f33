package tools

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestBashSuccess(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	writeFiles(t, env.Root, map[string]string{"hello.txt": "hi"})
	out := run(t, env, "Bash", `{"command": "pwd; cat hello.txt; echo err >&2", "description": "probe"}`)
	if !out.Success || out.ExitCode == nil || *out.ExitCode != 0 || !out.Ran {
		t.Fatalf("outcome %+v", out)
	}
	want := env.Root + "\nhierr\n"
	if out.Output != want {
		t.Errorf("output %q, want %q (runs in the root, stderr combined)", out.Output, want)
	}
	if out.Error != "" || out.Approval != "auto mode" {
		t.Errorf("error %q approval %q", out.Error, out.Approval)
	}
}

func TestBashNonZeroExit(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	out := run(t, env, "Bash", `{"command": "echo partial; exit 3"}`)
	if out.Success || out.ExitCode == nil || *out.ExitCode != 3 || out.Error != "exit code 3" {
		t.Fatalf("outcome %+v", out)
	}
	if !strings.Contains(out.Output, "partial") || !strings.Contains(out.Output, "Exit code: 3") {
		t.Errorf("output %q keeps neither the output nor the code", out.Output)
	}
	out = run(t, env, "Bash", `{"command": "true"}`)
	if !out.Success || out.Output != "(no output)" {
		t.Errorf("silent command: %+v", out)
	}
}

// groupAlive reports whether any live (non-zombie) process is in pgid.
func groupAlive(t *testing.T, pgid int) bool {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		data, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		// Fields after the parenthesised command: state ppid pgrp ...
		i := bytes.LastIndexByte(data, ')')
		f := strings.Fields(string(data[i+1:]))
		if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second) // a hang guard, not a timing check
	for groupAlive(t, pgid) {
		if time.Now().After(deadline) {
			t.Fatalf("processes of group %d are still running", pgid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var shellPID = regexp.MustCompile(`pgid=(\d+)`)

func TestBashTimeoutKillsProcessGroup(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to inspect process groups")
	}
	env := newEnv(t)
	for _, tc := range []struct{ name, cmd string }{
		{"plain", `echo pgid=$$; sleep 100 & sleep 100; wait`},
		// Children that ignore SIGTERM get SIGKILL after the grace period.
		{"ignores TERM", `trap '' TERM; echo pgid=$$; sleep 100 & sleep 100; wait`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := run(t, env, "Bash", fmt.Sprintf(`{"command": %q, "timeout_ms": 300}`, tc.cmd))
			if out.Success || !out.TimedOut || out.ExitCode != nil || !out.Ran {
				t.Fatalf("outcome %+v", out)
			}
			if !strings.Contains(out.Output, "timed out after 300ms") || !strings.Contains(out.Error, "timed out") {
				t.Errorf("output %q error %q", out.Output, out.Error)
			}
			m := shellPID.FindStringSubmatch(out.Output)
			if m == nil {
				t.Fatalf("no pgid in %q", out.Output)
			}
			pgid, _ := strconv.Atoi(m[1])
			waitGroupGone(t, pgid)
		})
	}
}

func TestBashInterruptKillsProcessGroup(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	p := NewPipeline(PipelineConfig{Env: env})
	marker := filepath.Join(env.Root, "started")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancel once the command is surely running.
		for ctx.Err() == nil {
			if _, err := os.Stat(marker); err == nil {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	out := p.Run(ctx, Call{Name: "Bash", Args: `{"command": "echo pgid=$$; sleep 100 & touch started; wait"}`}, Auto)
	cancel()
	if !out.Interrupted || out.Success || out.Error != "interrupted" || !strings.Contains(out.Output, "interrupted") {
		t.Fatalf("outcome %+v", out)
	}
	m := shellPID.FindStringSubmatch(out.Output)
	if m == nil {
		t.Fatalf("no pgid in %q", out.Output)
	}
	pgid, _ := strconv.Atoi(m[1])
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		waitGroupGone(t, pgid)
	}
}

func TestBashOutputFloodIsCapped(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	// 200,000 bytes: "start", then x's, then "end".
	cmd := `printf start; head -c 199992 /dev/zero | tr '\0' x; printf end`
	out := run(t, env, "Bash", fmt.Sprintf(`{"command": %q}`, cmd))
	if !out.Success {
		t.Fatalf("outcome %+v", out)
	}
	if len(out.Output) > bashOutputLimit+100 {
		t.Errorf("output is %d bytes, over the cap", len(out.Output))
	}
	if !strings.HasPrefix(out.Output, "start") || !strings.HasSuffix(out.Output, "end") {
		t.Errorf("head or tail lost: %q…%q", out.Output[:10], out.Output[len(out.Output)-10:])
	}
	if !strings.Contains(out.Output, "[... 170000 bytes omitted ...]") {
		t.Errorf("no omission marker with the right count in output")
	}
}

func TestCaptureKeepsHeadAndTail(t *testing.T) {
	t.Parallel()
	c := newCapture(10)
	for _, s := range []string{"abc", "defgh", "ijklmnop", "qrstuvwxyz"} {
		c.Write([]byte(s))
	}
	if got := c.String(); got != "abcde\n[... 16 bytes omitted ...]\nvwxyz" {
		t.Errorf("capture = %q", got)
	}
	small := newCapture(10)
	small.Write([]byte("short"))
	if small.String() != "short" {
		t.Errorf("small capture = %q", small.String())
	}
	// A cut through a multi-byte character drops the partial character.
	u := newCapture(8)
	u.Write([]byte("aé€€€€€zzzzz"))
	if got := u.String(); !strings.HasPrefix(got, "aé\n[...") || !strings.HasSuffix(got, "zzzz") || !strings.Contains(got, "omitted") {
		t.Errorf("utf-8 capture = %q", got)
	}
}

func TestBashTimeoutArgument(t *testing.T) {
	t.Parallel()
	tool := bashTool{}
	if d, ok := tool.timeoutFor([]byte(`{"command": "x", "timeout_ms": 1500}`)); !ok || d != 1500*time.Millisecond {
		t.Errorf("timeoutFor = %v %v", d, ok)
	}
	if _, ok := tool.timeoutFor([]byte(`{"command": "x"}`)); ok {
		t.Error("timeoutFor without timeout_ms")
	}
}

func TestBashBackgroundProcessKeepsRunning(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	out := run(t, env, "Bash", `{"command": "sleep 30 & echo bg=$!"}`)
	m := regexp.MustCompile(`bg=(\d+)`).FindStringSubmatch(out.Output)
	if m == nil {
		t.Fatalf("no pid in %+v", out)
	}
	pid, _ := strconv.Atoi(m[1])
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if !out.Success || !strings.Contains(out.Output, "background processes") || !strings.Contains(out.Output, "left running") {
		t.Errorf("outcome %+v", out)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("the background process was killed after a normal exit: %v", err)
	}
}

func TestBashConfiguredTimeout(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	p := NewPipeline(PipelineConfig{Env: env, Timeouts: map[string]time.Duration{"Bash": 200 * time.Millisecond}})
	out := p.Run(context.Background(), Call{Name: "Bash", Args: `{"command": "sleep 30"}`}, Auto)
	if !out.TimedOut || !strings.Contains(out.Output, "timed out after 200ms") {
		t.Errorf("%+v", out)
	}
}

// TestBashExitCodeSurvivesTheReaperRace runs many failing commands at once
// through the reaper: bash's own exit code must come back every time,
// however the end of the reaper and its report of bash's status are
// ordered, never the reaper's own success.
func TestBashExitCodeSurvivesTheReaperRace(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	const runs = 48
	errs := make(chan string, runs)
	for i := range runs {
		go func() {
			out := run(t, env, "Bash", fmt.Sprintf(`{"command": "exit %d"}`, 1+i%100))
			if out.Success || out.ExitCode == nil || *out.ExitCode != 1+i%100 {
				errs <- fmt.Sprintf("run %d: success %v, exit code %v, want %d", i, out.Success, derefCode(out.ExitCode), 1+i%100)
				return
			}
			errs <- ""
		}()
	}
	for range runs {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}

func derefCode(c *int) any {
	if c == nil {
		return nil
	}
	return *c
}
