package config

import (
	"regexp"
	"strings"
	"testing"
)

// secretLine finds values people put under token and api_key keys.
var secretLine = regexp.MustCompile(`(?m)(?:token|api_key)[ \t]*:[ \t]*["']?([A-Za-z0-9_\-.]{8,})`)

// checkNoSecretEcho fails when an error repeats a token or key value that
// the input carried: errors are printed and logged, secrets must not be.
// A value is repeated when the error shows it and, parsed again with that
// value changed to another of the same shape (each letter and digit
// moved on by one), shows the changed value too: the message follows
// the input. Text infer writes itself is not a repeat, even where a value
// happens to spell part of it ("token: _timeout" and the known key
// command_timeout).
func checkNoSecretEcho(t *testing.T, data string, parse func(string) error) {
	t.Helper()
	err := parse(data)
	if err == nil {
		return
	}
	msg := err.Error()
	for _, m := range secretLine.FindAllStringSubmatchIndex(data, -1) {
		secret := data[m[2]:m[3]]
		if !strings.Contains(msg, secret) {
			continue
		}
		// Only the value is changed: the same characters elsewhere (in
		// a key name, which errors do show) stay as they were.
		other := shifted(secret)
		again := parse(data[:m[2]] + other + data[m[3]:])
		if again != nil && strings.Contains(again.Error(), other) {
			t.Fatalf("error echoes the secret %q: %s", secret, msg)
		}
	}
}

// shifted returns s with every letter and digit replaced by the next one
// of its kind (z to a, 9 to 0), so it has the same shape and no
// character in common with s where s has letters or digits.
func shifted(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = 'a' + (c-'a'+1)%26
		case c >= 'A' && c <= 'Z':
			b[i] = 'A' + (c-'A'+1)%26
		case c >= '0' && c <= '9':
			b[i] = '0' + (c-'0'+1)%10
		}
	}
	return string(b)
}

// FuzzParseBrowserUse: never panic, never echo the token, and whatever
// parses must validate.
func FuzzParseBrowserUse(f *testing.F) {
	for _, seed := range []string{
		"enabled: true\nbackend: extension\nextension:\n  port: 52789\n  token: abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG\n  command_timeout: 30s\n",
		"enabled: true\nextension:\n  port: 70000\n  token: short-secret-value\n",
		"enabled: yes\nextension: [1, 2]\n",
		"extension:\n  token: 12345678901234567890123456789012345\n  prot: 1\n",
		"{", "- a\n- b", "enabled: true\nenabled: false\n", "\x00", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		checkNoSecretEcho(t, data, func(d string) error {
			_, err := ParseBrowserUse([]byte(d), "browser_use.yaml")
			return err
		})
		b, err := ParseBrowserUse([]byte(data), "browser_use.yaml")
		if err == nil {
			if verr := b.Validate(); verr != nil {
				t.Fatalf("parsed but invalid: %v", verr)
			}
			if tok := b.Extension.Token; tok != "" && (strings.Contains(b.String(), tok) || strings.Contains(b.GoString(), tok)) {
				t.Fatal("String shows the token")
			}
		}
	})
}

// FuzzParseConfig: never panic, never echo an API key, and whatever parses
// must validate.
func FuzzParseConfig(f *testing.F) {
	for _, seed := range []string{
		"model: openai/gpt-4o\nagent:\n  mode: plan\n  effort: high\n  temperature: 0.2\n",
		"providers:\n  openai:\n    api_key: sk-verysecretvalue123\n    base_url: ::bad\n",
		"providers:\n  lmstudio:\n    kind: openai-compatible\n    base_url: http://localhost:1234/v1\n    models: [a, b]\n",
		"tools:\n  bash:\n    allow: ['git status', 'gh api *']\n    timeout: 5q\n",
		"storage: {enabled: false}\n", "agent: {temperature: 9}\n", "providers: 3\n", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		checkNoSecretEcho(t, data, func(d string) error {
			_, err := parseOnly([]byte(d), "config.yaml")
			return err
		})
		c, err := parseOnly([]byte(data), "config.yaml")
		if err == nil {
			if verr := c.Validate(); verr != nil {
				t.Fatalf("parsed but invalid: %v", verr)
			}
		}
	})
}
