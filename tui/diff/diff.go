// Package diff shows what an Edit or Write would change, as a unified diff
// a person can read at a glance in the approvals pane.
//
// It is a thin layer over github.com/aymanbagabas/go-udiff (a copy of the
// diff package gopls uses): the library finds the changed lines and draws
// the hunks; this package speaks in lines without their newline, as the
// pane shows them, and bounds the work (see lineDiffs and MaxLines), so a
// huge rewrite costs bounded time and memory and still gives an exact,
// if not the smallest, diff.
package diff

import (
	"fmt"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"github.com/aymanbagabas/go-udiff/lcs"
)

// Op is what happens to a line.
type Op byte

// Line operations, as unified diffs spell them.
const (
	Equal  Op = ' '
	Delete Op = '-'
	Insert Op = '+'
)

// MaxLines is the most lines (both sides together) whose diff is refined
// (see lineDiffs); above it the library is asked once, which bounds the
// search at about a hundred passes over the lines. The approvals pane
// draws the diff on every frame, and the TUI reads at most 1 MiB of a
// Write's target, so this lets a full-size file of ordinary lines be
// refined while one of tiny lines cannot stall the screen.
const MaxLines = 100_000

// refineRounds bounds how often lineDiffs asks the library again about
// the stretches it replaced wholesale.
const refineRounds = 10

// lineDiffs returns the replacements turning a into b, in order, as line
// ranges.
//
// The library stops searching after about a hundred changed lines and
// shows the stretch between what it found from each end as replaced. Asked
// again about that stretch alone, it finds the next hundred at each end,
// so a few rounds find about as many changes as a reader can follow (the
// hand-written diff this replaced stopped at a thousand) while the work
// stays a bounded number of passes over the lines. A stretch that comes
// back whole has nothing more to find and is not asked about again.
func lineDiffs(a, b []string) []lcs.Diff {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	rounds := 1 + refineRounds
	if len(a)+len(b) > MaxLines {
		rounds = 1
	}
	type stretch struct {
		lcs.Diff
		done bool // nothing more to find in it
	}
	ds := []stretch{{Diff: lcs.Diff{End: len(a), ReplEnd: len(b)}}}
	for range rounds {
		again := false
		var next []stretch
		for _, d := range ds {
			if d.done || d.End == d.Start || d.ReplEnd == d.ReplStart {
				// Only deleted or only inserted lines have nothing in common.
				next = append(next, stretch{d.Diff, true})
				continue
			}
			sub := lcs.DiffLines(a[d.Start:d.End], b[d.ReplStart:d.ReplEnd])
			if len(sub) == 1 && sub[0] == (lcs.Diff{End: d.End - d.Start, ReplEnd: d.ReplEnd - d.ReplStart}) {
				next = append(next, stretch{d.Diff, true})
				continue
			}
			again = true
			for _, s := range sub {
				s.Start += d.Start
				s.End += d.Start
				s.ReplStart += d.ReplStart
				s.ReplEnd += d.ReplStart
				next = append(next, stretch{Diff: s})
			}
		}
		ds = next
		if !again {
			break
		}
	}
	out := make([]lcs.Diff, len(ds))
	for i, d := range ds {
		out[i] = d.Diff
	}
	return out
}

// SplitLines splits text into lines; a final newline does not add an
// empty line, and "" has no lines. A "\r" before a newline stays on its
// line, so a CRLF file shows (escaped) why each of its lines differs from
// an LF one.
func SplitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// Unified renders the differences between a and b as unified-diff hunks
// ("@@ -1,3 +1,4 @@" followed by " ", "-" and "+" lines) with context
// lines around each change; changes at most 2×context lines apart share a
// hunk. Identical inputs give no lines. The lines must hold no newline
// (SplitLines gives such lines).
//
// Unlike diff(1) there are no file headers and no "\ No newline at end of
// file": the lines are shown, not applied.
func Unified(a, b []string, context int) []string {
	ds := lineDiffs(a, b)
	if len(ds) == 0 {
		return nil
	}
	// The library draws hunks from text and byte offsets into it. Each
	// side becomes text whose every line ends in a newline, so each edit
	// covers whole lines and a final newline, which SplitLines dropped,
	// cannot show up as a change of the last line.
	before := joinLines(a)
	at := make([]int, len(a)+1) // at[i]: where line i starts in before
	for i, l := range a {
		at[i+1] = at[i] + len(l) + 1
	}
	edits := make([]udiff.Edit, len(ds))
	for i, d := range ds {
		edits[i] = udiff.Edit{Start: at[d.Start], End: at[d.End], New: joinLines(b[d.ReplStart:d.ReplEnd])}
	}
	u, err := udiff.ToUnifiedDiff("", "", before, edits, context)
	if err != nil {
		// Not expected: the ranges come from the library, in order and
		// inside before. Should it happen, show every line replaced (still
		// exact) rather than a wrong diff, or a crash during an approval.
		u, _ = udiff.ToUnifiedDiff("", "", before, []udiff.Edit{{End: len(before), New: joinLines(b)}}, context)
	}
	var out []string
	for _, h := range u.Hunks {
		var aCount, bCount int
		for _, l := range h.Lines {
			if l.Kind != udiff.Insert {
				aCount++
			}
			if l.Kind != udiff.Delete {
				bCount++
			}
		}
		out = append(out, fmt.Sprintf("@@ -%s +%s @@", span(h.FromLine, aCount), span(h.ToLine, bCount)))
		for _, l := range h.Lines {
			out = append(out, string(opOf(l.Kind))+strings.TrimSuffix(l.Content, "\n"))
		}
	}
	return out
}

// joinLines is the text whose lines are ls, each ending in a newline.
func joinLines(ls []string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

// opOf maps the library's line kinds to the marks unified diffs use.
func opOf(k udiff.OpKind) Op {
	switch k {
	case udiff.Delete:
		return Delete
	case udiff.Insert:
		return Insert
	default:
		return Equal
	}
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
