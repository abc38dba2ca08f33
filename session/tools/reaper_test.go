package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// playInferEnv, when set, makes the test binary play infer: it runs one
// approved (unconfined) Bash command in the folder named by playDirEnv,
// says "ran" once the command has returned (or "running" at once, for
// mode "during"), and waits to be killed.
const (
	playInferEnv = "INFER_TOOLS_TEST_PLAY_INFER"
	playDirEnv   = "INFER_TOOLS_TEST_PLAY_DIR"
)

// treeCommand leaves one child in bash's process group and one in a session
// of its own, and writes their pids to "pids".
const treeCommand = `sleep 1000 & echo $! >> pids; setsid sleep 1000 & echo $! >> pids`

func playInfer(mode string) {
	env := &Env{Root: os.Getenv(playDirEnv)}
	command := treeCommand
	if mode == "during" {
		command += "; wait"
		fmt.Println("running")
	}
	raw, _ := json.Marshal(bashArgs{Command: command})
	out, err := bashTool{}.runConfined(context.Background(), env, raw, unconfined)
	if mode != "during" {
		fmt.Printf("ran: %v %q\n", err, out.Text)
	}
	select {}
}

// TestApprovedCommandTreeEndsWithInfer kills -9 a process playing infer
// after it ran an approved command that left children behind (one of them
// in a session of its own), and while such a command still runs: every one
// of them ends.
func TestApprovedCommandTreeEndsWithInfer(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the reaper needs Linux")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"after", "during"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(self)
			cmd.Env = append(os.Environ(), playInferEnv+"="+mode, playDirEnv+"="+dir)
			cmd.Stderr = os.Stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Wait()
			defer cmd.Process.Kill()
			var pids []int
			// Bounded waits below are hang guards, not speed checks.
			if !eventually(func() bool {
				pids = readPids(filepath.Join(dir, "pids"))
				return len(pids) == 2
			}) {
				t.Fatalf("the command did not start its children (pids %v)", pids)
			}
			for _, pid := range pids {
				pid := pid
				t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
			}
			if mode == "after" {
				line := make([]byte, 256)
				n, _ := stdout.Read(line)
				if !strings.HasPrefix(string(line[:n]), "ran: <nil>") || !strings.Contains(string(line[:n]), "left running") {
					t.Fatalf("the command did not return: %q", line[:n])
				}
			}
			for _, pid := range pids {
				if !alive(pid) {
					t.Fatalf("child %d is gone while infer runs", pid)
				}
			}
			cmd.Process.Signal(syscall.SIGKILL)
			for _, pid := range pids {
				if !eventually(func() bool { return !alive(pid) }) {
					t.Errorf("child %d outlived infer's kill -9", pid)
				}
			}
		})
	}
}

// eventually polls cond until it holds, up to a generous bound.
func eventually(cond func() bool) bool {
	for range 1500 {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

func readPids(path string) []int {
	b, _ := os.ReadFile(path)
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z'
}

// TestStoppedApprovedCommandEndsItsWholeTree times out an approved command
// that started a process in a session of its own: stopping the command's
// process group ends that one too.
func TestStoppedApprovedCommandEndsItsWholeTree(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the reaper needs Linux")
	}
	env := newEnv(t)
	raw, _ := json.Marshal(bashArgs{Command: "setsid sleep 1000 & echo $! > pid; sleep 30", TimeoutMS: 300})
	out, err := bashTool{}.runConfined(context.Background(), env, raw, unconfined)
	if err != nil || !out.TimedOut {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	pids := readPids(filepath.Join(env.Root, "pid"))
	if len(pids) != 1 {
		t.Fatalf("pids %v", pids)
	}
	t.Cleanup(func() { syscall.Kill(pids[0], syscall.SIGKILL) })
	if !eventually(func() bool { return !alive(pids[0]) }) {
		t.Errorf("the command's detached child %d outlived the stopped command", pids[0])
	}
}
