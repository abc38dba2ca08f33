package main

import "github.com/infer-workspace/infer/internal/termtext"

// Text that infer did not write itself (conversation titles, tool output,
// model replies) can hold control characters. Written raw to a terminal,
// ESC and C1 sequences retitle it, clear it or recolour it, BEL rings, and a
// stray newline breaks a table. These helpers make such text visible and
// harmless before it is shown to a person, with the escapes of Go's %q
// (`\x1b`, `\a`, `\u009b`), which the rename confirmation already shows.
// They are the terminal UI's sanitizer (internal/termtext), so a string
// reads the same in both front ends; only the CRLF line end differs, kept
// here because headless text is a stream of lines a file may receive.
// Machine-readable outputs (JSON, AG-UI) never go through them: JSON already
// escapes control characters, and their bytes must stay exactly as stored.

// termSafeText escapes s for multi-line human-readable output: newlines,
// tabs and CRLF line ends stay, because they are the text's own layout;
// every other control character, every bidi control and every byte that is
// not valid UTF-8 is escaped.
func termSafeText(s string) string { return termtext.Stream(s) }

// termSafeLine escapes s for a single-line context such as a table cell or a
// one-line summary: newlines and tabs are escaped too, so the text cannot
// start a new row or shift the columns.
func termSafeLine(s string) string { return termtext.Line(s) }
