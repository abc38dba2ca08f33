// Package redact is the simulated extension's rule for what a read must
// never return: the values of secret form fields and the text of secret
// editable regions. The in-memory browser (sim/fakebrowser) applies it in
// Go; the Chromium backend (sim/chrome) applies it in the page, through
// Script, which is built from the same patterns so the two cannot drift.
//
// What is secret:
//
//   - an input or textarea whose type is password, whose autocomplete
//     names a secret (current-password, new-password, one-time-code,
//     cc-number, cc-csc), or whose name, id or aria-label suggests one:
//     it contains pass, pwd, secret, token, otp, cvc, cvv or card, or has
//     a word such as pin, csc, ssn, 2fa or "api key" (words split at
//     punctuation and camelCase: "userPin", "api_key");
//   - an editable region (contenteditable other than "false", or role
//     textbox) whose attributes say the same, with all its content.
//
// What a read returns: a secret field's value is Placeholder. An element
// inside a secret region reads as Placeholder. Any other element reads as
// its innerText, with the text of each secret region (and a secret
// textarea's initial text, which an element that is not rendered shows
// through textContent) replaced by Placeholder wherever it appears, one
// line at a time. Text is removed by value rather than by position because
// the page cannot compute innerText with parts left out; the cost is that
// the same words elsewhere on the page are removed too.
package redact

import (
	_ "embed"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// Placeholder stands for a secret in what a read returns.
const Placeholder = "[redacted]"

// The rule's patterns, shared with the page script (see Script), so they
// are written in the common subset of RE2 and JavaScript regular
// expressions.
const (
	// substringPattern matches, case-insensitively, anywhere in a name,
	// id or aria-label: the bridge protocol's pattern plus pwd and cvv.
	substringPattern = `pass|pwd|secret|token|otp|cvc|cvv|card`
	// wordPattern matches whole words of a normalized attribute (see
	// splitPatterns): words too short or too common to match inside
	// others ("pin" is in "shipping", "key" in "keyword").
	wordPattern = `\b(pin|pins|pincode|csc|ssn|2fa|mfa|api key|apikey|access key|accesskey|private key|privatekey|security code|recovery code|seed phrase)\b`
	// nonWordPattern is what separates words once split.
	nonWordPattern = `[^a-z0-9]+`
)

// splitPatterns break camelCase and letter-digit joins into words before
// lower-casing: "userPIN" → "user PIN", "APIKey" → "API Key", "pin2" →
// "pin 2". Each is applied globally, in order.
var splitPatterns = [][2]string{
	{`([a-z0-9])([A-Z])`, "$1 $2"},
	{`([A-Z]+)([A-Z][a-z])`, "$1 $2"},
	{`([a-zA-Z])([0-9])`, "$1 $2"},
}

// secretAutocomplete are the autocomplete tokens that mark a field secret.
var secretAutocomplete = []string{"current-password", "new-password", "one-time-code", "cc-number", "cc-csc"}

// namingAttrs are the attributes whose text may say a field is secret.
var namingAttrs = []string{"name", "id", "aria-label"}

var (
	substringRE = regexp.MustCompile(`(?i)` + substringPattern)
	wordRE      = regexp.MustCompile(wordPattern)
	nonWordRE   = regexp.MustCompile(nonWordPattern)
	splitREs    = func() []*regexp.Regexp {
		var out []*regexp.Regexp
		for _, p := range splitPatterns {
			out = append(out, regexp.MustCompile(p[0]))
		}
		return out
	}()
)

// Attrs looks up an element's attribute by name.
type Attrs func(name string) (value string, ok bool)

// SecretAttrs reports whether an element's attributes mark its value or
// text as secret. Callers apply it to inputs, textareas and editable
// regions (see EditableRegion); on other elements it means nothing.
func SecretAttrs(get Attrs) bool {
	if v, _ := get("type"); strings.EqualFold(strings.TrimSpace(v), "password") {
		return true
	}
	// Autocomplete may carry several tokens ("section-login
	// current-password"); any secret one counts.
	ac, _ := get("autocomplete")
	for _, tok := range strings.Fields(strings.ToLower(ac)) {
		if slices.Contains(secretAutocomplete, tok) {
			return true
		}
	}
	for _, key := range namingAttrs {
		if v, ok := get(key); ok && suggestsSecret(v) {
			return true
		}
	}
	return false
}

// suggestsSecret applies the substring and word patterns to one
// attribute's text.
func suggestsSecret(v string) bool {
	if substringRE.MatchString(v) {
		return true
	}
	return wordRE.MatchString(normalize(v))
}

// normalize splits v into lower-case words separated by single spaces.
func normalize(v string) string {
	for i, re := range splitREs {
		v = re.ReplaceAllString(v, splitPatterns[i][1])
	}
	return strings.TrimSpace(nonWordRE.ReplaceAllString(strings.ToLower(v), " "))
}

// EditableRegion reports whether an element is an editable region whose
// text SecretAttrs may mark secret: contenteditable with any value but
// "false" (an unknown value counts, to err on the safe side), or an ARIA
// textbox, which scripts build out of plain elements.
func EditableRegion(get Attrs) bool {
	if v, ok := get("contenteditable"); ok && !strings.EqualFold(strings.TrimSpace(v), "false") {
		return true
	}
	role, _ := get("role")
	return slices.Contains(strings.Fields(strings.ToLower(role)), "textbox")
}

// RemoveAll replaces every occurrence in text of each line of the secrets
// with Placeholder. Lines are trimmed, since a region's text is laid out
// with its surroundings in text; empty ones are skipped; longer ones go
// first, so that a line containing a shorter one is removed whole.
func RemoveAll(text string, secrets []string) string {
	var lines []string
	seen := map[string]bool{}
	for _, s := range secrets {
		for _, line := range strings.Split(s, "\n") {
			if line = strings.TrimSpace(line); line != "" && line != Placeholder && !seen[line] {
				seen[line] = true
				lines = append(lines, line)
			}
		}
	}
	slices.SortStableFunc(lines, func(a, b string) int { return len(b) - len(a) })
	for _, line := range lines {
		text = strings.ReplaceAll(text, line, Placeholder)
	}
	return text
}

//go:embed rule.js
var ruleJS string

// Script is a JavaScript expression that evaluates to the rule for a page:
// an object with secretAttrs(el), editableRegion(el) and removeAll(text,
// secrets), each doing what the Go function of the same name does, built
// from the same patterns.
func Script() string {
	data, err := json.Marshal(map[string]any{
		"placeholder":  Placeholder,
		"substring":    substringPattern,
		"word":         wordPattern,
		"nonWord":      nonWordPattern,
		"split":        splitPatterns,
		"autocomplete": secretAutocomplete,
		"naming":       namingAttrs,
	})
	if err != nil {
		panic(err) // static data
	}
	return "(" + strings.TrimSpace(ruleJS) + ")(" + string(data) + ")"
}
