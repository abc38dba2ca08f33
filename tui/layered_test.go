package tui

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// The compositor draws a dialog over rows of wide runes and styled text:
// every row stays exactly the screen's width, the box is whole, and what
// the box does not cover keeps its text and its style.
func TestLayeredOverlaysKeepRowsExact(t *testing.T) {
	t.Parallel()
	const w, h = 21, 5
	red := lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	row := red.Render(strings.Repeat("界", 10)) + "x"
	base := strings.TrimSuffix(strings.Repeat(row+"\n", h), "\n")
	box := "┌─┐\n│a│\n└─┘"
	out := layered(base, w, h, lipgloss.NewLayer(box).X(3).Y(1))
	rows := strings.Split(out, "\n")
	if len(rows) != h {
		t.Fatalf("%d rows, want %d", len(rows), h)
	}
	for i, r := range rows {
		if n := ansi.StringWidth(r); n != w {
			t.Fatalf("row %d is %d cells, want %d: %q", i, n, w, ansi.Strip(r))
		}
	}
	plain := strings.Split(ansi.Strip(out), "\n")
	for i, want := range []string{"┌─┐", "│a│", "└─┘"} {
		if got := ansi.Cut(plain[i+1], 3, 6); got != want {
			t.Fatalf("row %d under the box: %q, want %q", i+1, got, want)
		}
	}
	if plain[0] != ansi.Strip(row) || !strings.HasSuffix(plain[2], "界x") {
		t.Fatalf("uncovered text lost: %q / %q", plain[0], plain[2])
	}
	if !strings.Contains(rows[2][strings.LastIndex(rows[2], "│"):], "\x1b[") {
		t.Fatalf("the base's style is lost right of the box: %q", rows[2])
	}
	if rows[0] != row || rows[4] != row {
		t.Fatal("rows the box does not reach are changed")
	}
	if got := layered(base, w, h); got != base {
		t.Fatal("with no layers the base is returned untouched")
	}
}
