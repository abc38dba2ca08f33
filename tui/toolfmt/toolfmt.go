// Package toolfmt fits tool calls to terminal rows: a call's one-line
// summary (which each tool gives in session/tools), a result's first
// line, summaries cut to a width, and a compact duration.
package toolfmt

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/session/tools"
)

// Short summarises a call's arguments in one line, as the call's tool
// describes itself (tools.Show): the URL of a navigation, the command of
// a Bash call, the path of a file tool.
func Short(name, raw string) string { return tools.Show(name, raw).Summary }

// OneLine collapses whitespace so text fits a single row.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Fit shortens a one-line summary to at most w cells at a sensible place.
// Paths lose their folders first ("…/20260902-140305.png"), since the file
// name is what tells one screenshot from another; then the line is cut
// after a whole word. Only a word longer than half the room is cut inside.
// Styled text is not expected: summaries are styled after fitting.
func Fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	words := strings.Split(s, " ")
	shortened := false
	for i, word := range words {
		if b, ok := shortPath(word); ok {
			words[i], shortened = b, true
		}
	}
	if shortened {
		s = strings.Join(words, " ")
		if ansi.StringWidth(s) <= w {
			return s
		}
	}
	if w < 2 {
		return ansi.Truncate(s, w, "")
	}
	head := ansi.Truncate(s, w-1, "")
	if i := strings.LastIndexByte(head, ' '); i > 0 && ansi.StringWidth(head[:i]) >= w/2 {
		return strings.TrimRight(head[:i], " ") + " …"
	}
	return ansi.Truncate(s, w, "…")
}

// shortPath turns a word that is a file path (folders and a name, maybe
// in brackets or before a full stop) into "…/name"; URLs are left alone.
func shortPath(word string) (string, bool) {
	core := strings.TrimLeft(word, "(\"'“‘[<")
	lead := word[:len(word)-len(core)]
	trimmed := strings.TrimRight(core, ").,;:\"'”’]>")
	tail := core[len(trimmed):]
	slash := strings.LastIndexByte(trimmed, '/')
	if strings.Contains(trimmed, "://") || slash <= 0 || slash == len(trimmed)-1 || strings.HasPrefix(trimmed, "…/") {
		return word, false
	}
	return lead + "…/" + trimmed[slash+1:] + tail, true
}

// FirstLine is the first non-empty line of a result, for a collapsed row.
func FirstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}

// Duration formats a tool's run time compactly: 820ms, 4.2s, 1m05s.
func Duration(d time.Duration) string {
	switch {
	case d < 0:
		return ""
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	default:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
}
