package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const (
	readDefaultLimit = 2000
	// readLineLimit cuts single lines (minified files) to keep one line
	// from eating the budget.
	readLineLimit = 2000
	// readTextLimit caps the text one Read returns.
	readTextLimit = 60_000
	fileTimeout   = 30 * time.Second
)

// pathArgs is the part of the file tools' arguments the policy needs.
type pathArgs struct {
	Path string `json:"path"`
}

type readTool struct{}

type readArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

func (readTool) Name() string { return "Read" }

func (readTool) Description() string {
	return `Read a text file and return its lines numbered from 1 (line number, a tab, the text).

The path is relative to the project root, or absolute (files outside the project need the person's approval). By default the first 2000 lines are returned; use offset (the first line to show) and limit (how many lines) for the rest, as the end marker suggests. Lines longer than 2000 characters are cut.

Examples:
{"path": "README.md"}
{"path": "internal/server/server.go", "offset": 120, "limit": 80}`
}

func (readTool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "File to read, relative to the project root or absolute."},
    "offset": {"type": "integer", "minimum": 1, "description": "First line to return, counting from 1 (default 1)."},
    "limit": {"type": "integer", "minimum": 1, "description": "How many lines to return (default 2000)."}
  },
  "required": ["path"],
  "additionalProperties": false
}`)
}

func (readTool) Timeout() time.Duration { return fileTimeout }
func (readTool) ReadOnly() bool         { return true }

func (readTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (Output, error) {
	var a readArgs
	if err := decode(raw, &a); err != nil {
		return Output{}, err
	}
	if a.Offset == 0 {
		a.Offset = 1
	}
	if a.Limit == 0 {
		a.Limit = readDefaultLimit
	}
	abs, err := resolve(env, a.Path)
	if err != nil {
		return Output{}, err
	}
	f, err := openRegular(env, abs)
	if err != nil {
		return Output{}, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	if head, _ := br.Peek(8000); bytes.IndexByte(head, 0) >= 0 {
		info, _ := f.Stat()
		return Output{}, fmt.Errorf("%s is a binary file (%d bytes); Read shows text files only", display(env, abs), info.Size())
	}

	var b strings.Builder
	line, shown, last := 0, 0, 0
	stoppedForSize := false
	for {
		if err := ctx.Err(); err != nil {
			return Output{}, err
		}
		text, err := readLine(br, readLineLimit)
		if err == io.EOF {
			break
		}
		if err != nil {
			return Output{}, fmt.Errorf("reading %s: %w", display(env, abs), err)
		}
		line++
		if line < a.Offset || shown >= a.Limit || stoppedForSize {
			continue
		}
		entry := fmt.Sprintf("%6d\t%s\n", line, text)
		if b.Len()+len(entry) > readTextLimit && shown > 0 {
			stoppedForSize = true
			continue
		}
		b.WriteString(entry)
		shown++
		last = line
	}
	name := display(env, abs)
	switch {
	case line == 0:
		return Output{Text: name + " is empty.", Success: true}, nil
	case shown == 0:
		return Output{}, fmt.Errorf("%s has %d lines, so offset %d is past its end; use an offset from 1 to %d", name, line, a.Offset, line)
	}
	if last < line {
		fmt.Fprintf(&b, "[... %s continues: showing lines %d-%d of %d; read more with offset=%d ...]\n", name, a.Offset, last, line, last+1)
	}
	return Output{Text: b.String(), Success: true}, nil
}

// readLine reads one line without its newline, keeping at most max
// characters and marking the cut.
func readLine(br *bufio.Reader, max int) (string, error) {
	var buf []byte
	dropped := 0
	for {
		chunk, err := br.ReadSlice('\n')
		if room := max*4 - len(buf); room > 0 {
			buf = append(buf, chunk[:min(room, len(chunk))]...)
			dropped += len(chunk) - min(room, len(chunk))
		} else {
			dropped += len(chunk)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(buf) == 0 && dropped == 0 {
			return "", io.EOF
		}
		if err != nil && err != io.EOF {
			return "", err
		}
		break
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(buf), "\n"), "\r")
	if r := []rune(s); len(r) > max || dropped > 0 {
		if len(r) > max {
			r = r[:max]
		}
		s = string(r) + " [... line cut at " + fmt.Sprint(max) + " characters ...]"
	}
	return s, nil
}

// openRegular opens abs for reading, with errors that say what to use
// instead of a missing file or a directory.
func openRegular(env *Env, abs string) (*os.File, error) {
	info, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s does not exist; use Tree or Grep to find the right path", display(env, abs))
	case err != nil:
		return nil, err
	case info.IsDir():
		return nil, fmt.Errorf("%s is a directory; use Tree to list it", display(env, abs))
	case !info.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", display(env, abs))
	}
	return os.Open(abs)
}

type writeTool struct{}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func (writeTool) Name() string { return "Write" }

func (writeTool) Description() string {
	return `Create a file or replace its whole content, creating missing parent directories.

Prefer Edit for changing part of an existing file. The path is relative to the project root, or absolute (outside the project needs the person's approval).

Example:
{"path": "docs/notes.md", "content": "# Notes\n\nFirst draft.\n"}`
}

func (writeTool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "File to write, relative to the project root or absolute."},
    "content": {"type": "string", "description": "The complete new content of the file."}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`)
}

func (writeTool) Timeout() time.Duration { return fileTimeout }
func (writeTool) ReadOnly() bool         { return false }

func (writeTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (Output, error) {
	var a writeArgs
	if err := decode(raw, &a); err != nil {
		return Output{}, err
	}
	abs, err := resolve(env, a.Path)
	if err != nil {
		return Output{}, err
	}
	name := display(env, abs)
	target, via := writeTarget(env, abs)
	mode := fs.FileMode(0o644)
	verb := "Created"
	if info, err := os.Stat(target); err == nil {
		if info.IsDir() {
			return Output{}, fmt.Errorf("%s is a directory; give a file path", name)
		}
		mode, verb = info.Mode().Perm(), "Overwrote"
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return Output{}, fmt.Errorf("could not create the directory for %s: %w", name, err)
	}
	if err := writeFile(target, []byte(a.Content), mode); err != nil {
		return Output{}, fmt.Errorf("could not write %s: %w", name, err)
	}
	return Output{Text: fmt.Sprintf("%s %s%s (%d bytes).", verb, name, via, len(a.Content)), Success: true}, nil
}

// writeTarget returns the file a write to abs must replace: abs with its
// symbolic links resolved. writeFile renames a new file into place, and
// renaming onto a link replaces the link itself, so writing through a link
// must aim at its target. The policy has already judged the resolved path
// (insideRoot), so a link pointing out of the project was asked about.
// via notes the link for the result text, empty when abs is no link.
func writeTarget(env *Env, abs string) (target, via string) {
	target = realPath(abs)
	if info, err := os.Lstat(abs); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		// The target is resolved, so show it against the resolved root.
		via = " through the link to " + display(&Env{Root: realPath(env.Root)}, target)
	}
	return target, via
}

// writeFile replaces a file through a temporary file and rename, so a
// failure midway never leaves it half written.
func writeFile(path string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return err
}

type editTool struct{}

type editArgs struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

func (editTool) Name() string { return "Edit" }

func (editTool) Description() string {
	return `Replace exact text in a file: old_string must appear exactly once (include a few surrounding lines to make it unique), unless replace_all is true, which replaces every occurrence.

Copy old_string from a Read of the file, without the line-number prefix, with whitespace and indentation exactly as in the file.

Examples:
{"path": "main.go", "old_string": "func main() {\n\trun()\n}", "new_string": "func main() {\n\tif err := run(); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}"}
{"path": "README.md", "old_string": "infer-old", "new_string": "infer", "replace_all": true}`
}

func (editTool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "minLength": 1, "description": "File to edit, relative to the project root or absolute."},
    "old_string": {"type": "string", "minLength": 1, "description": "The exact text to replace."},
    "new_string": {"type": "string", "description": "The text to put in its place."},
    "replace_all": {"type": "boolean", "description": "Replace every occurrence instead of exactly one (default false)."}
  },
  "required": ["path", "old_string", "new_string"],
  "additionalProperties": false
}`)
}

func (editTool) Timeout() time.Duration { return fileTimeout }
func (editTool) ReadOnly() bool         { return false }

func (editTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (Output, error) {
	var a editArgs
	if err := decode(raw, &a); err != nil {
		return Output{}, err
	}
	if a.OldString == a.NewString {
		return Output{}, errors.New("old_string and new_string are the same, so there is nothing to change")
	}
	abs, err := resolve(env, a.Path)
	if err != nil {
		return Output{}, err
	}
	name := display(env, abs)
	f, err := openRegular(env, abs)
	if err != nil {
		return Output{}, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return Output{}, err
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return Output{}, fmt.Errorf("reading %s: %w", name, err)
	}
	text := string(data)
	n := strings.Count(text, a.OldString)
	switch {
	case n == 0:
		return Output{}, fmt.Errorf("old_string was not found in %s; Read the file and copy the exact text (whitespace and indentation must match, and the line-number prefix is not part of the file)", name)
	case n > 1 && !a.ReplaceAll:
		return Output{}, fmt.Errorf("old_string occurs %d times in %s (at lines %s); include more surrounding lines to make it unique, or set replace_all to true to change every occurrence", n, name, occurrenceLines(text, a.OldString, 10))
	}
	firstLine := strings.Count(text[:strings.Index(text, a.OldString)], "\n") + 1
	var updated string
	if a.ReplaceAll {
		updated = strings.ReplaceAll(text, a.OldString, a.NewString)
	} else {
		updated = strings.Replace(text, a.OldString, a.NewString, 1)
	}
	target, via := writeTarget(env, abs)
	if err := writeFile(target, []byte(updated), info.Mode().Perm()); err != nil {
		return Output{}, fmt.Errorf("could not write %s: %w", name, err)
	}
	what := "1 occurrence"
	if n > 1 {
		what = fmt.Sprintf("%d occurrences", n)
	}
	return Output{Text: fmt.Sprintf("Replaced %s in %s%s (the first at line %d).", what, name, via, firstLine), Success: true}, nil
}

// occurrenceLines lists the line numbers where sub starts, at most max.
func occurrenceLines(text, sub string, max int) string {
	if sub == "" {
		return "?"
	}
	var lines []string
	from := 0
	for len(lines) < max {
		i := strings.Index(text[from:], sub)
		if i < 0 {
			break
		}
		lines = append(lines, fmt.Sprint(strings.Count(text[:from+i], "\n")+1))
		from += i + len(sub)
	}
	if len(lines) == 0 {
		return "?"
	}
	s := strings.Join(lines, ", ")
	if strings.Count(text[from:], sub) > 0 {
		s += ", …"
	}
	return s
}
