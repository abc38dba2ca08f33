package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// FieldError is one problem in a configuration file. Its message names the
// file, the line when known, the dotted key and the fix, so the person can
// repair the file without reading our source.
type FieldError struct {
	// File is the path of the file, as shown to the person ("~/.infer/…").
	File string
	// Line is the 1-based line of the key, or 0 when unknown.
	Line int
	// Key is the dotted key, e.g. "extension.port"; empty for whole-file
	// problems such as a YAML syntax error.
	Key string
	// Problem says what is wrong. It never contains a secret.
	Problem string
	// Fix says what to do about it.
	Fix string
	// Err is the underlying cause, if any, for errors.Is (e.g. fs.ErrNotExist).
	Err error
}

// Error renders "file:line: key: problem; fix". The dotted key is shown
// name by name through shownKey, here where every message is made,
// because a map's names (providers, MCP servers) are whatever the person
// typed, and a token pasted one line too high becomes one.
func (e *FieldError) Error() string {
	key, fix := e.Key, e.Fix
	if key != "" {
		parts := strings.Split(key, ".")
		for i, p := range parts {
			parts[i] = shownKey(p)
		}
		if shown := strings.Join(parts, "."); shown != key {
			fix = strings.ReplaceAll(fix, key, shown)
			key = shown
		}
	}
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":")
			b.WriteString(strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if key != "" {
		b.WriteString(key)
		b.WriteString(": ")
	}
	b.WriteString(e.Problem)
	if fix != "" {
		b.WriteString("; ")
		b.WriteString(fix)
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *FieldError) Unwrap() error { return e.Err }

// DisplayPath shortens a path under the person's home directory to "~/…",
// which is how the docs and the extension refer to these files.
func DisplayPath(p string) string {
	userHome, err := os.UserHomeDir()
	if err != nil || userHome == "" || userHome == string(filepath.Separator) {
		return p
	}
	rel, err := filepath.Rel(userHome, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return p
	}
	if rel == "." {
		return "~"
	}
	return "~" + string(filepath.Separator) + rel
}

// quoteValue renders a scalar the person wrote, shortened so a long paste
// does not flood the terminal. Callers never pass secret fields, but a
// secret can land in the wrong one (a token pasted under command_timeout,
// an API key under model), and the message would then print it: a value
// that looks like a credential is described by its length instead.
func quoteValue(v string) string {
	if looksLikeSecret(v) {
		return fmt.Sprintf("a %d-character value that looks like a key or token (not shown)", utf8.RuneCountInString(v))
	}
	const limit = 40
	r := []rune(v)
	if len(r) > limit {
		v = string(r[:limit]) + "…"
	}
	return strconv.Quote(v)
}

// secretPrefixes start the API keys and tokens people are most likely to
// paste: OpenAI, Anthropic, OpenRouter, Google (keys and OAuth tokens),
// GitHub, GitLab, Hugging Face, Groq, Replicate, Slack, AWS, and JWTs.
var secretPrefixes = []string{
	"sk-", "sk_", "AIza", "ya29.", "ghp_", "gho_", "ghs_", "ghu_", "github_pat_", "glpat-",
	"hf_", "gsk_", "r8_", "xox", "AKIA", "ASIA", "eyJ",
}

// looksLikeSecret reports whether v may be a credential: one word that
// starts like a well-known key (16 characters or more), or that is long
// and random-looking: 32 or more hexadecimal digits, 24 or more
// characters mixing upper case, lower case and digits, or 20 or more
// letters of one case with at least four digits among them, that do not
// read as a model id (see readsAsID). Modes, durations and model ids are still
// quoted as written, since showing them is how the person spots the typo.
func looksLikeSecret(v string) bool {
	n := utf8.RuneCountInString(v)
	if n < 16 || strings.ContainsAny(v, " \t\n") {
		return false
	}
	for _, p := range secretPrefixes {
		if strings.HasPrefix(v, p) {
			return true
		}
	}
	var upper, lower, digit bool
	digits := 0
	hex := true
	for _, r := range v {
		switch {
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsLower(r):
			lower = true
		case unicode.IsDigit(r):
			digit = true
			digits++
		}
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			hex = false
		}
	}
	mixed := upper && lower && digit
	// One case with many digits reads as random too (a1b2c3…, 20 and up).
	oneCase := (upper || lower) && digits >= 4 && n >= 20
	return (hex && n >= 32) || ((mixed && n >= 24 || oneCase) && !readsAsID(v))
}

// readsAsID reports whether v is made of words, as model ids are
// ("Meta-Llama-3-70B-Instruct", "DeepSeek-R1-Distill-Llama-70B"): at least
// two of its parts between - _ . / : are a lower-case word of three or more
// letters, capitalised or not. Random tokens mix cases inside their parts,
// so a part that reads as a word is rare in them and two are rarer still.
func readsAsID(v string) bool {
	words := 0
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return strings.ContainsRune("-_./:", r) }) {
		rest := part
		if r, size := utf8.DecodeRuneInString(part); unicode.IsUpper(r) {
			rest = part[size:]
		}
		if utf8.RuneCountInString(rest) >= 2 && strings.IndexFunc(rest, func(r rune) bool { return !unicode.IsLower(r) }) < 0 {
			words++
		}
	}
	return words >= 2
}
