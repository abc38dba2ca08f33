package config

import (
	_ "embed"
	"strings"
)

// configTemplate is the commented config.yaml without its provider examples.
//
//go:embed config_template.yaml
var configTemplate string

// providersExample is a valid providers mapping, kept as its own file so a
// test can load it; the template carries it commented out.
//
//go:embed providers_example.yaml
var providersExample string

// DefaultConfigYAML returns the commented config.yaml that `infer init`
// writes: every key with its default and what it does, and provider
// examples (OpenAI, Anthropic, a local Ollama, a named LM Studio server)
// commented out.
func DefaultConfigYAML() []byte {
	var b strings.Builder
	b.WriteString(configTemplate)
	for _, line := range strings.Split(strings.TrimRight(providersExample, "\n"), "\n") {
		switch {
		case line == "":
			b.WriteString("\n")
		case strings.HasPrefix(line, "#"):
			b.WriteString("  " + line + "\n")
		default:
			b.WriteString("  # " + line + "\n")
		}
	}
	return []byte(b.String())
}

// WriteDefaultConfig creates path from DefaultConfigYAML with mode 0600 (a
// provider's api_key may later be added to it). It never replaces an
// existing file: the error then matches fs.ErrExist.
func WriteDefaultConfig(path string) error {
	return CreateFileAtomic(path, DefaultConfigYAML(), 0o600)
}
