package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/infer-workspace/infer/internal/nolink"
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

// Names of the search tools.
const (
	NameGrep = "Grep"
	NameTree = "Tree"
)

type grepTool struct{}

type grepArgs struct {
	Pattern string `json:"pattern" limits:"minLength=1" jsonschema:"Go regular expression to search for."`
	Path    string `json:"path,omitempty" jsonschema:"Directory or file to search, relative to the project root (default: the root)."`
	Glob    string `json:"glob,omitempty" jsonschema:"Only search files whose name (or relative path, when it contains /) matches this glob, e.g. *.go."`
}

var grepSchema = schemaOf[grepArgs]()

func (grepTool) Name() string { return NameGrep }

func (grepTool) Description() string {
	return `Search file contents with a Go regular expression (RE2 syntax; (?i) makes it case-insensitive) and return matching lines as path:line: text.

It searches the project root, or path (a directory or one file), skipping .git, node_modules, binary files and files over 20 MB. glob limits the files by name (*.go) or by path relative to the searched directory (cmd/*.go). At most 200 matches are returned.

Examples:
{"pattern": "func main"}
{"pattern": "TODO|FIXME", "path": "internal", "glob": "*.go"}
{"pattern": "(?i)api[_-]?key", "glob": "*.yaml"}`
}

func (grepTool) Schema() json.RawMessage { return grepSchema() }

func (grepTool) show(args string) Shown {
	return showAs(args, func(a grepArgs) Shown {
		s := a.Pattern
		if a.Path != "" {
			s += " in " + a.Path
		}
		return Shown{Summary: oneLine(s)}
	})
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
	top, err := nolink.Open(target(ctx, start))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Output{}, fmt.Errorf("%s does not exist; use Tree to find the right path", display(env, start))
		}
		return Output{}, openError(env, start, err)
	}
	defer top.Close()
	info, err := top.Stat()
	if err != nil {
		return Output{}, err
	}

	var b strings.Builder
	g := &grepWalk{ctx: ctx, re: re, glob: a.Glob, start: start, realStart: realPath(start), hidden: env.hiddenPaths()}
	g.hit = func(p string, line int, text string) {
		fmt.Fprintf(&b, "%s:%d: %s\n", filepath.ToSlash(display(env, p)), line, cutLine(text, grepLineLimit))
	}
	switch {
	case info.IsDir():
		err = g.dir(top, start)
	case info.Mode().IsRegular() && globMatches(a.Glob, start, start):
		err = g.file(top, start)
	}
	if err != nil && !errors.Is(err, errGrepFull) {
		return Output{}, err
	}
	matches, files, full := g.matches, g.files, errors.Is(err, errGrepFull)
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

var errGrepFull = errors.New("grep has all the matches it shows")

// grepWalk searches a folder through handles, each entry opened in its
// folder without following links, so that a link swapped in during the
// search leads nowhere (see package nolink).
type grepWalk struct {
	ctx            context.Context
	re             *regexp.Regexp
	glob, start    string
	hit            func(p string, line int, text string)
	matches, files int
	// realStart is start with its links resolved, and hidden what the
	// sandbox hides from commands (Env.hiddenPaths): the search skips
	// it, as a confined grep would not see it.
	realStart string
	hidden    []string
}

// isHidden reports whether p, a path under start, is hidden.
func (g *grepWalk) isHidden(p string) bool {
	if len(g.hidden) == 0 {
		return false
	}
	rel, err := filepath.Rel(g.start, p)
	return err == nil && hiddenBy(g.hidden, filepath.Join(g.realStart, rel)) != ""
}

// dir searches the folder d, found at p, in name order; unreadable
// entries are skipped, not fatal.
func (g *grepWalk) dir(d *os.File, p string) error {
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		if err := g.ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		child := filepath.Join(p, name)
		switch {
		case g.isHidden(child):
		case e.IsDir() && skippedDirs[name]:
		case e.IsDir():
			sub, err := nolink.At(d, name)
			if err != nil {
				continue
			}
			err = g.dir(sub, child)
			sub.Close()
			if err != nil {
				return err
			}
		case e.Type().IsRegular() && globMatches(g.glob, g.start, child):
			f, err := nolink.At(d, name)
			if err != nil {
				continue
			}
			err = g.file(f, child)
			f.Close()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// file searches the open file f, found at p, reporting each matching
// line until the matches are full. Binary, huge and non-regular files
// are skipped.
func (g *grepWalk) file(f *os.File, p string) error {
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() || info.Size() > grepMaxFile {
		return nil
	}
	br := bufio.NewReaderSize(f, 64<<10)
	if head, _ := br.Peek(8000); bytes.IndexByte(head, 0) >= 0 {
		return nil
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	line, n := 0, 0
	defer func() {
		if n > 0 {
			g.files++
		}
	}()
	for sc.Scan() {
		line++
		if g.re.Match(sc.Bytes()) {
			if g.matches == grepMaxMatches {
				return errGrepFull
			}
			g.matches++
			n++
			g.hit(p, line, sc.Text())
		}
	}
	return nil
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
	Path  string `json:"path,omitempty" jsonschema:"Directory to list, relative to the project root (default: the root)."`
	Depth int    `json:"depth,omitempty" limits:"minimum=1,maximum=10" jsonschema:"How many levels to descend (default 3)."`
}

var treeSchema = schemaOf[treeArgs]()

func (treeTool) Name() string { return NameTree }

func (treeTool) Description() string {
	return `List a directory as an indented tree (directories end with /), to find your way around a project.

It lists the project root, or path, down to depth levels (default 3, at most 10), skipping .git and not expanding node_modules. At most 1000 entries are shown.

Examples:
{}
{"path": "internal", "depth": 2}`
}

func (treeTool) Schema() json.RawMessage { return treeSchema() }

func (treeTool) show(args string) Shown {
	return showAs(args, func(a treeArgs) Shown { return Shown{Summary: a.Path} })
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
	top, err := nolink.Open(target(ctx, start))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Output{}, fmt.Errorf("%s does not exist", display(env, start))
		}
		return Output{}, openError(env, start, err)
	}
	defer top.Close()
	info, err := top.Stat()
	switch {
	case err != nil:
		return Output{}, err
	case !info.IsDir():
		return Output{}, fmt.Errorf("%s is a file, not a directory; use Read to see it", display(env, start))
	}
	t := &treeWriter{ctx: ctx, hidden: env.hiddenPaths()}
	t.line(0, filepath.ToSlash(display(env, start))+"/")
	err = t.walk(top, realPath(start), 1, a.Depth)
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
	// hidden is what the sandbox hides from commands (Env.hiddenPaths):
	// shown by name, never opened.
	hidden []string
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

// walk lists the folder d, whose resolved path is real, through handles,
// each subfolder opened in its parent without following links (see
// package nolink).
func (t *treeWriter) walk(d *os.File, real string, depth, maxDepth int) error {
	if err := t.ctx.Err(); err != nil {
		return err
	}
	entries, err := d.ReadDir(-1)
	if err != nil {
		return t.line(depth, "(unreadable: "+err.Error()+")")
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir() && name == ".git":
			continue
		case hiddenBy(t.hidden, filepath.Join(real, name)) != "":
			label := name
			if e.IsDir() {
				label += "/"
			}
			if err := t.line(depth, label+" (hidden: infer keeps it from commands)"); err != nil {
				return err
			}
		case e.IsDir() && skippedDirs[name]:
			if err := t.line(depth, name+"/ (not expanded)"); err != nil {
				return err
			}
		case e.IsDir():
			sub, openErr := nolink.At(d, name)
			label := name + "/"
			if depth == maxDepth && openErr == nil {
				if list, err := sub.ReadDir(-1); err == nil && len(list) > 0 {
					label += fmt.Sprintf(" (%d entries)", len(list))
				}
			}
			err := t.line(depth, label)
			if err == nil && depth < maxDepth {
				if openErr != nil {
					err = t.line(depth+1, "(unreadable: "+openErr.Error()+")")
				} else {
					err = t.walk(sub, filepath.Join(real, name), depth+1, maxDepth)
				}
			}
			if sub != nil {
				sub.Close()
			}
			if err != nil {
				return err
			}
		case e.Type()&fs.ModeSymlink != 0:
			target, _ := nolink.Readlink(d, name)
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
