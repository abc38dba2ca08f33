package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// verdict is a row's outcome against its target.
type verdict int

const (
	met      verdict = iota // ✓
	missed                  // ✗
	reported                // no target: the figure is reported
	absent                  // the benchmark is not in bench.txt
)

func (v verdict) String() string {
	switch v {
	case met:
		return "✓"
	case missed:
		return "✗"
	case absent:
		return "–"
	}
	return ""
}

// row is one line of the report: a measure, its target, and how to get
// its value from the results.
type row struct {
	measure string
	target  string
	eval    func(results) outcome
	// floor says, for a row judged against a floor measured in the same
	// run, what the floor is and why it is one; the report prints it
	// under the table so a verdict never hides what it was taken against.
	floor string
}

// outcome is a row's evaluated value.
type outcome struct {
	value   string
	detail  string
	verdict verdict
	runs    int
}

// missing is the outcome of a row whose benchmarks are not in bench.txt.
func missing(names ...string) outcome {
	return outcome{value: "not measured", detail: "no " + strings.Join(names, ", ") + " in bench.txt", verdict: absent}
}

// ratioRow compares benchmark a with its baseline b on unit: a's median
// over b's, at most limit (or reported only when limit is 0).
func ratioRow(measure, a, b, unit string, limit float64) row {
	target := "report"
	if limit > 0 {
		target = fmt.Sprintf("≤ %s×", trimFloat(limit))
	}
	return row{measure: measure, target: target, eval: func(r results) outcome {
		va, na, okA := r.median(a, unit)
		vb, nb, okB := r.median(b, unit)
		if !okA || !okB || vb == 0 {
			return missing(a, b)
		}
		ratio := va / vb
		o := outcome{
			value:  fmt.Sprintf("%.2f×", ratio),
			detail: fmt.Sprintf("%s %s vs %s %s", formatUnit(va, unit), short(a), formatUnit(vb, unit), short(b)),
			runs:   min(na, nb),
		}
		o.verdict = judge(limit > 0, ratio <= limit)
		return o
	}}
}

// inTurnsRow judges the ratio a benchmark that times a figure and its
// floor in turns reports (figure-ns, floor-ns, ratio): the median of its
// runs' ratios, at most limit.
func inTurnsRow(measure, benchmark, figure, floor string, limit float64, floorNote string) row {
	return row{measure: measure, target: fmt.Sprintf("≤ %s×", trimFloat(limit)), floor: floorNote, eval: func(r results) outcome {
		ratio, n, ok := r.median(benchmark, "ratio")
		if !ok {
			return missing(benchmark)
		}
		detail := strings.Join(details(r, benchmark, duration,
			[2]string{"figure-ns", figure},
			[2]string{"floor-ns", floor},
		), " vs ")
		return outcome{value: fmt.Sprintf("%.2f×", ratio), detail: detail, verdict: judge(true, ratio <= limit), runs: n}
	}}
}

// withFloor notes what r's baseline is and why it is a floor.
func withFloor(r row, floor string) row {
	r.floor = floor
	return r
}

func judge(hasTarget, ok bool) verdict {
	switch {
	case !hasTarget:
		return reported
	case ok:
		return met
	}
	return missed
}

// rows is the report, in the order of the issues that set the targets.
var rows = []row{
	// The 1 KiB target is against the hand-off floor: the bridge's reader
	// must stay a goroutine of its own (keepalive, panel frames), and
	// handing a result to the caller costs about as much as a plain echo's
	// margin (docs/performance.md). The plain echo stays as a reported row.
	// Both bridge targets are judged on the figure and its floor taken in
	// turns in one benchmark, so that both see the same load; the ratios
	// of the separate benchmarks, run seconds apart, stay reported.
	inTurnsRow("Bridge command round trip vs the hand-off floor, 1 KiB read, taken in turns", "BenchmarkBridgeRoundTripOverHandoff", "round trip", "hand-off echo", 1.2,
		"BenchmarkWebSocketEchoHandoff's echo, taken in turns with the round trip: a gorilla echo of the same frame whose replies are read on a goroutine of their own and handed to the sender over a channel, as the bridge's reader must stay its own goroutine (pings, panel frames) and hand each result to the caller waiting in Do."),
	ratioRow("Bridge command round trip vs the hand-off floor, 1 KiB read, run apart", "BenchmarkBridgeCommandRoundTrip", "BenchmarkWebSocketEchoHandoff", "ns/op", 0),
	ratioRow("Echo read on its own goroutine vs the plain echo, 1 KiB (the floor)", "BenchmarkWebSocketEchoHandoff", "BenchmarkWebSocketEchoBaseline", "ns/op", 0),
	ratioRow("Bridge command round trip vs the plain echo, 1 KiB", "BenchmarkBridgeCommandRoundTrip", "BenchmarkWebSocketEchoBaseline", "ns/op", 0),
	inTurnsRow("Bridge command round trip, 1 MiB screenshot, taken in turns with the plain echo", "BenchmarkBridgeScreenshotOverEcho", "round trip", "plain echo", 1.5,
		"the plain gorilla echo of a frame as large, taken in turns with the round trip: what any WebSocket protocol pays to move 1.4 MB each way, before the bridge scans the frame and decodes the image's base64."),
	ratioRow("Bridge command round trip, 1 MiB screenshot, run apart", "BenchmarkBridgeCommandRoundTripScreenshot1MiB", "BenchmarkWebSocketEchoBaseline1MiB", "ns/op", 0),
	ratioRow("Store list, 10,000 conversations", "BenchmarkStoreList", "BenchmarkStoreListBaseline", "ns/op", 2),
	// Resume is judged in CPU time against a syntax check of the same
	// bytes from memory (session/store's BenchmarkStoreResumeSyntax says
	// why); the read of the file, its floor before, stays reported.
	withFloor(ratioRow("Store resume, 10,000 messages, vs checking their JSON syntax (CPU time)", "BenchmarkStoreResume", "BenchmarkStoreResumeSyntax", "cpu-ns/op", 6),
		"BenchmarkStoreResumeSyntax: every line of the same 4.2 MB transcript read as JSON by the library's tokenizer without decoding anything, from a copy of the file's bytes in memory. It is the least any decoder of the format does, and it is CPU work like Load's own, so the two slow down together on a busy machine; reading the file, the floor before, swung 0.8–14 ms with the page cache."),
	ratioRow("Store resume, 10,000 messages, vs reading the file", "BenchmarkStoreResume", "BenchmarkStoreResumeBaseline", "ns/op", 0),
	{measure: "Chat event fan-out to the extension", target: "≥ 50,000 events/s", eval: func(r results) outcome {
		v, n, ok := r.median("BenchmarkChatEventFanout", "events/s")
		if !ok {
			return missing("BenchmarkChatEventFanout")
		}
		detail := ""
		if f, _, ok := r.median("BenchmarkChatEventFanout", "frames/s"); ok {
			detail = fmt.Sprintf("%s frames/s", group(f))
		}
		return outcome{value: group(v) + " events/s", detail: detail, verdict: judge(true, v >= 50_000), runs: n}
	}},
	ratioRow("Chat render while streaming, 5,000 vs 10 messages", "BenchmarkChatRenderStreaming/5000", "BenchmarkChatRenderStreaming/10", "ns/op", 1.5),
	{measure: "Fake browser read of a 1 MB page", target: "report", eval: func(r results) outcome {
		v, n, ok := r.median("BenchmarkFakeBrowserRead", "ns/op")
		if !ok {
			return missing("BenchmarkFakeBrowserRead")
		}
		detail := ""
		if mbs, _, ok := r.median("BenchmarkFakeBrowserRead", "MB/s"); ok {
			detail = fmt.Sprintf("%.0f MB/s", mbs)
		}
		return outcome{value: duration(v), detail: detail, verdict: reported, runs: n}
	}},
	{measure: "Chromium command overhead vs direct chromedp", target: "≤ 1.2×", eval: func(r results) outcome {
		v, n, ok := r.median("BenchmarkChromeCommandOverhead", "overhead-ratio")
		if !ok {
			why := "did not run"
			if r.skipped["BenchmarkChromeCommandOverhead"] {
				why = "skipped itself"
			}
			return outcome{value: "skipped", detail: "BenchmarkChromeCommandOverhead " + why + " (it needs Chromium on PATH)", verdict: absent}
		}
		detail := ""
		be, _, ok1 := r.median("BenchmarkChromeCommandOverhead", "ns/backend-read")
		di, _, ok2 := r.median("BenchmarkChromeCommandOverhead", "ns/direct-read")
		if ok1 && ok2 {
			detail = fmt.Sprintf("%s backend vs %s direct", duration(be), duration(di))
		}
		return outcome{value: fmt.Sprintf("%.2f×", v), detail: detail, verdict: judge(true, v <= 1.2), runs: n}
	}},
	// The tool loop is judged against floors measured in the same run
	// (issue 13's closing note): the absolute 2 ms and 40 MiB sat below
	// costs of the machine that the design keeps on purpose, so the two
	// rows after them, which take those costs out, carry the targets.
	{measure: "Tool loop: cost per browser call above the bridge round trip", target: "report", eval: func(r results) outcome {
		over, n, ok := r.median("BenchmarkToolLoop", "overhead-ns/call")
		if !ok {
			return missing("BenchmarkToolLoop")
		}
		parts := details(r, "BenchmarkToolLoop", duration,
			[2]string{"loop-ns/call", "per call"},
			[2]string{"rtt-ns/call", "bare round trip"},
			[2]string{"loop-first20-ns/call", "first 20 calls"},
			[2]string{"loop-last20-ns/call", "last 20 calls"},
			[2]string{"loop-mean-ns/call", "mean"},
			[2]string{"cpu-ns/call", "headless CPU per call"},
		)
		return outcome{value: duration(over), detail: strings.Join(parts, ", "), verdict: reported, runs: n}
	}},
	{measure: "Tool loop: headless peak RSS", target: "report", eval: func(r results) outcome {
		v, n, ok := r.median("BenchmarkToolLoop", "peak-rss-MiB")
		if !ok {
			return missing("BenchmarkToolLoop")
		}
		parts := details(r, "BenchmarkToolLoop", mib,
			[2]string{"anon-rss-MiB", "anonymous at the last call"},
			[2]string{"file-rss-MiB", "file-backed (the binary)"},
			[2]string{"floor-rss-MiB", "`infer version` peak"},
		)
		return outcome{value: mib(v), detail: strings.Join(parts, ", "), verdict: reported, runs: n}
	}},
	{
		measure: "Tool loop: cost per call above the round trip, less the store's synced tool call and the SDK's request encoding",
		target:  "≤ 2 ms",
		eval: func(r results) outcome {
			over, n, ok := r.median("BenchmarkToolLoop", "overhead-ns/call")
			encode, _, ok2 := r.median("BenchmarkChatBodyToolLoop", "ns/request")
			if !ok || !ok2 {
				return missing("BenchmarkToolLoop", "BenchmarkChatBodyToolLoop")
			}
			// The store's share is measured beside the loop; a bench.txt
			// from before that has only the store package's benchmark.
			store, _, ok1 := r.median("BenchmarkToolLoop", "store-ns/call")
			storeFrom := "store's call beside the loop"
			if !ok1 {
				if store, _, ok1 = r.median("BenchmarkStoreToolCall", "ns/op"); !ok1 {
					return missing("BenchmarkToolLoop", "BenchmarkStoreToolCall")
				}
				storeFrom = "StoreToolCall"
			}
			rest := over - store - encode
			detail := fmt.Sprintf("%s above the round trip, less %s %s and %s per request ChatBodyToolLoop", duration(over), duration(store), storeFrom, duration(encode))
			return outcome{value: duration(rest), detail: detail, verdict: judge(true, rest <= 2e6), runs: n}
		},
		floor: "the store's two appends per call, each fsynced before the turn goes on (durability), timed beside the loop on the same file system in the same minutes, and the OpenAI SDK's encoding of each request (BenchmarkChatBodyToolLoop, the SDK issue 13 requires). Both are costs of the disk and the SDK that infer keeps on purpose; the 2 ms is what infer adds on top of them.",
	},
	{
		measure: "Tool loop: headless peak RSS vs `infer version`'s peak",
		target:  "≤ 1.3×",
		eval: func(r results) outcome {
			peak, n, ok := r.median("BenchmarkToolLoop", "peak-rss-MiB")
			floor, _, ok1 := r.median("BenchmarkToolLoop", "floor-rss-MiB")
			if !ok || !ok1 || floor <= 0 {
				return missing("BenchmarkToolLoop")
			}
			ratio := peak / floor
			return outcome{value: fmt.Sprintf("%.2f×", ratio), detail: fmt.Sprintf("%s vs %s", mib(peak), mib(floor)), verdict: judge(true, ratio <= 1.3), runs: n}
		},
		floor: "the peak RSS of `infer version`, which does no work, taken in each iteration of the loop: the binary's own pages (its text, tables and initialisers), which differ by machine and by what the page cache holds. The 1.3× is what a run may add to them.",
	},
	{measure: "One-call `infer headless` against a peer that keeps TCP open after the close vs one that hangs up", target: "≤ 1.2×", eval: func(r results) outcome {
		ratio, n, ok := r.median("BenchmarkHeadlessClose", "close-ratio")
		if !ok {
			return missing("BenchmarkHeadlessClose")
		}
		detail := ""
		held, _, ok1 := r.median("BenchmarkHeadlessClose", "held-ns/run")
		hung, _, ok2 := r.median("BenchmarkHeadlessClose", "hangup-ns/run")
		if ok1 && ok2 {
			detail = fmt.Sprintf("%s held open vs %s hung up", duration(held), duration(hung))
		}
		return outcome{value: fmt.Sprintf("%.2f×", ratio), detail: detail, verdict: judge(true, ratio <= 1.2), runs: n}
	}},
	{measure: "Start-up: `infer serve` to its ready line vs hello-world", target: "report", eval: func(r results) outcome {
		ratio, n, ok := r.median("BenchmarkStartup", "startup-ratio")
		if !ok {
			return missing("BenchmarkStartup")
		}
		detail := ""
		s, _, ok1 := r.median("BenchmarkStartup", "serve-ns/start")
		h, _, ok2 := r.median("BenchmarkStartup", "hello-ns/start")
		if ok1 && ok2 {
			detail = fmt.Sprintf("%s serve vs %s hello-world", duration(s), duration(h))
		}
		return outcome{value: fmt.Sprintf("%.1f×", ratio), detail: detail, verdict: reported, runs: n}
	}},
	{measure: "`infer serve` RSS with a 10,000-message conversation open", target: "report", eval: func(r results) outcome {
		v, n, ok := r.median("BenchmarkServeRSS", "rss-MiB")
		if !ok {
			return missing("BenchmarkServeRSS")
		}
		var parts []string
		if idle, _, ok := r.median("BenchmarkServeRSS", "idle-rss-MiB"); ok {
			parts = append(parts, fmt.Sprintf("%.1f MiB before resuming", idle))
		}
		if peak, _, ok := r.median("BenchmarkServeRSS", "peak-rss-MiB"); ok {
			parts = append(parts, fmt.Sprintf("%.1f MiB peak", peak))
		}
		return outcome{value: fmt.Sprintf("%.1f MiB", v), detail: strings.Join(parts, ", "), verdict: reported, runs: n}
	}},
}

// write prints the report as a Markdown table and returns how many rows
// missed their target.
func write(w io.Writer, r results) (misses int, err error) {
	var b strings.Builder
	b.WriteString("| Measure | Result | Target | ✓/✗ | Runs | Medians |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, row := range rows {
		o := row.eval(r)
		if o.verdict == missed {
			misses++
		}
		runs := "–"
		if o.runs > 0 {
			runs = fmt.Sprint(o.runs)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", row.measure, o.value, row.target, o.verdict, runs, o.detail)
	}
	var floors []string
	for _, row := range rows {
		if row.floor != "" {
			floors = append(floors, fmt.Sprintf("- %s: the floor is %s", row.measure, row.floor))
		}
	}
	if len(floors) > 0 {
		fmt.Fprintf(&b, "\nFloors measured in the same run:\n%s\n", strings.Join(floors, "\n"))
	}
	_, err = io.WriteString(w, b.String())
	return misses, err
}

// mib renders a figure in MiB.
func mib(v float64) string { return fmt.Sprintf("%.1f MiB", v) }

// details renders the medians of benchmark's units that bench.txt has,
// each as "value label".
func details(r results, benchmark string, format func(float64) string, units ...[2]string) []string {
	var parts []string
	for _, u := range units {
		if v, _, ok := r.median(benchmark, u[0]); ok {
			parts = append(parts, format(v)+" "+u[1])
		}
	}
	return parts
}

// short is a benchmark's name without the Benchmark prefix.
func short(name string) string { return strings.TrimPrefix(name, "Benchmark") }

// formatUnit renders a value of unit for the detail column.
func formatUnit(v float64, unit string) string {
	if unit == "ns/op" || unit == "cpu-ns/op" {
		return duration(v)
	}
	return fmt.Sprintf("%s %s", trimFloat(v), unit)
}

// duration renders nanoseconds with three significant digits.
func duration(ns float64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3g s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	case d >= time.Microsecond:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	}
	return fmt.Sprintf("%.3g ns", ns)
}

// group renders a whole number with thousands separators.
func group(v float64) string {
	s := fmt.Sprintf("%.0f", v)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

func trimFloat(v float64) string {
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", v), "0"), ".")
}
