package config

import (
	"strings"
	"unicode"
)

// Redacted replaces a secret-looking word in RedactSecrets' output.
const Redacted = "[redacted]"

// RedactSecrets returns s with every word that looks like a key or token
// (by the test configuration messages use, see looksLikeSecret) replaced
// by Redacted. It is for text that is logged or shown although it may
// quote a credential, such as a tool call's arguments
// (`gh api -H "Authorization: token ghp_…"`). Words end at whitespace,
// quotes, backslashes and the punctuation of JSON, headers, query strings
// and assignments, so a token inside any of them is found on its own;
// "/", "+", "." and "-" stay inside words because tokens contain them.
func RedactSecrets(s string) string {
	var b strings.Builder
	start := -1 // start of the current word, -1 between words
	flush := func(end int) {
		if start < 0 {
			return
		}
		if w := s[start:end]; looksLikeSecret(w) {
			b.WriteString(Redacted)
		} else {
			b.WriteString(w)
		}
		start = -1
	}
	for i, r := range s {
		if unicode.IsSpace(r) || strings.ContainsRune("\"'`\\,:;=&?(){}[]<>|", r) {
			flush(i)
			b.WriteRune(r)
			continue
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(s))
	return b.String()
}
