package sandbox

import (
	"strings"
)

// seatbeltProfile turns p into a sandbox-exec profile. Seatbelt takes the
// last matching rule, so the order is the policy, as with bubblewrap.
// Paths are resolved because macOS's /tmp and /var are links to /private.
func seatbeltProfile(p Policy) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(allow default)\n")
	b.WriteString("(deny file-write*)\n")
	b.WriteString("(allow file-write*\n")
	b.WriteString("  (literal \"/dev/null\") (literal \"/dev/zero\") (literal \"/dev/dtracehelper\")\n")
	b.WriteString("  (regex #\"^/dev/tty\") (regex #\"^/dev/fd/\")")
	if p.TempDir != "" && !p.ReadOnly {
		b.WriteString("\n  (subpath " + sbQuote(resolved(p.TempDir)) + ")")
	}
	if !p.ReadOnly && writableRoot(resolved(p.Root), p.Home) {
		b.WriteString("\n  (subpath " + sbQuote(resolved(p.Root)) + ")")
		for _, w := range existing(p.Writable) {
			b.WriteString("\n  (subpath " + sbQuote(resolved(w)) + ")")
		}
	}
	b.WriteString(")\n")
	b.WriteString("(deny file-write*")
	for _, pp := range ProtectedPaths(resolved(p.Root)) {
		b.WriteString("\n  (subpath " + sbQuote(pp) + ")")
	}
	b.WriteString(")\n")
	if deny := existing(append(append([]string(nil), p.DenyRead...), hostSockets...)); len(deny) > 0 {
		b.WriteString("(deny file-read* file-write*")
		for _, d := range deny {
			b.WriteString("\n  (subpath " + sbQuote(resolved(d)) + ")")
		}
		b.WriteString(")\n")
	}
	if !p.Network {
		b.WriteString("(deny network*)\n")
	}
	return b.String()
}

// sbQuote writes s as a Seatbelt string literal.
func sbQuote(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}
