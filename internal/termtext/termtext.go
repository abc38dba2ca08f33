// Package termtext makes text that infer did not write itself safe to show
// on a terminal: tool output and arguments, model replies, page titles and
// URLs, provider errors, anything a browser panel sent.
//
// A terminal acts on some of the bytes it is given instead of showing
// them. An ESC or C1 control starts a sequence (CSI, OSC, DCS, APC, PM,
// SOS) that can conceal text, recolour it, retitle the window, write the
// clipboard or clear the screen; a carriage return moves the cursor back
// so what follows overwrites what was shown; bidi controls reorder the
// characters around them, so a command reads differently from what runs.
// Every such character is shown here as the escape Go's %q would write
// (`\x1b`, `\a`, `\r`, `\u009b`, `\u202e`), and every byte that is not
// UTF-8 as `\xNN`. Nothing is dropped: the introducer of a sequence is
// escaped and the rest stays as ordinary text, so the person sees that
// something was there and what it was (this matters most when they are
// asked to approve a command). Ordinary text, including non-ASCII letters,
// CJK, emoji and their joiners, comes through byte for byte, and a string
// that needs no change is returned as it is, without copying.
//
// The forms differ only in the layout characters they keep:
//
//   - [Text] keeps newline and tab, for text drawn over several lines in
//     the terminal UI; every carriage return is shown.
//   - [Line] keeps neither, for one row: a title, a URL, a table cell.
//   - [Stream] is Text that also keeps a CRLF line end, for text written
//     straight to the terminal line by line (headless output).
//
// Output that a program reads (JSON, AG-UI) must never go through here: it
// escapes control characters its own way and its bytes must stay as stored.
package termtext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// form says which layout characters a string keeps.
type form int

const (
	formText   form = iota // newline and tab kept
	formLine               // nothing kept
	formStream             // newline, tab and CRLF kept
)

// Text returns s safe to draw as multi-line text: newline and tab stay,
// because they are the text's own layout, and every other control
// character (a carriage return too), every bidi control and every byte
// that is not UTF-8 is shown escaped.
//
// A carriage return is escaped even before a newline: inside a drawn frame
// it would move the cursor to the frame's first column, and in a command
// waiting for approval it is a character the shell will see.
func Text(s string) string { return escape(s, formText) }

// Line returns s safe to draw as a single row: like Text, but newline and
// tab are escaped too, so the text cannot start a new row or shift the
// columns after it.
func Line(s string) string { return escape(s, formLine) }

// Stream returns s safe to write to a terminal as lines of output: like
// Text, but a CRLF line end is kept as it is. Written to a terminal it only
// ends the line, and text from Windows tools or HTTP bodies ends every line
// so; escaping each one would only add noise, and output redirected to a
// file keeps its bytes. A lone carriage return is still escaped.
func Stream(s string) string { return escape(s, formStream) }

// escape is the one implementation behind the three forms.
func escape(s string, f form) string {
	start := firstUnsafe(s, f)
	if start < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:start])
	for i := start; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			// A lone byte, not the character U+FFFD: show the byte itself,
			// so what was stored can still be told apart.
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[s[i]>>4])
			b.WriteByte(hexDigits[s[i]&0xf])
		case f == formStream && isCRLF(s, i):
			b.WriteString("\r\n")
			size = 2
		case mustEscape(r, f):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1]) // drop the quotes: '\x1b' → \x1b
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

const hexDigits = "0123456789abcdef"

// firstUnsafe returns the index of the first byte escape would change, or
// -1, so the common clean string costs one read and no allocation.
func firstUnsafe(s string, f form) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++ // printable ASCII, the bulk of any text
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return i
		case f == formStream && isCRLF(s, i):
			size = 2
		case mustEscape(r, f):
			return i
		}
		i += size
	}
	return -1
}

// isCRLF reports whether s has a CRLF line end at i.
func isCRLF(s string, i int) bool { return strings.HasPrefix(s[i:], "\r\n") }

// mustEscape reports whether the valid rune r has to be shown escaped in
// form f: any control character (unicode.IsControl is exactly C0, DEL and
// C1, which holds ESC and the 8-bit CSI, OSC, DCS, APC, PM and SOS), except
// newline and tab where the form keeps them, and any bidi control.
func mustEscape(r rune, f form) bool {
	if r == '\n' || r == '\t' {
		return f == formLine
	}
	return unicode.IsControl(r) || isBidiControl(r)
}

// isBidiControl reports whether r is one of the characters that change the
// direction of the text around them (the embeddings, overrides and isolates
// U+202A–U+202E and U+2066–U+2069, the marks U+200E and U+200F, and the
// Arabic letter mark U+061C). They are invisible, and they let "rm -rf x"
// be drawn as something else, which is why they are escaped even though a
// terminal does not act on them as controls.
func isBidiControl(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
