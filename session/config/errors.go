package config

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// Error renders "file:line: key: problem; fix".
func (e *FieldError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":")
			b.WriteString(strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Problem)
	if e.Fix != "" {
		b.WriteString("; ")
		b.WriteString(e.Fix)
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
// does not flood the terminal. Callers never pass secret fields here.
func quoteValue(v string) string {
	const limit = 40
	r := []rune(v)
	if len(r) > limit {
		v = string(r[:limit]) + "…"
	}
	return strconv.Quote(v)
}
