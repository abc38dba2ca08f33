package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// results holds every value bench.txt reported, by benchmark and unit.
// A benchmark's name is kept without its -GOMAXPROCS suffix, so
// "BenchmarkChatRenderStreaming/5000-2" is "BenchmarkChatRenderStreaming/5000".
type results struct {
	values map[string]map[string][]float64
	// skipped are benchmarks that reported a skip (go test -v only) or a
	// "--- SKIP" line.
	skipped map[string]bool
}

// parse reads Go benchmark output in the format benchstat reads: lines
// "BenchmarkName-P  N  value unit  value unit ..." among other lines, which
// are ignored. Each line is one run; -count repeats them.
func parse(r io.Reader) (results, error) {
	res := results{values: map[string]map[string][]float64{}, skipped: map[string]bool{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if name, ok := strings.CutPrefix(text, "--- SKIP: "); ok {
			res.skipped[baseName(strings.Fields(name)[0])] = true
			continue
		}
		if !strings.HasPrefix(text, "Benchmark") {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) < 4 || len(fields)%2 != 0 {
			continue // a benchmark's log line, or one that failed
		}
		if _, err := strconv.ParseInt(fields[1], 10, 64); err != nil {
			continue
		}
		name := baseName(fields[0])
		units := res.values[name]
		if units == nil {
			units = map[string][]float64{}
			res.values[name] = units
		}
		for i := 2; i < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return res, fmt.Errorf("line %d: %q is not a number in %q", line, fields[i], text)
			}
			units[fields[i+1]] = append(units[fields[i+1]], v)
		}
	}
	if err := sc.Err(); err != nil {
		return res, err
	}
	return res, nil
}

// baseName drops the -GOMAXPROCS suffix go test appends.
func baseName(name string) string {
	i := strings.LastIndexByte(name, '-')
	if i < 0 {
		return name
	}
	if _, err := strconv.Atoi(name[i+1:]); err != nil {
		return name
	}
	return name[:i]
}

// median is the median of benchmark's unit over its runs, and how many
// runs there were; ok is false when bench.txt has none.
func (r results) median(benchmark, unit string) (value float64, runs int, ok bool) {
	vs := r.values[benchmark][unit]
	if len(vs) == 0 {
		return 0, 0, false
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2], n, true
	}
	return (s[n/2-1] + s[n/2]) / 2, n, true
}
