package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sample is bench.txt as make bench writes it, trimmed: three runs of the
// bridge pair (one of them an outlier), the store pairs, sub-benchmarks,
// custom units, a failed benchmark's lines, and noise between them.
const sample = `goos: linux
goarch: amd64
pkg: github.com/infer-workspace/infer/bridge
cpu: Intel(R) Xeon(R) Processor
BenchmarkBridgeCommandRoundTrip-2                 	   15904	     40000 ns/op	  16.58 MB/s	    4610 B/op	      27 allocs/op
BenchmarkBridgeCommandRoundTrip-2                 	   15904	     45000 ns/op	  16.58 MB/s	    4610 B/op	      27 allocs/op
BenchmarkBridgeCommandRoundTrip-2                 	   15904	    900000 ns/op	  16.58 MB/s	    4610 B/op	      27 allocs/op
BenchmarkWebSocketEchoBaseline-2                  	   30417	     30000 ns/op	  34.90 MB/s	    6080 B/op	      13 allocs/op
BenchmarkWebSocketEchoBaseline-2                  	   30417	     30000 ns/op	  34.90 MB/s	    6080 B/op	      13 allocs/op
BenchmarkWebSocketEchoBaseline-2                  	   30417	     30000 ns/op	  34.90 MB/s	    6080 B/op	      13 allocs/op
BenchmarkWebSocketEchoHandoff-2                   	   30417	     40000 ns/op	  34.90 MB/s	    6080 B/op	      13 allocs/op
BenchmarkBridgeRoundTripOverHandoff-2             	   10000	     90000 ns/op	     50000 figure-ns	     40000 floor-ns	         1.25 ratio
BenchmarkBridgeRoundTripOverHandoff-2             	   10000	     90000 ns/op	     47000 figure-ns	     40000 floor-ns	         1.18 ratio
BenchmarkBridgeRoundTripOverHandoff-2             	   10000	     90000 ns/op	     45000 figure-ns	     40000 floor-ns	         1.12 ratio
BenchmarkBridgeScreenshotOverEcho-2               	     100	  12000000 ns/op	   7000000 figure-ns	   5000000 floor-ns	         1.40 ratio
PASS
ok  	github.com/infer-workspace/infer/bridge	4.763s
pkg: github.com/infer-workspace/infer/session/store
BenchmarkStoreList-2             	       6	 300000000 ns/op	 179816167 cpu-ns/op	24218356 B/op	  150032 allocs/op
BenchmarkStoreListBaseline-2     	       7	 100000000 ns/op	 142589857 cpu-ns/op	13976062 B/op	  100031 allocs/op
BenchmarkStoreResume-2           	      40	  30000000 ns/op	  28000000 cpu-ns/op
BenchmarkStoreResume-2           	      40	  90000000 ns/op	  29000000 cpu-ns/op
BenchmarkStoreResumeBaseline-2   	     900	   1500000 ns/op	   1500000 cpu-ns/op
BenchmarkStoreResumeBaseline-2   	     900	   4000000 ns/op	   1700000 cpu-ns/op
BenchmarkStoreResumeSyntax-2     	     150	   6000000 ns/op	   6000000 cpu-ns/op
BenchmarkStoreResumeSyntax-2     	     150	  20000000 ns/op	   6500000 cpu-ns/op
BenchmarkChatEventFanout-2   	--- FAIL: BenchmarkChatEventFanout-2
    bench_test.go:125: delivered 8 of 1228777 words
BenchmarkChatRenderStreaming/10-2         	    1286	   1000000 ns/op	  258584 B/op	     963 allocs/op
BenchmarkChatRenderStreaming/5000-2       	    1184	    900000 ns/op	  260732 B/op	     962 allocs/op
BenchmarkToolLoop-2   	       1	1504160800 ns/op	   5567861 loop-mean-ns/call	   4625197 loop-ns/call	   1500000 overhead-ns/call	    700000 store-ns/call	        55.86 peak-rss-MiB	        43.00 floor-rss-MiB	     73541 rtt-ns/call
BenchmarkStoreToolCall-2         	    1812	    600000 ns/op	    330765 cpu-ns/op	    3148 B/op	      26 allocs/op
BenchmarkChatBodyToolLoop-2      	      16	  70106084 ns/op	    350000 ns/request	23433785 B/op	   94806 allocs/op
BenchmarkHeadlessClose-2   	       1	3667808010 ns/op	         1.106 close-ratio	 337251764 hangup-ns/run	 372913244 held-ns/run
--- SKIP: BenchmarkChromeCommandOverhead
`

func parsed(t *testing.T, text string) results {
	t.Helper()
	r, err := parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestParseKeepsEveryRunAndDropsTheProcsSuffix(t *testing.T) {
	r := parsed(t, sample)
	if got := r.values["BenchmarkBridgeCommandRoundTrip"]["ns/op"]; len(got) != 3 || got[2] != 900000 {
		t.Fatalf("runs of the round trip: %v", got)
	}
	if !has(r, "BenchmarkChatRenderStreaming/5000") || !has(r, "BenchmarkChatRenderStreaming/10") {
		t.Fatalf("sub-benchmarks: %v", r.values)
	}
	if v, n, ok := r.median("BenchmarkToolLoop", "peak-rss-MiB"); !ok || n != 1 || v != 55.86 {
		t.Fatalf("custom unit: %v %d %v", v, n, ok)
	}
	if has(r, "BenchmarkChatEventFanout") {
		t.Fatal("a failed benchmark's line was taken as a result")
	}
	if !r.skipped["BenchmarkChromeCommandOverhead"] {
		t.Fatal("the skip line was not noted")
	}
}

func TestMedianIgnoresAnOutlier(t *testing.T) {
	r := parsed(t, sample)
	v, n, ok := r.median("BenchmarkBridgeCommandRoundTrip", "ns/op")
	if !ok || n != 3 || v != 45000 {
		t.Fatalf("median %v of %d runs", v, n)
	}
	even := parsed(t, "BenchmarkX-4 1 10 ns/op\nBenchmarkX-4 1 30 ns/op\n")
	if v, _, _ := even.median("BenchmarkX", "ns/op"); v != 20 {
		t.Fatalf("median of two: %v", v)
	}
}

func TestBaseName(t *testing.T) {
	for in, want := range map[string]string{
		"BenchmarkA-2":           "BenchmarkA",
		"BenchmarkA/5000-16":     "BenchmarkA/5000",
		"BenchmarkA":             "BenchmarkA",
		"BenchmarkA/sub-case":    "BenchmarkA/sub-case",
		"BenchmarkA/sub-case-12": "BenchmarkA/sub-case",
	} {
		if got := baseName(in); got != want {
			t.Errorf("baseName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseRejectsAValueThatIsNotANumber(t *testing.T) {
	_, err := parse(strings.NewReader("BenchmarkX-2 10 fast ns/op\n"))
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("err = %v", err)
	}
}

// rowOf finds the table line of a measure.
func rowOf(t *testing.T, table, measure string) []string {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "| "+measure+" |") {
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			return cells
		}
	}
	t.Fatalf("no row %q in\n%s", measure, table)
	return nil
}

func TestTableJudgesEachRowAgainstItsTarget(t *testing.T) {
	var out bytes.Buffer
	misses, err := write(&out, parsed(t, sample))
	if err != nil {
		t.Fatal(err)
	}
	table := out.String()

	// Judged on the pair taken in turns: the median of 1.25, 1.18 and
	// 1.12 is within 1.2×. The separate benchmarks' ratio, 45 µs over the
	// hand-off's 40 µs, is reported; the sample has one hand-off run, so
	// that row counts one.
	if c := rowOf(t, table, "Bridge command round trip vs the hand-off floor, 1 KiB read, taken in turns"); c[1] != "1.18×" || c[2] != "≤ 1.2×" || c[3] != "✓" || c[4] != "3" || c[5] != "47 µs round trip vs 40 µs hand-off echo" {
		t.Errorf("round trip row: %q", c)
	}
	if c := rowOf(t, table, "Bridge command round trip, 1 MiB screenshot, taken in turns with the plain echo"); c[1] != "1.40×" || c[2] != "≤ 1.5×" || c[3] != "✓" || c[5] != "7 ms round trip vs 5 ms plain echo" {
		t.Errorf("screenshot row: %q", c)
	}
	if c := rowOf(t, table, "Bridge command round trip vs the hand-off floor, 1 KiB read, run apart"); c[1] != "1.12×" || c[2] != "report" || c[3] != "" || c[4] != "1" {
		t.Errorf("round trip row, run apart: %q", c)
	}
	if c := rowOf(t, table, "Bridge command round trip vs the plain echo, 1 KiB"); c[1] != "1.50×" || c[2] != "report" || c[3] != "" {
		t.Errorf("round trip over the plain echo: %q", c)
	}
	if c := rowOf(t, table, "Store list, 10,000 conversations"); c[1] != "3.00×" || c[3] != "✗" {
		t.Errorf("store list row: %q", c)
	}
	// Resume in CPU time: 28.5 ms over 6.25 ms, whatever the wall clock
	// did; the read of the file is reported beside it.
	if c := rowOf(t, table, "Store resume, 10,000 messages, vs checking their JSON syntax (CPU time)"); c[1] != "4.56×" || c[2] != "≤ 6×" || c[3] != "✓" || c[5] != "28.5 ms StoreResume vs 6.25 ms StoreResumeSyntax" {
		t.Errorf("resume row: %q", c)
	}
	if c := rowOf(t, table, "Store resume, 10,000 messages, vs reading the file"); c[1] != "21.82×" || c[2] != "report" || c[3] != "" {
		t.Errorf("resume over the read: %q", c)
	}
	if c := rowOf(t, table, "Chat render while streaming, 5,000 vs 10 messages"); c[1] != "0.90×" || c[3] != "✓" {
		t.Errorf("render row: %q", c)
	}
	// The tool loop's absolute figures are reported; its targets are
	// judged against floors from the same run: 1.5 ms less the store's
	// 0.7 ms beside the loop and 0.35 ms of encoding, and 55.86 MiB over
	// 43 MiB.
	if c := rowOf(t, table, "Tool loop: cost per browser call above the bridge round trip"); c[1] != "1.5 ms" || c[2] != "report" || c[3] != "" || !strings.Contains(c[5], "73.5 µs bare round trip") {
		t.Errorf("tool loop row: %q", c)
	}
	if c := rowOf(t, table, "Tool loop: headless peak RSS"); c[1] != "55.9 MiB" || c[2] != "report" || c[3] != "" {
		t.Errorf("peak RSS row: %q", c)
	}
	if c := rowOf(t, table, lessFloors); c[1] != "450 µs" || c[2] != "≤ 2 ms" || c[3] != "✓" || !strings.Contains(c[5], "700 µs store's call beside the loop") {
		t.Errorf("tool loop less its floors: %q", c)
	}
	if c := rowOf(t, table, rssOverFloor); c[1] != "1.30×" || c[2] != "≤ 1.3×" || c[3] != "✓" || c[5] != "55.9 MiB vs 43.0 MiB" {
		t.Errorf("peak RSS over its floor: %q", c)
	}
	if c := rowOf(t, table, "Chat event fan-out to the extension"); c[1] != "not measured" || c[3] != "–" {
		t.Errorf("a failed benchmark's row: %q", c)
	}
	if c := rowOf(t, table, "Chromium command overhead vs direct chromedp"); c[1] != "skipped" || !strings.Contains(c[5], "skipped itself") {
		t.Errorf("chrome row: %q", c)
	}
	if c := rowOf(t, table, "One-call `infer headless` against a peer that keeps TCP open after the close vs one that hangs up"); c[1] != "1.11×" || c[3] != "✓" || c[5] != "373 ms held open vs 337 ms hung up" {
		t.Errorf("headless close row: %q", c)
	}
	if misses != 1 {
		t.Errorf("misses = %d, want 1 (store list)", misses)
	}
	rowsPart, floors, ok := strings.Cut(table, "\n\n")
	if !ok || strings.Count(rowsPart, "\n") != len(rows)+1 {
		t.Errorf("the table should have a header, a rule and one line per row:\n%s", table)
	}
	for _, measure := range []string{"Bridge command round trip vs the hand-off floor, 1 KiB read, taken in turns", lessFloors, rssOverFloor, "Store resume, 10,000 messages, vs checking their JSON syntax (CPU time)"} {
		if !strings.Contains(floors, "- "+measure+": the floor is ") {
			t.Errorf("no floor said for %q under the table:\n%s", measure, floors)
		}
	}
}

const (
	lessFloors   = "Tool loop: cost per call above the round trip, less the store's synced tool call and the SDK's request encoding"
	rssOverFloor = "Tool loop: headless peak RSS vs `infer version`'s peak"
)

// The figures of issue 13's closing note: the loop misses 2 ms by its
// floors' width and meets 1.3× its binary's peak. Judged against the
// floors, the first is a miss and the second a pass; the absolute figures
// beside them are reported, not judged.
func TestToolLoopIsJudgedAgainstItsFloors(t *testing.T) {
	const text = `BenchmarkToolLoop-2 1 1 ns/op 3280000 overhead-ns/call 62.2 peak-rss-MiB 51.2 floor-rss-MiB
BenchmarkStoreToolCall-2 100 723000 ns/op
BenchmarkChatBodyToolLoop-2 10 1 ns/op 366000 ns/request
`
	var out bytes.Buffer
	misses, err := write(&out, parsed(t, text))
	if err != nil {
		t.Fatal(err)
	}
	table := out.String()
	// No store-ns/call: the store package's benchmark stands in, and the
	// detail says so.
	if c := rowOf(t, table, lessFloors); c[1] != "2.19 ms" || c[3] != "✗" || !strings.Contains(c[5], "723 µs StoreToolCall") {
		t.Errorf("tool loop less its floors: %q", c)
	}
	if c := rowOf(t, table, rssOverFloor); c[1] != "1.21×" || c[3] != "✓" {
		t.Errorf("peak RSS over its floor: %q", c)
	}
	for _, measure := range []string{"Tool loop: cost per browser call above the bridge round trip", "Tool loop: headless peak RSS"} {
		if c := rowOf(t, table, measure); c[3] != "" {
			t.Errorf("%s is judged: %q", measure, c)
		}
	}
	if misses != 1 {
		t.Errorf("misses = %d, want 1", misses)
	}
}

func TestRunReportsAFileWithoutResults(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "bench.txt")
	os.WriteFile(empty, []byte("PASS\nok  \tx\t0.1s\n"), 0o644)
	var out, errOut bytes.Buffer
	if code := run([]string{empty}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "no benchmark results") {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if code := run([]string{filepath.Join(dir, "missing.txt")}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "make bench") {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if code := run(nil, &out, &errOut); code != 2 {
		t.Fatalf("no arguments: exit %d", code)
	}
	full := filepath.Join(dir, "full.txt")
	os.WriteFile(full, []byte(sample), 0o644)
	out.Reset()
	if code := run([]string{full}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "1 of the targets missed") {
		t.Fatalf("exit %d:\n%s", code, out.String())
	}
}

func TestFormatting(t *testing.T) {
	for ns, want := range map[float64]string{
		512:       "512 ns",
		73541:     "73.5 µs",
		4625197:   "4.63 ms",
		123456789: "123 ms",
		1.5e9:     "1.5 s",
	} {
		if got := duration(ns); got != want {
			t.Errorf("duration(%v) = %q, want %q", ns, got, want)
		}
	}
	if got := group(1234567); got != "1,234,567" {
		t.Errorf("group = %q", got)
	}
	if got := group(999); got != "999" {
		t.Errorf("group = %q", got)
	}
}

// has reports whether benchmark appears in r at all.
func has(r results, benchmark string) bool { return len(r.values[benchmark]) > 0 }
