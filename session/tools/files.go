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

	"github.com/infer-workspace/infer/internal/nolink"
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

// Names of the file tools.
const (
	NameRead  = "Read"
	NameWrite = "Write"
	NameEdit  = "Edit"
)

type readTool struct{}

type readArgs struct {
	Path   string `json:"path" limits:"minLength=1" jsonschema:"File to read, relative to the project root or absolute."`
	Offset int    `json:"offset,omitempty" limits:"minimum=1" jsonschema:"First line to return, counting from 1 (default 1)."`
	Limit  int    `json:"limit,omitempty" limits:"minimum=1" jsonschema:"How many lines to return (default 2000)."`
}

var readSchema = schemaOf[readArgs]()

func (readTool) Name() string { return NameRead }

func (readTool) Description() string {
	return `Read a text file and return its lines numbered from 1 (line number, a tab, the text).

The path is relative to the project root, or absolute (files outside the project need the person's approval). By default the first 2000 lines are returned; use offset (the first line to show) and limit (how many lines) for the rest, as the end marker suggests. Lines longer than 2000 characters are cut.

Examples:
{"path": "README.md"}
{"path": "internal/server/server.go", "offset": 120, "limit": 80}`
}

func (readTool) Schema() json.RawMessage { return readSchema() }

func (readTool) show(args string) Shown {
	return showAs(args, func(a readArgs) Shown { return Shown{Summary: a.Path} })
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
	dir, f, err := openJudged(env, abs, target(ctx, abs))
	if err != nil {
		return Output{}, err
	}
	dir.Close()
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

// openJudged opens real, the resolved path the policy judged for abs,
// for reading, together with its folder, through which Edit writes it
// back. No element of real may be a link by now (see target); abs names
// the file in errors.
func openJudged(env *Env, abs, real string) (dir, f *os.File, err error) {
	dir, err = nolink.Dir(filepath.Dir(real), false, 0)
	if err == nil {
		f, err = nolink.At(dir, filepath.Base(real))
	}
	if err != nil {
		if dir != nil {
			dir.Close()
		}
		return nil, nil, openError(env, abs, err)
	}
	info, err := f.Stat()
	switch {
	case err != nil:
	case info.IsDir():
		err = fmt.Errorf("%s is a directory; use Tree to list it", display(env, abs))
	case !info.Mode().IsRegular():
		err = fmt.Errorf("%s is not a regular file", display(env, abs))
	}
	if err != nil {
		f.Close()
		dir.Close()
		return nil, nil, err
	}
	return dir, f, nil
}

// openError says what went wrong opening abs, and what to do instead.
func openError(env *Env, abs string, err error) error {
	name := display(env, abs)
	switch {
	case errors.Is(err, nolink.ErrLink):
		return fmt.Errorf("%s changed after infer checked it (a symbolic link is now in its way), so it was not touched; call the tool again to have the new path judged", name)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist; use Tree or Grep to find the right path", name)
	}
	return err
}

type writeTool struct{}

type writeArgs struct {
	Path    string `json:"path" limits:"minLength=1" jsonschema:"File to write, relative to the project root or absolute."`
	Content string `json:"content" jsonschema:"The complete new content of the file."`
}

var writeSchema = schemaOf[writeArgs]()

func (writeTool) Name() string { return NameWrite }

func (writeTool) Description() string {
	return `Create a file or replace its whole content, creating missing parent directories.

Prefer Edit for changing part of an existing file. The path is relative to the project root, or absolute (outside the project needs the person's approval).

Example:
{"path": "docs/notes.md", "content": "# Notes\n\nFirst draft.\n"}`
}

func (writeTool) Schema() json.RawMessage { return writeSchema() }

// show: the approval box compares the new content with the file's.
func (writeTool) show(args string) Shown {
	return showAs(args, func(a writeArgs) Shown {
		return Shown{Summary: a.Path, Detail: []Part{
			field("file: ", a.Path),
			{Kind: PartContent, Path: a.Path, Text: a.Content},
		}}
	})
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
	real := target(ctx, abs)
	dir, err := nolink.Dir(filepath.Dir(real), true, 0o755)
	if err != nil {
		if errors.Is(err, nolink.ErrLink) {
			return Output{}, openError(env, abs, err)
		}
		return Output{}, fmt.Errorf("could not create the directory for %s: %w", name, err)
	}
	defer dir.Close()
	base := filepath.Base(real)
	mode := fs.FileMode(0o644)
	verb := "Created"
	if st, err := nolink.Lstat(dir, base); err == nil {
		switch {
		case nolink.IsDir(st):
			return Output{}, fmt.Errorf("%s is a directory; give a file path", name)
		case nolink.IsLink(st):
			return Output{}, openError(env, abs, nolink.ErrLink)
		}
		mode, verb = fs.FileMode(st.Mode)&fs.ModePerm, "Overwrote"
	}
	if err := nolink.Replace(dir, base, []byte(a.Content), mode); err != nil {
		return Output{}, fmt.Errorf("could not write %s: %w", name, err)
	}
	return Output{Text: fmt.Sprintf("%s %s%s (%d bytes).", verb, name, via(env, abs, real), len(a.Content)), Success: true}, nil
}

// via notes, for the result text, that abs led through links to real,
// the file written; empty when it did not. Writing replaces the file
// through a rename, and a rename onto a link would replace the link
// itself, so a write through a link aims at where it led when the policy
// judged it: a link pointing out of the project was asked about then.
func via(env *Env, abs, real string) string {
	// real is resolved, so show it against the resolved root.
	shown := display(&Env{Root: realPath(env.Root)}, real)
	if shown == display(env, abs) {
		return ""
	}
	return " through the link to " + shown
}

type editTool struct{}

type editArgs struct {
	Path       string `json:"path" limits:"minLength=1" jsonschema:"File to edit, relative to the project root or absolute."`
	OldString  string `json:"old_string" limits:"minLength=1" jsonschema:"The exact text to replace."`
	NewString  string `json:"new_string" jsonschema:"The text to put in its place."`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence instead of exactly one (default false)."`
}

var editSchema = schemaOf[editArgs]()

func (editTool) Name() string { return NameEdit }

func (editTool) Description() string {
	return `Replace exact text in a file: old_string must appear exactly once (include a few surrounding lines to make it unique), unless replace_all is true, which replaces every occurrence.

Copy old_string from a Read of the file, without the line-number prefix, with whitespace and indentation exactly as in the file.

Examples:
{"path": "main.go", "old_string": "func main() {\n\trun()\n}", "new_string": "func main() {\n\tif err := run(); err != nil {\n\t\tlog.Fatal(err)\n\t}\n}"}
{"path": "README.md", "old_string": "infer-old", "new_string": "infer", "replace_all": true}`
}

func (editTool) Schema() json.RawMessage { return editSchema() }

// show: the approval box shows the change as a diff.
func (editTool) show(args string) Shown {
	return showAs(args, func(a editArgs) Shown {
		s := Shown{Summary: a.Path, Detail: []Part{field("file: ", a.Path)}}
		if a.ReplaceAll {
			s.Detail = append(s.Detail, note("every occurrence", false))
		}
		s.Detail = append(s.Detail, Part{Kind: PartChange, Old: a.OldString, Text: a.NewString})
		return s
	})
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
	real := target(ctx, abs)
	// Read and write back through one handle on the folder, so the file
	// replaced is in the folder the old text came from.
	dir, f, err := openJudged(env, abs, real)
	if err != nil {
		return Output{}, err
	}
	defer dir.Close()
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
	if err := nolink.Replace(dir, filepath.Base(real), []byte(updated), info.Mode().Perm()); err != nil {
		return Output{}, fmt.Errorf("could not write %s: %w", name, err)
	}
	what := "1 occurrence"
	if n > 1 {
		what = fmt.Sprintf("%d occurrences", n)
	}
	return Output{Text: fmt.Sprintf("Replaced %s in %s%s (the first at line %d).", what, name, via(env, abs, real), firstLine), Success: true}, nil
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
