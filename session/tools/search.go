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
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

const (
	grepMaxMatches = 200
	grepLineLimit  = 300
	// grepMaxFile skips huge files (logs, dumps) that would eat the timeout.
	grepMaxFile   = 20 << 20
	treeMaxLines  = 1000
	searchTimeout = time.Minute
)

// skippedDirs are never searched or listed: version control internals and
// dependency trees are noise to a model.
var skippedDirs = map[string]bool{".git": true, "node_modules": true}

type grepTool struct{}

type grepArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
	Glob    string `json:"glob"`
}

func (grepTool) Name() string { return "Grep" }

func (grepTool) Description() string {
	return `Search file contents with a Go regular expression (RE2 syntax; (?i) makes it case-insensitive) and return matching lines as path:line: text.

It searches the project root, or path (a directory or one file), skipping .git, node_modules, binary files and files over 20 MB. glob limits the files by name (*.go) or by path relative to the searched directory (cmd/*.go). At most 200 matches are returned.

Examples:
{"pattern": "func main"}
{"pattern": "TODO|FIXME", "path": "internal", "glob": "*.go"}
{"pattern": "(?i)api[_-]?key", "glob": "*.yaml"}`
}

func (grepTool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "minLength": 1, "description": "Go regular expression to search for."},
    "path": {"type": "string", "description": "Directory or file to search, relative to the project root (default: the root)."},
    "glob": {"type": "string", "description": "Only search files whose name (or relative path, when it contains /) matches this glob, e.g. *.go."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`)
}

func (grepTool) Timeout() time.Duration { return searchTimeout }
func (grepTool) ReadOnly() bool         { return true }

func (grepTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (Output, error) {
	var a grepArgs
	if err := decode(raw, &a); err != nil {
		return Output{}, err
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return Output{}, fmt.Errorf("pattern is not a valid Go regular expression: %v (escape special characters such as ( [ . with a backslash)", err)
	}
	if a.Glob != "" {
		if _, err := path.Match(a.Glob, ""); err != nil {
			return Output{}, fmt.Errorf("glob %q is malformed: %v", a.Glob, err)
		}
	}
	if a.Path == "" {
		a.Path = "."
	}
	start, err := resolve(env, a.Path)
	if err != nil {
		return Output{}, err
	}
	if _, err := os.Stat(start); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Output{}, fmt.Errorf("%s does not exist; use Tree to find the right path", display(env, start))
		}
		return Output{}, err
	}

	var b strings.Builder
	matches, files := 0, 0
	full := false
	walkErr := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if err != nil {
			return nil // unreadable entries are skipped, not fatal
		}
		if d.IsDir() {
			if p != start && skippedDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !globMatches(a.Glob, start, p) {
			return nil
		}
		n, err := grepFile(p, re, func(line int, text string) bool {
			if matches == grepMaxMatches {
				full = true
				return false
			}
			matches++
			fmt.Fprintf(&b, "%s:%d: %s\n", filepath.ToSlash(display(env, p)), line, cutLine(text, grepLineLimit))
			return true
		})
		if err == nil && n > 0 {
			files++
		}
		if full {
			return filepath.SkipAll
		}
		return nil
	})
	if walkErr != nil {
		return Output{}, walkErr
	}
	where := display(env, start)
	if matches == 0 {
		return Output{Text: fmt.Sprintf("No matches for /%s/ in %s.", a.Pattern, where), Success: true}, nil
	}
	if full {
		fmt.Fprintf(&b, "[... stopped after %d matches; narrow the pattern, path or glob to see the rest ...]\n", grepMaxMatches)
	} else {
		fmt.Fprintf(&b, "%d matches in %d files.\n", matches, files)
	}
	return Output{Text: b.String(), Success: true}, nil
}

// globMatches applies the Grep glob: to the base name, or to the path
// relative to the search root when the glob has a slash.
func globMatches(glob, root, p string) bool {
	if glob == "" {
		return true
	}
	target := filepath.Base(p)
	if strings.Contains(glob, "/") {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return false
		}
		target = filepath.ToSlash(rel)
	}
	ok, _ := path.Match(glob, target)
	return ok
}

// grepFile calls hit for each matching line until hit returns false, and
// returns how many lines matched. Binary and huge files are skipped.
func grepFile(p string, re *regexp.Regexp, hit func(line int, text string) bool) (int, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || info.Size() > grepMaxFile {
		return 0, errors.New("skipped")
	}
	br := bufio.NewReaderSize(f, 64<<10)
	if head, _ := br.Peek(8000); bytes.IndexByte(head, 0) >= 0 {
		return 0, errors.New("binary")
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	line, n := 0, 0
	for sc.Scan() {
		line++
		if re.Match(sc.Bytes()) {
			n++
			if !hit(line, string(sc.Bytes())) {
				break
			}
		}
	}
	if err := sc.Err(); err != nil && err != io.EOF {
		return n, err
	}
	return n, nil
}

// cutLine shortens a long line and says so.
func cutLine(s string, max int) string {
	s = strings.TrimRight(s, "\r")
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + " [... line cut ...]"
	}
	return s
}

type treeTool struct{}

type treeArgs struct {
	Path  string `json:"path"`
	Depth int    `json:"depth"`
}

func (treeTool) Name() string { return "Tree" }

func (treeTool) Description() string {
	return `List a directory as an indented tree (directories end with /), to find your way around a project.

It lists the project root, or path, down to depth levels (default 3, at most 10), skipping .git and not expanding node_modules. At most 1000 entries are shown.

Examples:
{}
{"path": "internal", "depth": 2}`
}

func (treeTool) Schema() json.RawMessage {
	return json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory to list, relative to the project root (default: the root)."},
    "depth": {"type": "integer", "minimum": 1, "maximum": 10, "description": "How many levels to descend (default 3)."}
  },
  "additionalProperties": false
}`)
}

func (treeTool) Timeout() time.Duration { return searchTimeout }
func (treeTool) ReadOnly() bool         { return true }

func (treeTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (Output, error) {
	var a treeArgs
	if err := decode(raw, &a); err != nil {
		return Output{}, err
	}
	if a.Path == "" {
		a.Path = "."
	}
	if a.Depth == 0 {
		a.Depth = 3
	}
	start, err := resolve(env, a.Path)
	if err != nil {
		return Output{}, err
	}
	info, err := os.Stat(start)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Output{}, fmt.Errorf("%s does not exist", display(env, start))
	case err != nil:
		return Output{}, err
	case !info.IsDir():
		return Output{}, fmt.Errorf("%s is a file, not a directory; use Read to see it", display(env, start))
	}
	t := &treeWriter{ctx: ctx}
	t.line(0, filepath.ToSlash(display(env, start))+"/")
	err = t.walk(start, 1, a.Depth)
	if err != nil && !errors.Is(err, errTreeFull) {
		return Output{}, err
	}
	if errors.Is(err, errTreeFull) {
		fmt.Fprintf(&t.b, "[... stopped after %d entries; list a subdirectory or use a smaller depth ...]\n", treeMaxLines)
	}
	return Output{Text: t.b.String(), Success: true}, nil
}

var errTreeFull = errors.New("tree is full")

type treeWriter struct {
	ctx   context.Context
	b     strings.Builder
	lines int
}

func (t *treeWriter) line(depth int, s string) error {
	if t.lines == treeMaxLines {
		return errTreeFull
	}
	t.lines++
	t.b.WriteString(strings.Repeat("  ", depth))
	t.b.WriteString(s)
	t.b.WriteByte('\n')
	return nil
}

func (t *treeWriter) walk(dir string, depth, maxDepth int) error {
	if err := t.ctx.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return t.line(depth, "(unreadable: "+err.Error()+")")
	}
	for _, e := range entries {
		name := e.Name()
		full := filepath.Join(dir, name)
		switch {
		case e.IsDir() && name == ".git":
			continue
		case e.IsDir() && skippedDirs[name]:
			if err := t.line(depth, name+"/ (not expanded)"); err != nil {
				return err
			}
		case e.IsDir():
			label := name + "/"
			if depth == maxDepth {
				if sub, err := os.ReadDir(full); err == nil && len(sub) > 0 {
					label += fmt.Sprintf(" (%d entries)", len(sub))
				}
			}
			if err := t.line(depth, label); err != nil {
				return err
			}
			if depth < maxDepth {
				if err := t.walk(full, depth+1, maxDepth); err != nil {
					return err
				}
			}
		case e.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(full)
			if err := t.line(depth, name+" -> "+target); err != nil {
				return err
			}
		default:
			if err := t.line(depth, name); err != nil {
				return err
			}
		}
	}
	return nil
}
