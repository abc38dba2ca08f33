package perf

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/sim"
)

// readyLine is the line `infer serve` prints once its bridge listens.
var readyLine = regexp.MustCompile(`ws://127\.0\.0\.1:\d+/ws`)

// lineWatch is a child's stdout that notes when a line matching want
// first arrives; exec's copying goroutine calls Write as soon as the
// child writes.
type lineWatch struct {
	want    *regexp.Regexp
	pending []byte
	found   chan struct{}
	at      time.Time
	match   string
}

func (w *lineWatch) Write(p []byte) (int, error) {
	if w.match != "" {
		return len(p), nil
	}
	w.pending = append(w.pending, p...)
	for {
		i := bytes.IndexByte(w.pending, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := string(w.pending[:i])
		w.pending = w.pending[i+1:]
		if m := w.want.FindString(line); m != "" {
			w.at, w.match, w.pending = time.Now(), m, nil
			close(w.found)
			return len(p), nil
		}
	}
}

// started is a child process timed to its first matching line.
type started struct {
	cmd    *exec.Cmd
	took   time.Duration // from exec to the line
	match  string
	exited chan struct{}
	err    error // Wait's, once exited is closed
}

// timeToLine starts bin and times it until it writes a line matching want
// to stdout. The caller ends the process (end, or waitExit).
func timeToLine(tb testing.TB, env []string, dir, bin string, want *regexp.Regexp, args ...string) *started {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir = env, dir
	stderr := newLineLog()
	watch := &lineWatch{want: want, found: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = watch, stderr
	s := &started{cmd: cmd, exited: make(chan struct{})}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatalf("starting %s: %v", bin, err)
	}
	go func() { s.err = cmd.Wait(); close(s.exited) }()
	tb.Cleanup(func() {
		cmd.Process.Kill() // no-op once it has exited
		<-s.exited
	})
	select {
	case <-watch.found:
		s.took, s.match = watch.at.Sub(began), watch.match
		return s
	case <-s.exited:
		tb.Fatalf("%s ended (%v) without printing %q; stderr:\n%s", bin, s.err, want, stderr)
	case <-time.After(guard):
		tb.Fatalf("%s printed no %q within %s; stderr:\n%s", bin, want, guard, stderr)
	}
	return nil
}

// end asks the process to stop with SIGTERM and waits for it.
func (s *started) end(tb testing.TB) {
	tb.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.waitExit(tb)
}

// waitExit waits for the process to exit by itself.
func (s *started) waitExit(tb testing.TB) error {
	tb.Helper()
	select {
	case <-s.exited:
		return s.err
	case <-time.After(guard):
		s.cmd.Process.Kill()
		<-s.exited
		tb.Fatalf("%s did not exit within %s", s.cmd.Path, guard)
		return nil
	}
}

var helloLine = regexp.MustCompile(`^hello$`)

// startsPerIteration is how many starts of each program one iteration of
// BenchmarkStartup times, so that `-benchtime 1x` (what make bench uses
// for this package) still averages several.
const startsPerIteration = 10

// BenchmarkStartup compares `infer serve --port 0`, from exec to the line
// saying its bridge listens, with a hello-world Go program from exec to
// its one line: the floor of starting any Go binary here. The two take
// turns going first. It reports each one's mean time per start and their
// ratio (no target: reported so regressions show).
func BenchmarkStartup(b *testing.B) {
	bins := programs(b)
	sb := newSandbox(b, "")
	project := b.TempDir()
	serveOnce := func() time.Duration {
		p := timeToLine(b, sb.env, project, bins.infer, readyLine, "serve", "--port", "0")
		p.end(b)
		return p.took
	}
	helloOnce := func() time.Duration {
		p := timeToLine(b, sb.env, project, bins.hello, helloLine)
		if err := p.waitExit(b); err != nil {
			b.Fatalf("hello-world: %v", err)
		}
		return p.took
	}
	serveOnce() // the first start pays for a cold page cache
	helloOnce()
	var serve, hello time.Duration
	b.ResetTimer()
	for i := 0; i < b.N*startsPerIteration; i++ {
		if i%2 == 0 {
			serve += serveOnce()
			hello += helloOnce()
		} else {
			hello += helloOnce()
			serve += serveOnce()
		}
	}
	b.StopTimer()
	n := float64(b.N * startsPerIteration)
	b.ReportMetric(float64(serve.Nanoseconds())/n, "serve-ns/start")
	b.ReportMetric(float64(hello.Nanoseconds())/n, "hello-ns/start")
	b.ReportMetric(float64(serve)/float64(hello), "startup-ratio")
}

// longMessages is the size of the conversation BenchmarkServeRSS opens.
const longMessages = 10_000

// storeLongConversation writes a conversation of n messages into the
// project's store, made of browsing turns (a question, a BrowserRead call,
// the page's text, an answer) with each call's outcome recorded, and
// returns its id.
func storeLongConversation(tb testing.TB, home, project string, n int) string {
	tb.Helper()
	s, err := store.Open(config.ConversationsDir(home, project), store.Options{NoSync: true, Warn: func(err error) { tb.Fatal(err) }})
	if err != nil {
		tb.Fatal(err)
	}
	meta, err := s.Create()
	if err != nil {
		tb.Fatal(err)
	}
	for i := 0; i*4 < n; i++ {
		call := fmt.Sprintf("call_%05d", i)
		page := strings.Repeat(fmt.Sprintf("Row %d: \"Quarterly figures\" rose 4%% while costs <stayed flat>.\n\tNote %d.\n", i, i%9), 8)
		// As a turn saves them: the question and the call, the page with
		// the call's outcome, the answer.
		if err := s.Append(meta.ID,
			store.Message{Role: "user", Content: fmt.Sprintf("What does row %d of the report say?", i)},
			store.Message{Role: "assistant", ToolCalls: []store.ToolCall{{ID: call, Type: "function", Function: store.FunctionCall{Name: "BrowserRead", Arguments: fmt.Sprintf(`{"selector":"#row-%d"}`, i)}}}},
		); err != nil {
			tb.Fatal(err)
		}
		if err := s.AppendToolResult(meta.ID, store.Message{Role: "tool", ToolCallID: call, Content: page}, true); err != nil {
			tb.Fatal(err)
		}
		if err := s.Append(meta.ID, store.Message{Role: "assistant", Content: fmt.Sprintf("Row %d says the figures rose four percent and costs stayed flat.", i)}); err != nil {
			tb.Fatal(err)
		}
	}
	return meta.ID
}

// BenchmarkServeRSS starts `infer serve`, connects a simulated extension,
// reads the process's resident set (idle-rss-MiB), resumes a stored
// conversation of longMessages messages through the bridge, and reads it
// again (rss-MiB) with its high-water mark (peak-rss-MiB). No target: the
// figure is reported so growth shows.
func BenchmarkServeRSS(b *testing.B) {
	bins := programs(b)
	sb := newSandbox(b, "")
	project := b.TempDir()
	id := storeLongConversation(b, sb.home, project, longMessages)
	var idle, open, peak int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := timeToLine(b, sb.env, project, bins.infer, readyLine, "serve", "--port", "0")
		url, pid := p.match, p.cmd.Process.Pid
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		client := sim.NewClient(sim.ClientOptions{URL: url, Token: sb.token, Browser: &sim.Minimal{}})
		ran := make(chan struct{})
		go func() { defer close(ran); client.Run(ctx) }()
		if err := client.WaitConnected(ctx); err != nil {
			b.Fatalf("the simulated extension did not connect: %v", err)
		}
		before := rssOf(b, pid, "VmRSS")
		snap, err := client.Resume(ctx, id)
		if err != nil || len(snap.Messages) != longMessages {
			b.Fatalf("resume: %d messages, %v", len(snap.Messages), err)
		}
		after, hwm := rssOf(b, pid, "VmRSS"), rssOf(b, pid, "VmHWM")
		cancel()
		<-ran
		p.end(b)
		idle, open, peak = idle+before, open+after, max(peak, hwm)
	}
	b.StopTimer()
	n := int64(b.N)
	b.ReportMetric(mib(idle/n), "idle-rss-MiB")
	b.ReportMetric(mib(open/n), "rss-MiB")
	b.ReportMetric(mib(peak), "peak-rss-MiB")
}

func rssOf(tb testing.TB, pid int, field string) int64 {
	tb.Helper()
	v, err := procStatus(pid, field)
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// TestServeHarness checks the pieces the serve benchmarks rely on: the
// ready line is found, the stored conversation resumes whole through the
// bridge, and /proc gives a resident set.
func TestServeHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the infer binary")
	}
	bins := programs(t)
	sb := newSandbox(t, "")
	project := t.TempDir()
	id := storeLongConversation(t, sb.home, project, 40)
	p := timeToLine(t, sb.env, project, bins.infer, readyLine, "serve", "--port", "0")
	defer p.end(t)
	url := p.match
	if p.took <= 0 || !readyLine.MatchString(url) {
		t.Fatalf("ready after %v at %q", p.took, url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	client := sim.NewClient(sim.ClientOptions{URL: url, Token: sb.token, Browser: &sim.Minimal{}})
	ran := make(chan struct{})
	go func() { defer close(ran); client.Run(ctx) }()
	defer func() { cancel(); <-ran }()
	if err := client.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err := client.Resume(ctx, id)
	if err != nil || len(snap.Messages) != 40 || snap.Messages[2].Role != "tool" || !snap.ToolResults["call_00000"] {
		t.Fatalf("resume: %+v %v", snap, err)
	}
	if rss := rssOf(t, p.cmd.Process.Pid, "VmRSS"); rss < 1<<20 {
		t.Fatalf("VmRSS %d bytes", rss)
	}
	hello := timeToLine(t, sb.env, project, bins.hello, helloLine)
	if err := hello.waitExit(t); err != nil || hello.took <= 0 {
		t.Fatalf("hello-world: %v after %v", err, hello.took)
	}
}
