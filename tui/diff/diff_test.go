package diff

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// apply rebuilds both sides from a script, so any script can be checked
// for correctness without knowing the expected edits.
func apply(s []Line) (a, b []string) {
	for _, l := range s {
		if l.Op != Insert {
			a = append(a, l.Text)
		}
		if l.Op != Delete {
			b = append(b, l.Text)
		}
	}
	return a, b
}

func TestScriptRebuildsBothSides(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "c", "d"}
	for i := 0; i < 500; i++ {
		a := make([]string, r.IntN(12))
		b := make([]string, r.IntN(12))
		for j := range a {
			a[j] = words[r.IntN(len(words))]
		}
		for j := range b {
			b[j] = words[r.IntN(len(words))]
		}
		s := Script(a, b)
		ga, gb := apply(s)
		if !slices.Equal(ga, a) || !slices.Equal(gb, b) {
			t.Fatalf("script for %v → %v rebuilds %v → %v", a, b, ga, gb)
		}
		edits := 0
		for _, l := range s {
			if l.Op != Equal {
				edits++
			}
		}
		if want := minEdits(a, b); edits != want {
			t.Fatalf("%v → %v: %d edits, the minimum is %d", a, b, edits, want)
		}
	}
}

// minEdits is the textbook LCS distance, as an oracle.
func minEdits(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return len(a) + len(b) - 2*dp[0][0]
}

func TestUnified(t *testing.T) {
	a := SplitLines("one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n")
	b := SplitLines("one\ntwo\nTHREE\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\n")
	got := strings.Join(Unified(a, b, 1), "\n")
	want := strings.Join([]string{
		"@@ -2,3 +2,3 @@", " two", "-three", "+THREE", " four",
		"@@ -10 +10,2 @@", " ten", "+eleven",
	}, "\n")
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if u := Unified(a, a, 3); u != nil {
		t.Fatalf("identical inputs gave %v", u)
	}
	if got := Unified(nil, []string{"new"}, 3); strings.Join(got, "|") != "@@ -0,0 +1 @@|+new" {
		t.Fatalf("new file: %q", got)
	}
}

func TestHugeRewriteIsBounded(t *testing.T) {
	a := make([]string, 3000)
	b := make([]string, 3000)
	for i := range a {
		a[i] = "a" + strings.Repeat("x", i%7)
		b[i] = "b" + strings.Repeat("y", i%5)
	}
	s := Script(a, b)
	if len(s) != 6000 {
		t.Fatalf("replace-all fallback: %d lines", len(s))
	}
}

// unified joins Unified's lines for comparison.
func unified(a, b string, context int) string {
	return strings.Join(Unified(SplitLines(a), SplitLines(b), context), "\n")
}

// numbered is "1\n2\n…n\n".
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i) + "\n")
	}
	return b.String()
}

func TestUnifiedCases(t *testing.T) {
	ten := numbered(10)
	for _, c := range []struct {
		name, a, b string
		want       []string
	}{
		{"identical", ten, ten, nil},
		{"both empty", "", "", nil},
		{"only a trailing newline differs", "x\ny", "x\ny\n", nil},
		{"insert", ten, strings.Replace(ten, "5\n", "5\nnew\n", 1),
			[]string{"@@ -3,6 +3,7 @@", " 3", " 4", " 5", "+new", " 6", " 7", " 8"}},
		{"delete", ten, strings.Replace(ten, "5\n", "", 1),
			[]string{"@@ -2,7 +2,6 @@", " 2", " 3", " 4", "-5", " 6", " 7", " 8"}},
		{"change in the middle keeps three lines of context", ten, strings.Replace(ten, "5\n", "five\n", 1),
			[]string{"@@ -2,7 +2,7 @@", " 2", " 3", " 4", "-5", "+five", " 6", " 7", " 8"}},
		{"changes six lines apart share a hunk", ten, strings.NewReplacer("2\n", "two\n", "9\n", "nine\n").Replace(ten),
			[]string{"@@ -1,10 +1,10 @@", " 1", "-2", "+two", " 3", " 4", " 5", " 6", " 7", " 8", "-9", "+nine", " 10"}},
		{"delete everything", "a\nb\n", "", []string{"@@ -1,2 +0,0 @@", "-a", "-b"}},
		{"new file", "", "a\n", []string{"@@ -0,0 +1 @@", "+a"}},
		// A CRLF file keeps its "\r" on each line (the pane shows it
		// escaped), so only the changed line differs...
		{"CRLF", "a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n",
			[]string{"@@ -1,3 +1,3 @@", " a\r", "-b\r", "+B\r", " c\r"}},
		// ...and turning it into LF changes every line, visibly.
		{"CRLF to LF", "a\r\nb\r\n", "a\nb\n", []string{"@@ -1,2 +1,2 @@", "-a\r", "-b\r", "+a", "+b"}},
		// A last line without a newline is a line like the others.
		{"no trailing newline", "a\nb\nc", "a\nb\nC", []string{"@@ -1,3 +1,3 @@", " a", " b", "-c", "+C"}},
		{"no trailing newline, appended to", "a\nb", "a\nb\nc", []string{"@@ -1,2 +1,3 @@", " a", " b", "+c"}},
		{"empty lines", "a\n\nb\n", "a\n\n\nb\n", []string{"@@ -1,3 +1,4 @@", " a", " ", "+", " b"}},
	} {
		if got, want := unified(c.a, c.b, 3), strings.Join(c.want, "\n"); got != want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, got, want)
		}
	}
	// No context: an empty range names the line before it, as diff -U0 does.
	if got, want := unified("a\nb\n", "a\nx\nb\n", 0), "@@ -1,0 +2 @@\n+x"; got != want {
		t.Errorf("-U0 insert: got %q, want %q", got, want)
	}
}

// checkHunks verifies that Unified's hunks describe a → b: every header
// names where its lines are in both sides, and the lines between hunks
// are the same in both.
func checkHunks(t *testing.T, a, b, out []string) {
	t.Helper()
	var ga, gb []string // a and b rebuilt from the hunks
	for i := 0; i < len(out); {
		h := out[i]
		as, ac, bs, bc := parseSpans(t, h)
		if ac == 0 {
			as++ // an empty range names the line before it
		}
		if bc == 0 {
			bs++
		}
		if len(ga) > as-1 || len(gb) > bs-1 || as-1-len(ga) != bs-1-len(gb) {
			t.Fatalf("hunk %q out of order (rebuilt %d, %d lines so far)", h, len(ga), len(gb))
		}
		ga = append(ga, a[len(ga):as-1]...)
		gb = append(gb, b[len(gb):bs-1]...)
		i++
		var ha, hb []string
		for ; i < len(out) && !strings.HasPrefix(out[i], "@@"); i++ {
			l := out[i]
			if l[0] != '+' {
				ha = append(ha, l[1:])
			}
			if l[0] != '-' {
				hb = append(hb, l[1:])
			}
		}
		if len(ha) != ac || len(hb) != bc {
			t.Fatalf("hunk %q holds %d and %d lines", h, len(ha), len(hb))
		}
		ga = append(ga, ha...)
		gb = append(gb, hb...)
	}
	if len(a)-len(ga) != len(b)-len(gb) {
		t.Fatalf("tails differ in length after the last hunk: %d vs %d", len(a)-len(ga), len(b)-len(gb))
	}
	ga = append(ga, a[len(ga):]...)
	gb = append(gb, b[len(gb):]...)
	if !slices.Equal(ga, a) || !slices.Equal(gb, b) {
		t.Fatalf("hunks %q rebuild\n%q → %q\nnot\n%q → %q", out, ga, gb, a, b)
	}
}

// parseSpans reads a hunk header: "@@ -start[,count] +start[,count] @@",
// where a missing count is one.
func parseSpans(t *testing.T, h string) (as, ac, bs, bc int) {
	t.Helper()
	f := strings.Fields(h)
	if len(f) != 4 || f[0] != "@@" || f[3] != "@@" {
		t.Fatalf("bad hunk header %q", h)
	}
	span := func(s string) (int, int) {
		start, count, ok := strings.Cut(s[1:], ",")
		n, err := strconv.Atoi(start)
		if err != nil {
			t.Fatalf("bad hunk header %q", h)
		}
		if !ok {
			return n, 1
		}
		c, err := strconv.Atoi(count)
		if err != nil {
			t.Fatalf("bad hunk header %q", h)
		}
		return n, c
	}
	as, ac = span(f[1])
	bs, bc = span(f[2])
	return as, ac, bs, bc
}

func TestUnifiedHunksRebuildBothSides(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"a", "b", "c", "d", "e"}
	for i := 0; i < 500; i++ {
		a := make([]string, r.IntN(30))
		for j := range a {
			a[j] = words[r.IntN(len(words))]
		}
		b := slices.Clone(a)
		for k := r.IntN(6); k > 0; k-- {
			p := r.IntN(len(b) + 1)
			switch {
			case r.IntN(2) == 0:
				b = slices.Insert(b, p, "new")
			case p < len(b):
				b = slices.Delete(b, p, p+1)
			}
		}
		for context := range 4 {
			checkHunks(t, a, b, Unified(a, b, context))
		}
	}
}

// distinct is n different lines, with every step-th one changed when
// changed is set.
func distinct(n, step int, changed bool) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "line " + strconv.Itoa(i)
		if changed && i%step == 0 {
			out[i] += " changed"
		}
	}
	return out
}

// equalLines counts the lines a script keeps.
func equalLines(s []Line) int {
	n := 0
	for _, l := range s {
		if l.Op == Equal {
			n++
		}
	}
	return n
}

// The library stops after about a hundred changed lines; asking it again
// about the rest still finds every change of a file with a few hundred.
func TestManyChangesStayMinimal(t *testing.T) {
	a, b := distinct(2000, 5, false), distinct(2000, 5, true)
	s := Script(a, b)
	if got, want := equalLines(s), 1600; got != want {
		t.Fatalf("%d lines kept, want %d", got, want)
	}
	checkHunks(t, a, b, Unified(a, b, 3))
}

// The search is bounded: with far more changes than a reader can follow
// it stops looking and shows the rest as replaced, exact but not minimal.
// If a new version of the library stopped bounding its search, this test
// would notice (and be slow): MaxLines would then have to do the bounding.
func TestLargeInputHitsTheCap(t *testing.T) {
	const n = 20_000
	a, b := distinct(n, 2, false), distinct(n, 2, true)
	s := Script(a, b)
	ga, gb := apply(s)
	if !slices.Equal(ga, a) || !slices.Equal(gb, b) {
		t.Fatal("the bounded script does not rebuild both sides")
	}
	refined := equalLines(s)
	if refined == 0 || refined >= n/2 {
		t.Fatalf("%d lines kept of %d in common: want some, and fewer than all (a bounded search)", refined, n/2)
	}
	checkHunks(t, a, b, Unified(a, b, 3))

	// Above MaxLines the library is asked only once: fewer lines found.
	big := MaxLines/2 + 1
	a, b = distinct(big, 2, false), distinct(big, 2, true)
	s = Script(a, b)
	if ga, gb := apply(s); !slices.Equal(ga, a) || !slices.Equal(gb, b) {
		t.Fatal("the script above MaxLines does not rebuild both sides")
	}
	if once := equalLines(s); once == 0 || once >= refined {
		t.Fatalf("above MaxLines %d lines kept, want some and fewer than the %d refined below it", once, refined)
	}
}

// Line is one line of an edit script (see Script).
type Line struct {
	Op   Op
	Text string
}

// Script returns the edit script turning a into b: the replacements
// lineDiffs finds, with the lines between them, so the tests can check
// them by applying them.
func Script(a, b []string) []Line {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := make([]Line, 0, max(len(a), len(b)))
	x := 0 // next line of a not yet in the script
	for _, d := range lineDiffs(a, b) {
		for ; x < d.Start; x++ {
			out = append(out, Line{Equal, a[x]})
		}
		for _, s := range a[d.Start:d.End] {
			out = append(out, Line{Delete, s})
		}
		for _, s := range b[d.ReplStart:d.ReplEnd] {
			out = append(out, Line{Insert, s})
		}
		x = d.End
	}
	for ; x < len(a); x++ {
		out = append(out, Line{Equal, a[x]})
	}
	return out
}
