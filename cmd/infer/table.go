package main

import (
	"io"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// table lines up columns by the cells a terminal gives each character.
// text/tabwriter counts runes, so a 📌 or a CJK word (two cells, one rune)
// pushed the rest of its row out of line.
type table struct {
	rows [][]string
}

// add appends a row; cells should already be safe to print.
func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// write prints the rows with two spaces between columns; the last column
// is not padded, so no line ends in spaces.
func (t *table) write(w io.Writer) error {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-ansi.StringWidth(c)+2))
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
