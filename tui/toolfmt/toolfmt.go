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
