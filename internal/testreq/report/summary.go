package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/infer-workspace/infer/internal/testreq"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent, plus
// the build events go test adds).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
}

// testKey names one test of one package.
type testKey struct{ pkg, test string }

// skip is one skipped test and why.
type skip struct {
	pkg, test, why string
}

// modulePrefix is cut from package paths in the list of skips.
const modulePrefix = "github.com/infer-workspace/infer/"

// fileLine is the "    name_test.go:12: " that t.Skip puts before its
// message.
var fileLine = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)

// summarize copies a `go test -json` stream from r to w as plain go test
// would show it, then lists the skipped tests by reason. It reports
// whether anything failed.
func summarize(r io.Reader, w io.Writer) (failed bool, err error) {
	held := map[testKey][]string{}
	var skips []skip
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not an event (go's own messages): pass it on.
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		k := testKey{e.Package, e.Test}
		switch e.Action {
		case "build-output":
			io.WriteString(w, e.Output)
		case "build-fail":
			failed = true
		case "output":
			if e.Test == "" {
				if o := strings.TrimSpace(e.Output); o != "PASS" && !strings.HasPrefix(o, "=== ") {
					io.WriteString(w, e.Output)
				}
				continue
			}
			held[k] = append(held[k], e.Output)
		case "pass":
			delete(held, k)
		case "skip":
			if e.Test != "" {
				skips = append(skips, skip{e.Package, e.Test, skipReason(held[k])})
			}
			delete(held, k)
		case "fail":
			failed = true
			if e.Test != "" {
				writeHeld(w, held[k])
				delete(held, k)
				continue
			}
			// A package that failed outright (a panic, a timeout) leaves
			// its running tests without an end: show what they said.
			var open []testKey
			for ok := range held {
				if ok.pkg == e.Package {
					open = append(open, ok)
				}
			}
			sort.Slice(open, func(i, j int) bool { return open[i].test < open[j].test })
			for _, ok := range open {
				writeHeld(w, held[ok])
				delete(held, ok)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return true, err
	}
	writeSkips(w, skips)
	return failed, nil
}

// writeHeld prints a failed test's output without the lines only -v shows.
func writeHeld(w io.Writer, lines []string) {
	for _, l := range lines {
		if t := strings.TrimSpace(l); strings.HasPrefix(t, "=== RUN") || strings.HasPrefix(t, "=== PAUSE") || strings.HasPrefix(t, "=== CONT") || strings.HasPrefix(t, "=== NAME") {
			continue
		}
		io.WriteString(w, l)
	}
}

// skipReason is what a skipped test said before its "--- SKIP" line.
func skipReason(lines []string) string {
	var parts []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		parts = append(parts, strings.TrimSpace(fileLine.ReplaceAllString(l, "")))
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	// The reason is the last thing said: t.Skip ends the test.
	return parts[len(parts)-1]
}

// writeSkips lists the skipped tests: those that lacked a need first, by
// need, then the others by reason.
func writeSkips(w io.Writer, skips []skip) {
	if len(skips) == 0 {
		return
	}
	byWhy := map[string][]skip{}
	for _, s := range skips {
		byWhy[s.why] = append(byWhy[s.why], s)
	}
	whys := make([]string, 0, len(byWhy))
	for why := range byWhy {
		whys = append(whys, why)
	}
	needFirst := func(why string) bool { return strings.HasPrefix(why, testreq.SkipPrefix) }
	sort.Slice(whys, func(i, j int) bool {
		if needFirst(whys[i]) != needFirst(whys[j]) {
			return needFirst(whys[i])
		}
		return whys[i] < whys[j]
	})
	fmt.Fprintf(w, "\nskipped: %d tests\n", len(skips))
	for _, why := range whys {
		group := byWhy[why]
		fmt.Fprintf(w, "  %d: %s\n", len(group), why)
		byPkg := map[string][]string{}
		var pkgs []string
		for _, s := range group {
			if byPkg[s.pkg] == nil {
				pkgs = append(pkgs, s.pkg)
			}
			byPkg[s.pkg] = append(byPkg[s.pkg], s.test)
		}
		sort.Strings(pkgs)
		for _, p := range pkgs {
			tests := byPkg[p]
			sort.Strings(tests)
			fmt.Fprintf(w, "      %s: %s\n", strings.TrimPrefix(p, modulePrefix), strings.Join(tests, " "))
		}
	}
}
