package fakebrowser

import (
	"regexp"
	"strings"

	"golang.org/x/net/html"
)

// redacted replaces the value of a secret input wherever the fake browser
// would otherwise hand it out (read, screenshot).
const redacted = "[redacted]"

// secretNamePattern is the bridge protocol's pattern for the name, id and
// aria-label of inputs whose value must never be returned.
var secretNamePattern = regexp.MustCompile(`(?i)pass|secret|token|otp|cvc|card`)

// secretAutocomplete are the autocomplete tokens that mark an input secret.
var secretAutocomplete = map[string]bool{
	"current-password": true,
	"new-password":     true,
	"one-time-code":    true,
}

// isSecretInput applies the protocol's redaction rule to an element. It
// covers input elements only, exactly as the contract words it. The type
// attribute is read raw (not through inputType) so that an unusual spelling
// such as "PASSWORD " is still caught. Autocomplete may carry several tokens
// ("section-login current-password"); any secret token counts, which
// includes the contract's exact values.
func isSecretInput(n *html.Node) bool {
	if !is(n, "input") {
		return false
	}
	if strings.EqualFold(strings.TrimSpace(attrOr(n, "type")), "password") {
		return true
	}
	for _, tok := range strings.Fields(strings.ToLower(attrOr(n, "autocomplete"))) {
		if secretAutocomplete[tok] {
			return true
		}
	}
	for _, key := range []string{"name", "id", "aria-label"} {
		if v, ok := attr(n, key); ok && secretNamePattern.MatchString(v) {
			return true
		}
	}
	return false
}
