package diff

import (
	"math/rand/v2"
	"slices"
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
