package main

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A pinned conversation's 📌 takes two cells: the columns after it stay
// in line with the other rows (tabwriter counted it as one).
func TestConversationsListAlignsThePin(t *testing.T) {
	t.Parallel()
	_, older, _ := seedConversations(t)
	if _, _, code := infer(t, "conversations", "pin", older); code != 0 {
		t.Fatal("pin failed")
	}
	out, _, code := infer(t, "conversations", "list")
	if code != 0 {
		t.Fatalf("list exited %d:\n%s", code, out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "📌") {
		t.Fatalf("want a header, a pinned row and another:\n%s", out)
	}
	col := func(line, word string) int {
		i := strings.Index(line, word)
		if i < 0 {
			t.Fatalf("%q lacks %q", line, word)
		}
		return ansi.StringWidth(line[:i])
	}
	updated := col(lines[0], "UPDATED")
	for _, l := range lines[1:] {
		// UPDATED is a relative time such as "just now" or "2m ago"; it
		// starts where its heading does, pinned or not.
		fields := strings.Fields(l)
		when := fields[1] // ID, then UPDATED
		if strings.Contains(l, "📌") {
			when = fields[2] // ID, PIN, then UPDATED
		}
		if got := col(l, when); got != updated {
			t.Fatalf("row %q: UPDATED at cell %d, heading at %d\n%s", l, got, updated, out)
		}
	}
}

func TestTableCountsCells(t *testing.T) {
	t.Parallel()
	var tb table
	tb.add("A", "B", "C")
	tb.add("界界", "x", "last")
	tb.add("a", "📌", "z")
	var b strings.Builder
	if err := tb.write(&b); err != nil {
		t.Fatal(err)
	}
	want := "A     B   C\n界界  x   last\na     📌  z\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}
