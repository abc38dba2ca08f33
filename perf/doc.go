// Package perf holds infer's end-to-end benchmarks: the ones that need the
// real binaries rather than one package. They build cmd/infer and
// cmd/infer-sim, run them as child processes on loopback, and measure what
// a person would notice: the agent's tool loop against a scripted model,
// how fast `infer serve` is ready, how much memory it holds with a long
// conversation open, and whether closing a connection waits on a browser
// that keeps TCP open.
//
// Everything lives in the test files; this package has no API. `make bench`
// runs these benchmarks with the per-package ones and turns bench.txt into
// a table with ./perf/report (see docs/performance.md).
package perf
