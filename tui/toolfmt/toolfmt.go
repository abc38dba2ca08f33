// Package toolfmt describes tool calls for people: a short summary of the
// arguments for a chat row, the fields a pretty view needs, a one-line
// result and a compact duration.
//
// Argument names follow the session's tool schemas (path, command, url,
// selector, text, old_string, new_string, content, pattern).
package toolfmt

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// Args decodes a call's raw JSON arguments; anything that is not a JSON
// object yields nil.
func Args(raw string) map[string]any {
	var m map[string]any
	if json.Unmarshal([]byte(raw), &m) != nil {
		return nil
	}
	return m
}

// Str returns a string argument, or "".
func Str(args map[string]any, key string) string {
	if s, ok := args[key].(string); ok {
		return s
	}
	return ""
}

// Bool returns a boolean argument.
func Bool(args map[string]any, key string) bool {
	b, _ := args[key].(bool)
	return b
}

// Short summarises a call's arguments in one line: the URL of a
// navigation, the command of a Bash call, the path of a file tool.
func Short(name, raw string) string {
	a := Args(raw)
	if a == nil {
		return OneLine(raw)
	}
	switch name {
	case "Bash":
		return OneLine(Str(a, "command"))
	case "Network":
		// A confined command's request to reach a host (tools.NetworkTool).
		return OneLine(Str(a, "host") + " for " + Str(a, "command"))
	case "BrowserNavigate":
		return Str(a, "url")
	case "BrowserClick":
		return Str(a, "selector")
	case "BrowserType":
		s := fmt.Sprintf("%q into %s", Str(a, "text"), Str(a, "selector"))
		if Bool(a, "press_enter") {
			s += " ⏎"
		}
		return OneLine(s)
	case "BrowserRead":
		if sel := Str(a, "selector"); sel != "" {
			return sel
		}
		return "whole page"
	case "BrowserScreenshot", "BrowserTabs":
		return ""
	case "Read", "Write", "Edit", "Tree":
		return Str(a, "path")
	case "Grep":
		s := Str(a, "pattern")
		if p := Str(a, "path"); p != "" {
			s += " in " + p
		}
		return OneLine(s)
	}
	// Unknown tools: the string arguments in key order.
	keys := make([]string, 0, len(a))
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		if s, ok := a[k].(string); ok && s != "" {
			parts = append(parts, k+"="+s)
		}
	}
	return OneLine(strings.Join(parts, " "))
}

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

// Pretty indents JSON arguments for reading; anything else is returned as
// it is.
func Pretty(raw string) string {
	var v any
	if json.Unmarshal([]byte(raw), &v) != nil {
		return raw
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return raw
	}
	return string(b)
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
