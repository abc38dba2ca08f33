package redact

import (
	"strings"
	"testing"
)

// attrs makes an Attrs from name=value pairs.
func attrs(kv ...string) Attrs {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestSecretAttrs(t *testing.T) {
	secret := [][]string{
		{"type", "password"}, {"type", " PASSWORD "},
		{"autocomplete", "current-password"}, {"autocomplete", "section-a new-password"},
		{"autocomplete", "one-time-code"}, {"autocomplete", "cc-number"}, {"autocomplete", "CC-CSC"},
		{"name", "password"}, {"name", "passwd"}, {"name", "pwd"}, {"name", "user_pwd"}, {"name", "pass"},
		{"id", "mySecretField"}, {"name", "api_token"}, {"name", "otpcode"}, {"aria-label", "Card number"},
		{"name", "cvv"}, {"name", "cvc2"}, {"name", "pin"}, {"id", "userPin"}, {"name", "PIN"},
		{"aria-label", "Enter your PIN"}, {"name", "pin_code"}, {"name", "pin2"}, {"name", "api_key"},
		{"id", "apiKey"}, {"name", "X-API-Key"}, {"aria-label", "API key"}, {"name", "privateKey"},
		{"name", "ssn"}, {"aria-label", "Security code"}, {"name", "2fa"}, {"name", "recovery-code"},
	}
	for _, kv := range secret {
		if !SecretAttrs(attrs(kv...)) {
			t.Errorf("%s=%q is not secret", kv[0], kv[1])
		}
	}
	plain := [][]string{
		{"type", "text"}, {"autocomplete", "username"}, {"autocomplete", "email"},
		{"name", "q"}, {"name", "email"}, {"id", "username"}, {"aria-label", "Search the site"},
		{"name", "shipping"}, {"id", "spinner"}, {"aria-label", "Your opinion"}, {"name", "keyword"},
		{"name", "monkey"}, {"name", "pinterest_url"}, {"name", "api_version"}, {"name", "turnkey"},
		// Only name, id and aria-label are read for words.
		{"placeholder", "password"}, {"class", "password"}, {"title", "PIN"},
	}
	for _, kv := range plain {
		if SecretAttrs(attrs(kv...)) {
			t.Errorf("%s=%q is secret", kv[0], kv[1])
		}
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"userPIN":      "user pin",
		"APIKey":       "api key",
		"X-API-Key":    "x api key",
		"pin2":         "pin 2",
		"  Card--No. ": "card no",
		"contraseña":   "contrase a",
	} {
		if got := normalize(in); got != want {
			t.Errorf("normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEditableRegion(t *testing.T) {
	for _, kv := range [][]string{{"contenteditable", ""}, {"contenteditable", "true"}, {"contenteditable", "plaintext-only"}, {"contenteditable", "bogus"}, {"role", "textbox"}, {"role", "combobox textbox"}} {
		if !EditableRegion(attrs(kv...)) {
			t.Errorf("%s=%q is not an editable region", kv[0], kv[1])
		}
	}
	for _, kv := range [][]string{{"contenteditable", "false"}, {"contenteditable", " FALSE "}, {"role", "button"}, {"name", "x"}} {
		if EditableRegion(attrs(kv...)) {
			t.Errorf("%s=%q is an editable region", kv[0], kv[1])
		}
	}
}

func TestRemoveAll(t *testing.T) {
	text := "Key: sk-live-abc (keep it)\nfirst 9f8e\nsecond 7d6c\nsk-live-abc again"
	got := RemoveAll(text, []string{" sk-live-abc ", "first 9f8e\n\n  second 7d6c  ", ""})
	want := "Key: [redacted] (keep it)\n[redacted]\n[redacted]\n[redacted] again"
	if got != want {
		t.Errorf("RemoveAll = %q, want %q", got, want)
	}
	// A longer secret containing a shorter one goes whole.
	if got := RemoveAll("abc-123-xyz", []string{"123", "abc-123-xyz"}); got != Placeholder {
		t.Errorf("nested secrets: %q", got)
	}
	if got := RemoveAll("nothing here", nil); got != "nothing here" {
		t.Errorf("no secrets: %q", got)
	}
}

// Script carries the Go patterns to the page; the Chromium tests of
// sim/chrome check that it redacts as the Go rule does.
func TestScriptCarriesThePatterns(t *testing.T) {
	s := Script()
	for _, want := range []string{`"substring":"pass|pwd|secret|token|otp|cvc|cvv|card"`, `"placeholder":"[redacted]"`, "secretAttrs(el)", "editableRegion(el)", "removeAll(text, secrets)"} {
		if !strings.Contains(s, want) {
			t.Errorf("Script lacks %s", want)
		}
	}
}
