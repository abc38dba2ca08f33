// Command report turns the output of `make bench` (bench.txt, the format
// benchstat reads) into one Markdown table: every benchmark pair with its
// ratio, or the absolute figure where the target is absolute, the target,
// and ✓ or ✗. Medians over the -count runs are used throughout, because
// the machines these run on are shared and a mean follows every hiccup.
//
//	go run ./perf/report bench.txt
//
// It exits 1 when bench.txt cannot be read or holds no benchmark; missed
// targets are shown, not turned into a failure, since one noisy run should
// not fail a build.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: report bench.txt   (the output of `make bench`)")
		return 2
	}
	f, err := os.Open(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "report: %v; run `make bench` first, it writes bench.txt\n", err)
		return 1
	}
	defer f.Close()
	res, err := parse(f)
	if err != nil {
		fmt.Fprintf(stderr, "report: %s: %v\n", args[0], err)
		return 1
	}
	if len(res.values) == 0 {
		fmt.Fprintf(stderr, "report: %s holds no benchmark results; it should be the output of go test -bench\n", args[0])
		return 1
	}
	misses, err := write(stdout, res)
	if err != nil {
		fmt.Fprintf(stderr, "report: %v\n", err)
		return 1
	}
	if misses > 0 {
		fmt.Fprintf(stdout, "\n%d of the targets missed (✗); docs/performance.md says what bounds each.\n", misses)
	}
	return 0
}
