package perf

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/sim"
)

// loopCalls is how many consecutive browser tool calls one loop run makes.
const loopCalls = 200

// loopConfig is config.yaml for a run against the scripted model: the
// model by default, no discovery (the script answers chat only), and
// room for every call in one turn.
func loopConfig(serverURL string) string {
	return fmt.Sprintf(`model: scripted/loop
agent:
  max_steps: %d
providers:
  scripted:
    kind: openai-compatible
    base_url: %s/v1
    models: [loop]
    discover: false
`, loopCalls+10, serverURL)
}

// loopRun is what one `infer headless` run through the loop measured.
type loopRun struct {
	gaps    []time.Duration // per call, from the model's answer to the next request
	peakRSS int64           // bytes, the headless process's high-water mark
	// anonRSS and fileRSS split its resident set when the last request
	// arrived: memory it allocated, and pages of its binary.
	anonRSS, fileRSS int64
	cpu              time.Duration // user and system time of the whole process
}

// runToolLoop runs the real `infer headless` against the scripted model
// with the real infer-sim (its minimal browser) connected to its bridge,
// for calls consecutive BrowserRead calls.
func runToolLoop(tb testing.TB, bins binaries, calls int) loopRun {
	tb.Helper()
	model := newScriptedModel(calls, sim.MinimalPageText)
	srv := httptest.NewServer(model)
	defer srv.Close()
	sb := newSandbox(tb, loopConfig(srv.URL))
	project := tb.TempDir()
	port := strconv.Itoa(freePort(tb))
	final := fmt.Sprintf("Read the page %d times.", calls)

	hlEnv := append(slices.Clip(sb.env), profileVars(tb, "toolloop-headless")...)
	hl := start(tb, hlEnv, project, bins.infer, "headless", "--port", port, "--mode", "auto", "--model", "scripted/loop", "Please read the page, again and again.")
	model.watch(hl.cmd.Process.Pid)
	ext := start(tb, sb.env, project, bins.sim, "--browser", "minimal", "--port", port, "--token", sb.token)
	// headless cannot wait for an extension, so the script holds its
	// first answer until infer-sim is in.
	ext.stderr.waitFor(tb, "infer-sim's connection to infer headless", simConnected)
	close(model.release)
	if err := hl.wait(tb); err != nil {
		tb.Fatalf("infer headless: %v\nstderr:\n%s\nstdout:\n%s", err, hl.stderr, hl.stdout)
	}
	ext.stop(tb)
	if !strings.Contains(hl.stdout.String(), final) {
		tb.Fatalf("infer headless did not print the final answer %q:\n%s", final, hl.stdout)
	}
	gaps, err := model.gaps()
	if err != nil {
		tb.Fatal(err)
	}
	anon, file, err := model.memory()
	if err != nil {
		tb.Fatal(err)
	}
	return loopRun{
		gaps: gaps, peakRSS: hl.peakRSS(tb), anonRSS: anon, fileRSS: file,
		cpu: hl.cmd.ProcessState.UserTime() + hl.cmd.ProcessState.SystemTime(),
	}
}

// floorRSS is the peak RSS of `infer version`: what the binary costs
// before it does any work.
func floorRSS(tb testing.TB, bins binaries) int64 {
	tb.Helper()
	sb := newSandbox(tb, "")
	c := start(tb, sb.env, tb.TempDir(), bins.infer, "version")
	if err := c.wait(tb); err != nil {
		tb.Fatalf("infer version: %v\n%s", err, c.stderr)
	}
	return c.peakRSS(tb)
}

// rttProbe is the bare browser round trip the loop pays per call: a read
// sent through the bridge's driver, in this process, to another infer-sim
// process with the same minimal browser.
type rttProbe struct {
	srv *bridge.Server
}

func newRTTProbe(tb testing.TB, bins binaries) *rttProbe {
	tb.Helper()
	raw := make([]byte, 32)
	rand.Read(raw)
	token := hex.EncodeToString(raw)
	srv, err := bridge.Listen(bridge.Options{Token: token})
	if err != nil {
		tb.Fatal(err)
	}
	served := make(chan struct{})
	go func() { defer close(served); srv.Serve(context.Background()) }()
	tb.Cleanup(func() { srv.Close(); <-served })
	sb := newSandbox(tb, "")
	ext := start(tb, sb.env, tb.TempDir(), bins.sim, "--browser", "minimal", "--url", srv.URL(), "--token", token)
	ext.stderr.waitFor(tb, "infer-sim's connection to the probe's bridge", simConnected)
	p := &rttProbe{srv: srv}
	p.measure(tb, 20) // warm both ends up
	return p
}

// measure sends n reads one after another and returns their round trips.
func (p *rttProbe) measure(tb testing.TB, n int) []time.Duration {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	out := make([]time.Duration, n)
	for i := range out {
		began := time.Now()
		res, err := p.srv.Do(ctx, browser.Command{Action: browser.Read})
		out[i] = time.Since(began)
		if err != nil || res.Content != sim.MinimalPageText {
			tb.Fatalf("probe read: %+v %v", res, err)
		}
	}
	return out
}

// storeProbe is the store's share of one tool call, the cost the loop
// keeps on purpose for durability: the assistant message that asks for
// the call and the tool's message with its outcome, each appended and
// fsynced before the turn goes on, as headless saves them. It writes to
// the same file system as headless's home, in the same minutes as the
// loop, because an fsync's cost is the disk's and the moment's.
type storeProbe struct {
	s     *store.Store
	id    string
	calls int
}

func newStoreProbe(tb testing.TB) *storeProbe {
	tb.Helper()
	s, err := store.Open(tb.TempDir(), store.Options{Warn: func(err error) { tb.Error(err) }})
	if err != nil {
		tb.Fatal(err)
	}
	meta, err := s.Create()
	if err != nil {
		tb.Fatal(err)
	}
	p := &storeProbe{s: s, id: meta.ID}
	if err := s.Append(p.id, store.Message{Role: store.RoleUser, Content: "Please read the page, again and again."}); err != nil {
		tb.Fatal(err)
	}
	p.measure(tb, 10) // open the transcript and warm the page cache
	return p
}

// measure saves n tool calls one after another and returns their times.
func (p *storeProbe) measure(tb testing.TB, n int) []time.Duration {
	tb.Helper()
	out := make([]time.Duration, n)
	for i := range out {
		p.calls++
		call := fmt.Sprintf("call_%04d", p.calls)
		began := time.Now()
		err := p.s.Append(p.id, store.Message{Role: store.RoleAssistant, ToolCalls: []store.ToolCall{{ID: call, Type: "function", Function: store.FunctionCall{Name: "BrowserRead", Arguments: "{}"}}}})
		if err == nil {
			err = p.s.AppendToolResult(p.id, store.Message{Role: store.RoleTool, ToolCallID: call, Content: sim.MinimalPageText}, true)
		}
		out[i] = time.Since(began)
		if err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

// BenchmarkToolLoop runs the whole agent tool loop: the real `infer
// headless` asks a scripted OpenAI-compatible model (SSE over loopback),
// which asks for loopCalls consecutive BrowserRead calls, one per answer,
// that the real infer-sim answers through headless's bridge. One
// iteration is one such run.
//
// Per call it reports the loop's time from the end of the model's answer
// to the arrival of the next request (loop-ns/call, the median; the mean,
// and the medians of the first and last 20 calls, beside it), the bare
// bridge round trip to an infer-sim measured in the same iteration around
// the run (rtt-ns/call, the median), their difference (overhead-ns/call),
// the store's share of a call measured the same way around the run
// (store-ns/call, the median of storeProbe's calls), and the headless
// process's CPU time over the whole run divided by the calls
// (cpu-ns/call). For memory: the headless process's peak RSS
// (peak-rss-MiB), its anonymous and file-backed resident memory when the
// last request arrived, and the peak RSS of `infer version`
// (floor-rss-MiB), the binary's own cost, taken in the same iteration.
// perf/report judges the overhead less the store's share and the SDK's
// encoding, and the peak over its floor.
func BenchmarkToolLoop(b *testing.B) {
	bins := programs(b)
	probe := newRTTProbe(b, bins)
	saves := newStoreProbe(b)
	var gaps, first, last, rtts, stores []time.Duration
	var peak, anon, file, floor int64
	var cpu time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// The floors are taken half before and half after the run, so
		// they see the machine as the run did.
		b.StopTimer()
		floor = max(floor, floorRSS(b, bins))
		rtts = append(rtts, probe.measure(b, loopCalls/2)...)
		stores = append(stores, saves.measure(b, loopCalls/4)...)
		b.StartTimer()
		run := runToolLoop(b, bins, loopCalls)
		b.StopTimer()
		rtts = append(rtts, probe.measure(b, loopCalls/2)...)
		stores = append(stores, saves.measure(b, loopCalls/4)...)
		b.StartTimer()
		gaps = append(gaps, run.gaps...)
		first = append(first, run.gaps[:20]...)
		last = append(last, run.gaps[len(run.gaps)-20:]...)
		peak, anon, file = max(peak, run.peakRSS), max(anon, run.anonRSS), max(file, run.fileRSS)
		cpu += run.cpu
	}
	b.StopTimer()
	loop, rtt := median(gaps), median(rtts)
	b.ReportMetric(float64(loop.Nanoseconds()), "loop-ns/call")
	b.ReportMetric(float64(mean(gaps).Nanoseconds()), "loop-mean-ns/call")
	b.ReportMetric(float64(median(first).Nanoseconds()), "loop-first20-ns/call")
	b.ReportMetric(float64(median(last).Nanoseconds()), "loop-last20-ns/call")
	b.ReportMetric(float64(rtt.Nanoseconds()), "rtt-ns/call")
	b.ReportMetric(float64((loop - rtt).Nanoseconds()), "overhead-ns/call")
	b.ReportMetric(float64(median(stores).Nanoseconds()), "store-ns/call")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*loopCalls), "cpu-ns/call")
	b.ReportMetric(mib(peak), "peak-rss-MiB")
	b.ReportMetric(mib(anon), "anon-rss-MiB")
	b.ReportMetric(mib(file), "file-rss-MiB")
	b.ReportMetric(mib(floor), "floor-rss-MiB")
}

// TestToolLoopHarness runs a short loop through the same harness and
// checks that it measures what it claims: every call's result came from
// infer-sim's browser (the scripted model checks each one), each call has
// a gap, and the probe's reads reach infer-sim.
func TestToolLoopHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the infer and infer-sim binaries")
	}
	bins := programs(t)
	run := runToolLoop(t, bins, 3)
	if len(run.gaps) != 3 {
		t.Fatalf("gaps: %v", run.gaps)
	}
	for i, g := range run.gaps {
		if g <= 0 {
			t.Errorf("call %d: gap %v", i+1, g)
		}
	}
	if run.peakRSS < 1<<20 || run.anonRSS < 1<<20 || run.fileRSS < 1<<20 || run.peakRSS < run.anonRSS {
		t.Errorf("RSS peak %d, anonymous %d, file %d bytes: not real measurements", run.peakRSS, run.anonRSS, run.fileRSS)
	}
	if run.cpu <= 0 {
		t.Errorf("CPU time %v", run.cpu)
	}
	if floor := floorRSS(t, bins); floor < 1<<20 {
		t.Errorf("infer version's peak RSS: %d bytes", floor)
	}
	probe := newRTTProbe(t, bins)
	if rtts := probe.measure(t, 3); len(rtts) != 3 {
		t.Fatalf("round trips: %v", rtts)
	}
	saves := newStoreProbe(t)
	if ds := saves.measure(t, 3); len(ds) != 3 || ds[2] <= 0 {
		t.Fatalf("store calls: %v", ds)
	}
	c, err := saves.s.Load(saves.id)
	if err != nil || len(c.Messages) != 1+2*(10+3) {
		t.Fatalf("the store probe saved %d messages (%v), want a question and 13 calls of two", len(c.Messages), err)
	}
}
