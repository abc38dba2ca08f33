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
func checkNoSecretEcho(t *testing.T, data string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	msg := err.Error()
	for _, m := range secretLine.FindAllStringSubmatch(data, -1) {
		if strings.Contains(msg, m[1]) {
			t.Fatalf("error echoes the secret %q: %s", m[1], msg)
		}
	}
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
		b, err := ParseBrowserUse([]byte(data), "browser_use.yaml")
		checkNoSecretEcho(t, data, err)
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
		c, err := ParseConfig([]byte(data), "config.yaml")
		checkNoSecretEcho(t, data, err)
		if err == nil {
			if verr := c.Validate(); verr != nil {
				t.Fatalf("parsed but invalid: %v", verr)
			}
		}
	})
}
