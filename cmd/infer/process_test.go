package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/sim"
)

// process is a real `infer serve` child process.
type process struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{}
}

var listenLine = regexp.MustCompile(`ws://127\.0\.0\.1:\d+/ws`)

func startServe(t *testing.T, home, project string) *process {
	t.Helper()
	cmd := exec.Command(inferBinary(t), "serve", "--port", "0")
	cmd.Dir = project
	cmd.Env = append(os.Environ(), "INFER_HOME="+home)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.kill() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listenLine.FindString(sc.Text()); m != "" {
				lines <- m
			}
		}
	}()
	select {
	case p.url = <-lines:
	case <-time.After(20 * time.Second):
		t.Fatal("infer serve printed no listening line")
	}
	return p
}

func (p *process) kill() {
	p.cmd.Process.Kill()
	<-p.done
}

func initHome(t *testing.T) (home, token string) {
	t.Helper()
	home = t.TempDir()
	bu := config.NewBrowserUse(config.DefaultPort)
	if err := config.CreateBrowserUse(config.BrowserUsePath(home), bu); err != nil {
		t.Fatal(err)
	}
	return home, bu.Extension.Token
}

func connect(t *testing.T, url, token string) (*sim.Client, *sim.Subscription) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := sim.NewClient(sim.ClientOptions{URL: url, Token: token, Browser: &sim.Minimal{}, MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	sub := c.Subscribe()
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; sub.Close() })
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := c.WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}
	return c, sub
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestKilledProcessLeavesATornLineThatRecovers kills infer serve with
// SIGKILL in the middle of a streaming turn, tears the conversation's last
// line the way a kill during a write would, and checks that a restarted
// infer lists and resumes the conversation and keeps appending to it.
func TestKilledProcessLeavesATornLineThatRecovers(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the infer binary")
	}
	home, token := initHome(t)
	project := t.TempDir()
	p := startServe(t, home, project)
	c, sub := connect(t, p.url, token)
	c.SendUserMessage(testCtx(t), "stream 100000")
	if _, err := sim.WaitFor[wire.ChatEvent](testCtx(t), sub, func(f wire.ChatEvent) bool { return strings.Contains(string(f.Event), "TEXT_MESSAGE_CONTENT") }); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done

	dir := config.ConversationsDir(home, project)
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("conversation files: %v", files)
	}
	f, err := os.OpenFile(files[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"kind":"message","at":"2026-11-30T00:00:00Z","message":{"role":"assistant","content":"1 2 3 4 5 6 7`)
	f.Close()

	q := startServe(t, home, project)
	c2, _ := connect(t, q.url, token)
	list, err := c2.ListConversations(testCtx(t))
	if err != nil || len(list.Conversations) != 1 {
		t.Fatalf("after restart: %+v %v", list, err)
	}
	snap, err := c2.Resume(testCtx(t), list.Conversations[0].ID)
	if err != nil || len(snap.Messages) != 1 || snap.Messages[0].Content != "stream 100000" {
		t.Fatalf("resume after the kill: %+v %v", snap, err)
	}
	c2.SendUserMessage(testCtx(t), "tabs")
	again, err := c2.ListConversations(testCtx(t))
	deadline := time.Now().Add(10 * time.Second)
	for err == nil && again.Conversations[0].MessageCount < 5 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		again, err = c2.ListConversations(testCtx(t))
	}
	st, _ := store.Open(dir, store.Options{})
	conv, err := st.Load(list.Conversations[0].ID)
	if err != nil || len(conv.Messages) < 3 || conv.Messages[1].Content != "tabs" {
		t.Fatalf("append after repair: %+v %v", conv.Messages, err)
	}
}

// TestTwoProcessesWriteTheSameProject runs two infer serve processes on one
// project. Both resume the same conversation, but only its holder (A, which
// started it) takes turns in it: B's messages, sent while A works, go to a
// new conversation instead of interleaving with A's turns. Both write the
// shared history, and nothing is lost or corrupted.
func TestTwoProcessesWriteTheSameProject(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the infer binary")
	}
	home, token := initHome(t)
	project := t.TempDir()
	a := startServe(t, home, project)
	b := startServe(t, home, project)
	ca, sa := connect(t, a.url, token)
	cb, sb := connect(t, b.url, token)

	ca.SendUserMessage(testCtx(t), "first from A")
	waitRun(t, sa)
	list, _ := cb.ListConversations(testCtx(t))
	if len(list.Conversations) != 1 {
		t.Fatalf("B sees %+v", list)
	}
	id := list.Conversations[0].ID
	if _, err := cb.Resume(testCtx(t), id); err != nil {
		t.Fatal(err)
	}
	const rounds = 10
	var wg sync.WaitGroup
	for _, side := range []struct {
		c    *sim.Client
		s    *sim.Subscription
		name string
	}{{ca, sa, "A"}, {cb, sb, "B"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				side.c.SendUserMessage(testCtx(t), side.name+" says tabs")
				waitRun(t, side.s)
			}
		}()
	}
	wg.Wait()

	st, err := store.Open(config.ConversationsDir(home, project), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	conv, err := st.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if conv.SkippedLines != 0 {
		t.Fatalf("%d unreadable lines", conv.SkippedLines)
	}
	counts := map[string]int{}
	for _, m := range conv.Messages {
		if m.Role == "user" {
			counts[m.Content]++
		}
	}
	if counts["A says tabs"] != rounds || counts["B says tabs"] != 0 || counts["first from A"] != 1 {
		t.Fatalf("user messages: %v", counts)
	}
	list, err = cb.ListConversations(testCtx(t))
	if err != nil || len(list.Conversations) != 2 {
		t.Fatalf("after both: %+v, %v", list, err)
	}
	other := list.Conversations[0].ID
	if other == id {
		other = list.Conversations[1].ID
	}
	moved, err := st.Load(other)
	if err != nil {
		t.Fatal(err)
	}
	users := 0
	for _, m := range moved.Messages {
		if m.Role == "user" && m.Content == "B says tabs" {
			users++
		}
	}
	if users != rounds || moved.SkippedLines != 0 {
		t.Fatalf("B's conversation has %d of its %d messages, %d unreadable lines", users, rounds, moved.SkippedLines)
	}
	hist, _ := store.OpenHistory(filepath.Join(config.ProjectDir(home, project), "history.jsonl"))
	defer hist.Close()
	h := strings.Join(hist.List(), "|")
	if !strings.Contains(h, "A says tabs") || !strings.Contains(h, "B says tabs") {
		t.Fatalf("shared history: %q", h)
	}
}

func waitRun(t *testing.T, s *sim.Subscription) {
	t.Helper()
	if _, err := sim.WaitFor[wire.ChatEvent](testCtx(t), s, func(f wire.ChatEvent) bool {
		e := string(f.Event)
		return strings.Contains(e, `"RUN_FINISHED"`) || strings.Contains(e, `"RUN_ERROR"`)
	}); err != nil {
		t.Fatal(err)
	}
}
