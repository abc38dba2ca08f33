package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestHoldExcludesAnotherStore holds a conversation through one store and
// opens it through another in the same process: flock locks belong to open
// file descriptions, so the second store is refused exactly as a second
// process would be, and told who holds it.
func TestHoldExcludesAnotherStore(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no flock(2): holding always succeeds")
	}
	dir := t.TempDir()
	a, _ := openTest(t, dir)
	b, _ := openTest(t, dir)
	id := mustCreate(t, a)

	h1, err := a.Hold(id)
	if err != nil {
		t.Fatal(err)
	}
	// Holds of one store nest.
	h2, err := a.Hold(id)
	if err != nil {
		t.Fatalf("second hold by the same store: %v", err)
	}
	_, err = b.Hold(id)
	var held *HeldError
	if !errors.As(err, &held) || !errors.Is(err, ErrHeld) {
		t.Fatalf("Hold by another store = %v, want a *HeldError", err)
	}
	host, _ := os.Hostname()
	if h := held.Holder; h.PID != os.Getpid() || h.Host != host || h.Since.IsZero() || !strings.HasPrefix(h.Command, filepath.Base(os.Args[0])) {
		t.Fatalf("holder %+v", h)
	}
	want := fmt.Sprintf("conversation %s is open in %s (pid %d)", id, held.Holder.Command, os.Getpid())
	if err.Error() != want {
		t.Fatalf("message %q\nwant %q", err, want)
	}
	// A conversation open elsewhere is not deleted under its holder.
	if err := b.Delete(id); !errors.Is(err, ErrHeld) {
		t.Fatalf("Delete of a held conversation = %v", err)
	}
	mustLoad(t, b, id) // reading is always allowed

	h1.Release()
	h1.Release() // a second release of one hold changes nothing
	if _, err := b.Hold(id); !errors.Is(err, ErrHeld) {
		t.Fatalf("released one of two holds, yet another store got it: %v", err)
	}
	h2.Release()
	if _, err := os.Stat(a.lockPath(id)); !os.IsNotExist(err) {
		t.Fatalf("lock file left after the last release: %v", err)
	}
	h3, err := b.Hold(id)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	if _, err := a.Hold(id); !errors.Is(err, ErrHeld) {
		t.Fatalf("the first store got a conversation the second holds: %v", err)
	}
	h3.Release()
	if err := b.Delete(id); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("left after delete: %v", entries)
	}
}

func TestHoldUnknownAndMemory(t *testing.T) {
	s, _ := openTest(t, t.TempDir())
	for _, id := range []string{"", "../x", "00000000-0000-4000-8000-000000000000"} {
		if _, err := s.Hold(id); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Hold(%q) = %v, want ErrNotFound", id, err)
		}
	}
	m := OpenMemory()
	meta, err := m.Create()
	if err != nil {
		t.Fatal(err)
	}
	h, err := m.Hold(meta.ID)
	if err != nil {
		t.Fatal(err)
	}
	h.Release()
	var none *Hold
	none.Release()
}

func TestHeldErrorWhere(t *testing.T) {
	for _, c := range []struct {
		h    Holder
		want string
	}{
		{Holder{}, "another infer process"},
		{Holder{PID: 7}, "infer (pid 7)"},
		{Holder{PID: 7, Command: "infer serve"}, "infer serve (pid 7)"},
		{Holder{PID: 7, Command: "infer", Host: "elsewhere.invalid"}, "infer (pid 7 on elsewhere.invalid)"},
	} {
		if got := (&HeldError{Holder: c.h}).Where(); got != c.want {
			t.Errorf("Where(%+v) = %q, want %q", c.h, got, c.want)
		}
	}
	for args, want := range map[string]string{
		"/usr/bin/infer serve":              "infer serve",
		"/usr/bin/infer headless fix it":    "infer headless",
		"infer":                             "infer",
		"infer --model x":                   "infer",
		"infer Secret-Prompt":               "infer",
		"infer averyveryverylongwordindeed": "infer",
	} {
		if got := commandName(strings.Fields(args)); got != want {
			t.Errorf("commandName(%q) = %q, want %q", args, got, want)
		}
	}
}

// The child side of TestHoldEndsWithItsProcess: it holds the conversation,
// says so, and waits to be killed.
const (
	holdChildDirEnv = "INFER_STORE_TEST_HOLD_DIR"
	holdChildIDEnv  = "INFER_STORE_TEST_HOLD_ID"
)

func TestChildProcessHolder(t *testing.T) {
	dir := os.Getenv(holdChildDirEnv)
	if dir == "" {
		t.Skip("runs only as the child of TestHoldEndsWithItsProcess")
	}
	s, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Hold(os.Getenv(holdChildIDEnv)); err != nil {
		t.Fatal(err)
	}
	fmt.Println("held")
	time.Sleep(time.Minute)
}

// TestHoldEndsWithItsProcess holds a conversation in a child process, sees
// it named as the holder, kills it with SIGKILL (no chance to release), and
// then gets the conversation: a crash never strands one.
func TestHoldEndsWithItsProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no flock(2): holding always succeeds")
	}
	dir := t.TempDir()
	s, _ := openTest(t, dir)
	id := mustCreate(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestChildProcessHolder$", "-test.count=1")
	cmd.Env = append(os.Environ(), holdChildDirEnv+"="+dir, holdChildIDEnv+"="+id)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "held" {
	}
	if sc.Text() != "held" {
		t.Fatalf("the child did not hold the conversation: %v", sc.Err())
	}

	_, err = s.Hold(id)
	var held *HeldError
	if !errors.As(err, &held) || held.Holder.PID != cmd.Process.Pid {
		t.Fatalf("Hold while the child holds = %v (holder %+v), want the child, pid %d", err, held, cmd.Process.Pid)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("(pid %d)", cmd.Process.Pid)) {
		t.Fatalf("message %q does not name the child", err)
	}

	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no chance to release
		t.Fatal(err)
	}
	cmd.Wait()
	h, err := s.Hold(id)
	if err != nil {
		t.Fatalf("Hold after the holder died: %v", err)
	}
	h.Release()
}
