package main

// The soak: browser commands straight through the bridge's driver and
// agent turns with offline/demo tool calls, for a long time, against an
// extension with faults on. It checks that nothing accumulates: goroutines,
// heap and open files end where they started (within a tolerance for
// noise), and every message sent is in the store.
//
// `make test` runs it for 10 s, enough to see a leak per reconnect or per
// turn; `make soak` runs it until at least
// INFER_SOAK_COMMANDS commands and INFER_SOAK_TURNS turns are done and
// INFER_SOAK_DURATION has passed.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/sim"
)

// Soak tolerances: growth beyond these between the start and the end is
// a leak, not noise.
const (
	soakGoroutineSlack = 10
	soakFDSlack        = 5
	soakHeapSlack      = 32 << 20
)

// soakSettings are read from the environment.
type soakSettings struct {
	duration        time.Duration
	commands, turns int64
}

func readSoakSettings(t *testing.T) soakSettings {
	t.Helper()
	s := soakSettings{duration: 10 * time.Second}
	if v := os.Getenv("INFER_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("INFER_SOAK_DURATION=%q: use a duration such as 60s or 10m", v)
		}
		s.duration = d
	}
	for name, dst := range map[string]*int64{"INFER_SOAK_COMMANDS": &s.commands, "INFER_SOAK_TURNS": &s.turns} {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				t.Fatalf("%s=%q: use a whole number", name, v)
			}
			*dst = n
		}
	}
	return s
}

// soakFigures is one measurement of what could leak.
type soakFigures struct {
	goroutines int
	heap       uint64 // live heap after a collection
	files      int
}

func measureSoak(t *testing.T) soakFigures {
	t.Helper()
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("counting open files: %v", err)
	}
	return soakFigures{goroutines: runtime.NumGoroutine(), heap: ms.HeapAlloc, files: len(fds)}
}

func (f soakFigures) String() string {
	return fmt.Sprintf("%d goroutines, %.1f MiB heap, %d open files", f.goroutines, float64(f.heap)/(1<<20), f.files)
}

// TestSoak is the long run; see the file comment.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak runs for ten seconds or more")
	}
	needSandbox(t)
	set := readSoakSettings(t)
	br := &faultDroppingBrowser{every: 2000}
	faults := &sim.Faults{DropResults: 0.002, DuplicateResults: 0.01, Malformed: 0.01, Seed: uint64(time.Now().UnixNano())}
	t.Logf("soak: at least %v, %d commands, %d turns; faults: %s, a disconnect every %d commands", set.duration, set.commands, set.turns, faults, br.every)
	rg := startFaultRig(t, "", "", faultRigOptions{Browser: br, Faults: faults, CommandTimeout: time.Second, QuietLog: true})
	br.client = rg.client
	rg.setMode("auto")
	rg.frames.Close() // nobody reads the panel's frames here; they would pile up
	watch := rg.watch(t)

	var commands, turns, resyncs atomic.Int64
	var outcomes faultDriverOutcomes
	sent := map[string]bool{}
	actions := []browser.Command{
		{Action: browser.Navigate, URL: "https://example.com/"}, {Action: browser.Read}, {Action: browser.Tabs},
		{Action: browser.Screenshot}, {Action: browser.Click, Selector: "a"}, {Action: browser.Type, Selector: "input", Text: "x"},
	}
	command := func(i int) {
		start := time.Now()
		_, err := rg.app.Seat.Server().Do(context.Background(), actions[i%len(actions)])
		outcomes.add(err, time.Since(start))
		commands.Add(1)
		if errors.Is(err, browser.ErrNotConnected) {
			ctx, cancel := context.WithTimeout(context.Background(), faultGuard)
			rg.client.WaitConnected(ctx)
			cancel()
		}
	}
	turn := func(n int) error {
		msg := fmt.Sprintf("read #soak-%d; tabs", n)
		switch {
		case n%25 == 0:
			msg = fmt.Sprintf("run echo soak-%d", n)
		case n%10 == 0:
			msg = fmt.Sprintf("read #soak-%d; screenshot", n)
		}
		if n > 0 && n%50 == 0 {
			rg.app.Workspace.NewSession()
		}
		if err := rg.app.Workspace.Send(msg, tools.OriginTerminal); err != nil {
			return fmt.Errorf("turn %d: %w", n, err)
		}
		sent[msg] = true
		ctx, cancel := context.WithTimeout(context.Background(), faultGuard)
		defer cancel()
		run, err := watch.next(ctx)
		if errors.Is(err, errResync) {
			// The watcher fell behind and the workspace dropped its
			// backlog (as it would for a stalled front end): wait for
			// the turn to end instead of counting its events.
			resyncs.Add(1)
			for rg.app.Workspace.Busy() && ctx.Err() == nil {
				time.Sleep(5 * time.Millisecond)
			}
			err = ctx.Err()
		} else if err == nil && !run.finished() {
			err = fmt.Errorf("ended with %v: %s", run.terminal.Type(), run.errorMessage())
		}
		if err != nil {
			return fmt.Errorf("turn %d: %w", n, err)
		}
		turns.Add(1)
		return nil
	}

	// Warm up, so that what is built once (pools, caches, the first
	// conversation) is in the starting figures.
	for i := 0; i < 200; i++ {
		command(i)
	}
	for i := 0; i < 5; i++ {
		if err := turn(i); err != nil {
			t.Fatal(err)
		}
	}
	faultSettles(t, "turns running after the warm-up", 0, func() int { return soakBool(rg.app.Workspace.Busy()) })
	start := measureSoak(t)
	t.Logf("start: %s", start)
	commands.Store(0)
	turns.Store(0)
	outcomes.mu.Lock()
	outcomes.ok, outcomes.timeout, outcomes.disconnected, outcomes.notConnected, outcomes.slowest = 0, 0, 0, 0, 0
	outcomes.mu.Unlock()

	// Both loads run until the duration has passed and both minimums are
	// met, so that commands and turns keep overlapping to the end.
	began := time.Now()
	finished := func() bool {
		return time.Since(began) >= set.duration && commands.Load() >= set.commands && turns.Load() >= set.turns
	}
	var wg sync.WaitGroup
	var stopped atomic.Bool // a failed turn stops the command workers too
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; !finished() && !stopped.Load(); i++ {
				command(i)
			}
		}()
	}
	progress := time.NewTicker(10 * time.Second)
	defer progress.Stop()
	var turnErr error
	for n := 5; !finished(); n++ {
		if turnErr = turn(n); turnErr != nil {
			stopped.Store(true)
			break
		}
		select {
		case <-progress.C:
			t.Logf("%v: %d commands, %d turns", time.Since(began).Round(time.Second), commands.Load(), turns.Load())
		default:
		}
	}
	wg.Wait()
	br.drops.Wait()
	elapsed := time.Since(began)
	if turnErr != nil {
		t.Fatal(turnErr)
	}
	faultSettles(t, "turns running at the end", 0, func() int { return soakBool(rg.app.Workspace.Busy()) })
	ctx, cancel := context.WithTimeout(context.Background(), faultGuard)
	defer cancel()
	if err := rg.client.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}

	// Goroutines and sockets wind down asynchronously (closing
	// connections wait for their peer); give them the guard to do so.
	var end soakFigures
	deadline := time.Now().Add(faultGuard)
	for {
		end = measureSoak(t)
		if (end.goroutines <= start.goroutines+soakGoroutineSlack && end.files <= start.files+soakFDSlack) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	o := &outcomes
	t.Logf("end after %v: %s", elapsed.Round(time.Second), end)
	t.Logf("%d browser commands (%.0f/s): %d answered, %d timed out, %d disconnected, %d while reconnecting; slowest %v",
		commands.Load(), float64(commands.Load())/elapsed.Seconds(), o.ok, o.timeout, o.disconnected, o.notConnected, o.slowest)
	t.Logf("%d agent turns (%.1f/s), %d watched through a resync", turns.Load(), float64(turns.Load())/elapsed.Seconds(), resyncs.Load())

	if len(o.other) > 0 {
		t.Errorf("driver calls failed unexpectedly: %q", o.other[:min(5, len(o.other))])
	}
	if end.goroutines > start.goroutines+soakGoroutineSlack {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines grew from %d to %d\n%s", start.goroutines, end.goroutines, buf[:runtime.Stack(buf, true)])
	}
	if end.files > start.files+soakFDSlack {
		t.Errorf("open files grew from %d to %d", start.files, end.files)
	}
	if end.heap > start.heap+soakHeapSlack {
		t.Errorf("the heap grew from %.1f to %.1f MiB", float64(start.heap)/(1<<20), float64(end.heap)/(1<<20))
	}

	// Every message sent is in the store, once.
	st, err := store.Open(config.ConversationsDir(rg.home, rg.project), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	metas, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]int{}
	for _, m := range metas {
		c, err := st.Load(m.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range c.Messages {
			if msg.Role == "user" {
				stored[msg.Content]++
			}
		}
	}
	for msg := range sent {
		if stored[msg] != 1 {
			t.Errorf("%q is stored %d times", msg, stored[msg])
		}
	}
	t.Logf("%d messages sent, all stored, in %d conversations", len(sent), len(metas))
}

func soakBool(b bool) int {
	if b {
		return 1
	}
	return 0
}
