// Package diff computes line diffs for the approvals pane: what an Edit or
// Write would change, as a unified diff a person can read at a glance.
//
// It uses Myers' O((N+M)·D) algorithm, keeping only the diagonals each step
// touched, and gives up on very different inputs (more than MaxEdits
// changed lines) by showing everything as replaced, so a huge rewrite
// costs bounded time and memory.
package diff

import (
	"fmt"
	"strings"
)

// Op is what happens to a line.
type Op byte

// Line operations, as unified diffs spell them.
const (
	Equal  Op = ' '
	Delete Op = '-'
	Insert Op = '+'
)

// Line is one line of an edit script.
type Line struct {
	Op   Op
	Text string
}

// MaxEdits bounds the search; beyond it the diff is "replace everything".
const MaxEdits = 1000

// Script returns the edit script turning a into b.
func Script(a, b []string) []Line {
	n, m := len(a), len(b)
	if n == 0 && m == 0 {
		return nil
	}
	offset := n + m + 1
	v := make([]int, 2*offset+1)
	var trace [][]int
	for d := 0; d <= n+m; d++ {
		if d > MaxEdits {
			return replaceAll(a, b)
		}
		snap := make([]int, 2*d+1)
		copy(snap, v[offset-d:offset+d+1])
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[offset+k-1] < v[offset+k+1]) {
				x = v[offset+k+1]
			} else {
				x = v[offset+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[offset+k] = x
			if x >= n && y >= m {
				return backtrack(a, b, trace, d)
			}
		}
	}
	return replaceAll(a, b)
}

// backtrack walks the recorded diagonals from the end to the start.
func backtrack(a, b []string, trace [][]int, D int) []Line {
	get := func(d, k int) int { return trace[d][k+d] }
	var rev []Line
	x, y := len(a), len(b)
	for d := D; d > 0; d-- {
		k := x - y
		var prevK int
		if k == -d || (k != d && get(d, k-1) < get(d, k+1)) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := get(d, prevK)
		prevY := prevX - prevK
		// The edit moved from (prevX, prevY) one step down (insert) or
		// right (delete); the rest of the way to (x, y) is a snake.
		midX := prevX
		if prevK == k-1 {
			midX++
		}
		for x > midX {
			rev = append(rev, Line{Equal, a[x-1]})
			x--
			y--
		}
		if prevK == k+1 {
			rev = append(rev, Line{Insert, b[y-1]})
		} else {
			rev = append(rev, Line{Delete, a[x-1]})
		}
		x, y = prevX, prevY
	}
	for x > 0 && y > 0 {
		rev = append(rev, Line{Equal, a[x-1]})
		x--
		y--
	}
	out := make([]Line, len(rev))
	for i, l := range rev {
		out[len(rev)-1-i] = l
	}
	return out
}

func replaceAll(a, b []string) []Line {
	out := make([]Line, 0, len(a)+len(b))
	for _, s := range a {
		out = append(out, Line{Delete, s})
	}
	for _, s := range b {
		out = append(out, Line{Insert, s})
	}
	return out
}

// SplitLines splits text into lines; a final newline does not add an
// empty line, and "" has no lines.
func SplitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// Unified renders the differences between a and b as unified-diff hunks
// ("@@ -1,3 +1,4 @@" followed by " ", "-" and "+" lines) with context
// lines around each change. Identical inputs give no lines.
func Unified(a, b []string, context int) []string {
	script := Script(a, b)
	var changes []int
	for i, l := range script {
		if l.Op != Equal {
			changes = append(changes, i)
		}
	}
	if len(changes) == 0 {
		return nil
	}
	// Line numbers (1-based) of each script entry in a and b.
	aLine := make([]int, len(script)+1)
	bLine := make([]int, len(script)+1)
	ai, bi := 1, 1
	for i, l := range script {
		aLine[i], bLine[i] = ai, bi
		if l.Op != Insert {
			ai++
		}
		if l.Op != Delete {
			bi++
		}
	}
	aLine[len(script)], bLine[len(script)] = ai, bi

	var out []string
	for start := 0; start < len(changes); {
		end := start
		for end+1 < len(changes) && changes[end+1]-changes[end] <= 2*context+1 {
			end++
		}
		from := max(changes[start]-context, 0)
		to := min(changes[end]+context+1, len(script))
		var aCount, bCount int
		for _, l := range script[from:to] {
			if l.Op != Insert {
				aCount++
			}
			if l.Op != Delete {
				bCount++
			}
		}
		out = append(out, fmt.Sprintf("@@ -%s +%s @@", span(aLine[from], aCount), span(bLine[from], bCount)))
		for _, l := range script[from:to] {
			out = append(out, string(l.Op)+l.Text)
		}
		start = end + 1
	}
	return out
}

// span formats a hunk range the way diff(1) does: an empty range names
// the line before it.
func span(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start-1)
	}
	if count == 1 {
		return fmt.Sprintf("%d", start)
	}
	return fmt.Sprintf("%d,%d", start, count)
}
