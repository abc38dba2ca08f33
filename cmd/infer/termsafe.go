package main

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text that infer did not write itself (conversation titles, tool output,
// model replies) can hold control characters. Written raw to a terminal,
// ESC and C1 sequences retitle it, clear it or recolour it, BEL rings, and a
// stray newline breaks a table. These helpers make such text visible and
// harmless before it is shown to a person, using the same escapes as Go's
// %q (`\x1b`, `\a`, `\u009b`), which the rename confirmation already shows.
// Machine-readable outputs (JSON, AG-UI) never go through them: JSON already
// escapes control characters, and their bytes must stay exactly as stored.

// termSafeText escapes s for multi-line human-readable output: newlines and
// tabs stay, because they are the text's own layout; every other control
// character and every byte that is not valid UTF-8 is escaped.
func termSafeText(s string) string { return escapeControls(s, true) }

// termSafeLine escapes s for a single-line context such as a table cell or a
// one-line summary: newlines and tabs are escaped too, so the text cannot
// start a new row or shift the columns.
func termSafeLine(s string) string { return escapeControls(s, false) }

// escapeControls replaces each control character (C0, DEL, C1) in s with its
// %q escape, except newline and tab when keepLayout is set, and each byte of
// invalid UTF-8 with \xNN. Everything else, including non-ASCII letters,
// emoji and CJK, is copied unchanged; s itself is returned when nothing
// needs escaping, which is the usual case.
func escapeControls(s string, keepLayout bool) string {
	if !needsEscaping(s, keepLayout) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			// A lone byte, not the character U+FFFD: show the byte itself,
			// so what was stored can still be told apart.
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepsLineEnd(s, i, keepLayout):
			b.WriteString("\r\n")
			size = 2
		case mustEscape(r, keepLayout):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1]) // drop the quotes: '\x1b' → \x1b
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscaping reports whether escapeControls would change s, so the
// common clean string is returned without copying.
func needsEscaping(s string, keepLayout bool) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if keepsLineEnd(s, i, keepLayout) {
			size = 2
		} else if (r == utf8.RuneError && size == 1) || mustEscape(r, keepLayout) {
			return true
		}
		i += size
	}
	return false
}

// keepsLineEnd reports whether s has a CRLF line end at i that layout-
// keeping text shows as it is: text from Windows tools and HTTP bodies ends
// its lines so, and escaping every \r there would only add noise. A lone
// \r is still escaped, since it returns to the start of the line and lets
// what follows overwrite what the person already saw.
func keepsLineEnd(s string, i int, keepLayout bool) bool {
	return keepLayout && strings.HasPrefix(s[i:], "\r\n")
}

// mustEscape reports whether the valid rune r has to be escaped: any
// control character (unicode.IsControl is exactly C0, DEL and C1), except
// newline and tab when the text keeps its layout.
func mustEscape(r rune, keepLayout bool) bool {
	if keepLayout && (r == '\n' || r == '\t') {
		return false
	}
	return unicode.IsControl(r)
}
