package bashguard

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// CheckAuto reports whether command may run in auto mode. It checks every
// simple command anywhere in the input (chains, pipes, substitutions,
// function bodies) against the deny list, looks through wrappers such as
// env, nohup, timeout, xargs, find -exec, eval and bash -c, and applies
// structural rules: recursive rm of / or a home directory, piping or
// feeding code into a shell, and writing to a disk device.
//
// It also refuses what it cannot know, because auto mode must never claim
// a command stays inside the project when the guard cannot tell:
//
//   - a path outside the project, in an argument, an option's value or a
//     redirection, as written or once symbolic links are followed, and
//     globs matching one (see outsideWord);
//   - a value computed when the command runs where a path may go: $VAR,
//     $(…), $'…' (echo's arguments and a commit message are not paths);
//   - code handed to another program: bash -c, python -c, perl -e, awk
//     programs that run commands, sed's e, here-strings and here-documents
//     into an interpreter, a pipe into one (see codeRisk);
//   - a script the same command line writes (or names) and then runs;
//   - a command name computed at run time, or a code string that is not
//     literal, whose deny-list match cannot be checked;
//   - a command that follows symbolic links while it recurses (grep -R)
//     in a project with a link leading out of it.
//
// The reason says which rule applied.
func (g *Guard) CheckAuto(command string) (bool, string) {
	f, err := parse(command)
	if err != nil {
		return false, "it could not be parsed as Bash (" + parseMessage(err) + "), so the deny list cannot be checked"
	}
	c := &autoChecker{
		g:     g,
		sc:    g.newScope(),
		names: map[string]int{},
		fed:   map[*syntax.CallExpr]bool{},
		funcs: map[string]*syntax.Stmt{},
		// Bash options that change what a glob matches make the guard's
		// expansion wrong; nocaseglob matches other names, globstar
		// descends folders.
		globsUnknown: strings.Contains(command, "nocaseglob") || strings.Contains(command, "globstar"),
	}
	c.file(f, 0)
	c.scripts()
	if c.why != "" {
		return false, c.why
	}
	return true, ""
}

// maxDepth bounds nested code strings (bash -c "eval '…'").
const maxDepth = 8

// maxDirs bounds the folders a command line may cd into before the guard
// gives up following them.
const maxDirs = 32

type autoChecker struct {
	g   *Guard
	why string
	// sc holds the folders commands may run in (the root and every
	// folder a literal cd or pushd anywhere in the line moves to;
	// relative paths are checked from each) and what globs may read.
	sc *scope
	// calls counts simple commands, nested code included.
	calls int
	// runs are scripts and programs run from a file (bash x.sh, ./x,
	// source x), for the written-then-run rule.
	runs []string
	// names counts, per base name, the words naming it anywhere in the
	// line, so that a script run that is also written (or otherwise
	// named) is seen.
	names map[string]int
	// fed marks commands reading file names from a pipe whose producer
	// lists project files (find . | xargs grep x).
	fed map[*syntax.CallExpr]bool
	// funcs are the functions the command line declares, by name, so
	// that feeding one code reaches the interpreter it runs.
	funcs        map[string]*syntax.Stmt
	globsUnknown bool
}

func (c *autoChecker) deny(format string, args ...any) {
	if c.why == "" {
		c.why = fmt.Sprintf(format, args...)
	}
}

// file checks every command of a parsed command line or code string.
func (c *autoChecker) file(f *syntax.File, depth int) {
	c.collectDirs(f, depth)
	syntax.Walk(f, func(n syntax.Node) bool {
		if c.why != "" {
			return false
		}
		switch n := n.(type) {
		case *syntax.Stmt:
			c.stmt(n)
		case *syntax.CallExpr:
			c.call(n, depth)
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				c.pipe(n)
			}
		case *syntax.WordIter:
			for _, w := range n.Items {
				if why := c.arg(w, true, false); why != "" {
					c.deny("%s", why)
				}
			}
		case *syntax.DeclClause:
			for _, a := range n.Args {
				c.assign(a)
			}
		case *syntax.Redirect:
			c.redirect(n)
		}
		return true
	})
}

// collectDirs finds the folders literal cd and pushd commands move to,
// following chains of them (cd a; cd b) a few rounds deep, and through
// eval's literal code, which runs in the same shell. It also notes the
// functions the code declares.
func (c *autoChecker) collectDirs(f *syntax.File, depth int) {
	for range 3 {
		before := len(c.sc.dirs)
		syntax.Walk(f, func(n syntax.Node) bool {
			if fn, ok := n.(*syntax.FuncDecl); ok && fn.Name != nil && fn.Body != nil {
				c.funcs[fn.Name.Value] = fn.Body
			}
			call, ok := n.(*syntax.CallExpr)
			if !ok || len(call.Args) == 0 || c.why != "" {
				return c.why == ""
			}
			words, literal := renderAll(call.Args), literals(call.Args)
			for range maxDepth {
				switch base(words[0]) {
				case "cd", "pushd":
					c.addDir(words[1:], literal[1:])
				case "eval":
					if code, ok, has := codeString(words, literal); has && ok && depth < maxDepth {
						if inner, err := parse(code); err == nil {
							c.collectDirs(inner, depth+1)
						}
					}
				}
				inner, ok := unwrap(words)
				if !ok || len(inner) == 0 {
					break
				}
				literal = literal[len(words)-len(inner):]
				words = inner
			}
			return true
		})
		if len(c.sc.dirs) == before {
			return
		}
	}
}

// addDir adds the folder `cd args` moves to, from every folder known so
// far. What cannot be followed is left to paths, which asks for it.
func (c *autoChecker) addDir(args []string, literal []bool) {
	i := 0
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-" {
		i++
	}
	if i < len(args) && args[i] == "--" {
		i++
	}
	if i >= len(args) || !literal[i] || c.g.root == "" {
		return
	}
	op := args[i]
	if op == "" || op == "-" || strings.HasPrefix(op, "~") {
		return
	}
	if hasGlobMeta(op) {
		c.deny("it changes to a folder named by a glob (cd %s), so infer cannot tell where later commands run", op)
		return
	}
	for _, d := range append([]workDir(nil), c.sc.dirs...) {
		text := filepath.Join(d.text, op)
		if filepath.IsAbs(op) {
			text = filepath.Clean(op)
		}
		// Bash's cd is logical by default (.. undoes the last step as
		// written) and physical with -P; either may apply.
		for _, nd := range []workDir{{text, resolvePath(text)}, {resolveFrom(d.real, op), resolveFrom(d.real, op)}} {
			if !under(c.g.realRoot, nd.real) || c.hasDir(nd) {
				continue
			}
			if len(c.sc.dirs) >= maxDirs {
				c.deny("it changes directory in too many ways for infer to follow")
				return
			}
			c.sc.dirs = append(c.sc.dirs, nd)
		}
	}
}

func (c *autoChecker) hasDir(d workDir) bool {
	for _, e := range c.sc.dirs {
		if e == d {
			return true
		}
	}
	return false
}

// stmt checks what a command reads on its standard input: code in a
// here-document, a here-string or a computed file (bash < <(…)) fed to
// an interpreter, or to a block or function that runs one, is code the
// guard cannot see; a file fed to one is a script it runs.
func (c *autoChecker) stmt(s *syntax.Stmt) {
	for _, r := range s.Redirs {
		if r.N != nil && r.N.Value != "0" {
			continue
		}
		how := ""
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			how = "a here-document"
		case syntax.WordHdoc:
			how = "a here-string"
		case syntax.RdrIn, syntax.RdrInOut:
			if r.Word != nil && !isQuotedLiteral(r.Word) {
				how = "a computed file (" + snippet(r.Word) + ")"
			}
		default:
			continue
		}
		target := ""
		if how == "" && r.Word != nil {
			target = render(r.Word)
		}
		if call, ok := s.Cmd.(*syntax.CallExpr); ok && len(call.Args) == 1 && render(call.Args[0]) == "exec" && target != "/dev/null" {
			c.deny("it replaces the shell's own input (exec with <); infer cannot follow what the commands after it read as code")
			return
		}
		name, ok := c.codeReader(s.Cmd, 0)
		if !ok {
			continue
		}
		if how != "" {
			c.deny("it feeds code to %s through %s; infer cannot see what it does", name, how)
			return
		}
		if target != "/dev/null" {
			c.runs = append(c.runs, target)
		}
	}
}

// codeReader returns a command within cmd that reads code from its
// standard input: an interpreter given no script, a program that reads
// commands (gdb, sqlite3, psql), or a function of this command line that
// runs one.
func (c *autoChecker) codeReader(cmd syntax.Node, depth int) (string, bool) {
	name, found := "", false
	if cmd == nil {
		return "", false
	}
	syntax.Walk(cmd, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if found || !ok || len(call.Args) == 0 {
			return !found
		}
		if iname, inv, ok := c.interpreter(call); ok && inv.stdin {
			name, found = iname, true
			return false
		}
		if body, ok := c.funcs[render(call.Args[0])]; ok && depth < maxDepth {
			if iname, ok := c.codeReader(body, depth+1); ok {
				name, found = iname+" (in function "+render(call.Args[0])+")", true
				return false
			}
		}
		return true
	})
	return name, found
}

// interpreter returns the interpreter a command runs once wrappers are
// looked through (env, timeout, nohup…), and what its arguments ask of
// it; ok is false when the command is not one.
func (c *autoChecker) interpreter(call *syntax.CallExpr) (string, invocation, bool) {
	words := renderAll(call.Args)
	for range maxDepth {
		if len(words) == 0 {
			break
		}
		if r, ok := runners[runnerName(words[0])]; ok {
			return base(words[0]), r.invoke(words[1:], c.exists), true
		}
		inner, ok := unwrapSplit(words)
		if !ok {
			break
		}
		words = inner
	}
	return "", invocation{}, false
}

// unwrapSplit is unwrap that also follows env -S, whose string is split
// into the command's first words (env -S 'bash -x' …).
func unwrapSplit(words []string) ([]string, bool) {
	if base(words[0]) == "env" {
		for i := 1; i < len(words); i++ {
			v, ok := strings.CutPrefix(words[i], "--split-string=")
			if !ok && (words[i] == "-S" || words[i] == "--split-string") && i+1 < len(words) {
				v, ok = words[i+1], true
				i++
			}
			if ok {
				return append(strings.Fields(v), words[i+1:]...), true
			}
		}
	}
	return unwrap(words)
}

// exists reports whether p names an existing file from some folder the
// command may run in.
func (c *autoChecker) exists(p string) bool {
	if filepath.IsAbs(p) {
		_, err := os.Stat(p)
		return err == nil
	}
	for _, d := range c.sc.dirs {
		if _, err := os.Stat(filepath.Join(d.text, p)); err == nil {
			return true
		}
	}
	return false
}

// pipe checks the commands reading a pipe: a shell, an interpreter
// without a script, or a function running one takes what flows in as
// code; xargs turns it into arguments, which is fine only when the
// producer lists project files.
func (c *autoChecker) pipe(b *syntax.BinaryCmd) {
	producer := lastCall(b.X)
	syntax.Walk(b.Y, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || c.why != "" {
			return c.why == ""
		}
		words := renderAll(call.Args)
		for range maxDepth {
			if len(words) == 0 {
				break
			}
			name := base(words[0])
			if isShell(name) {
				c.deny("it pipes into a shell (%s), which runs code nobody reviewed", name)
				return false
			}
			if name == "xargs" && call == firstCall(b.Y) && listsFiles(producer) {
				c.fed[call] = true
			}
			inner, ok := unwrapSplit(words)
			if !ok {
				break
			}
			words = inner
		}
		if name, ok := c.codeReader(call, 0); ok {
			c.deny("it pipes code into %s; infer cannot see what it does", name)
			return false
		}
		return true
	})
}

// firstCall is the command of a pipeline stage when it is a simple one.
func firstCall(s *syntax.Stmt) *syntax.CallExpr {
	call, _ := s.Cmd.(*syntax.CallExpr)
	return call
}

// lastCall is the last simple command of a pipeline, which writes to the
// pipe after it.
func lastCall(s *syntax.Stmt) *syntax.CallExpr {
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
		return lastCall(b.Y)
	}
	return firstCall(s)
}

// listsFiles reports whether a command writes only names of files under
// the folders it is given: find without actions that print anything
// else, fd, git ls-files, and grep or rg listing matching files.
func listsFiles(call *syntax.CallExpr) bool {
	if call == nil || len(call.Args) == 0 {
		return false
	}
	for _, w := range call.Args {
		if !isQuotedLiteral(w) {
			return false
		}
	}
	words := renderAll(call.Args)
	has := func(opts ...string) bool {
		for _, w := range words[1:] {
			for _, o := range opts {
				if w == o || strings.HasPrefix(w, o+"=") {
					return true
				}
			}
		}
		return false
	}
	switch base(words[0]) {
	case "find":
		return !has("-exec", "-execdir", "-ok", "-okdir", "-printf", "-fprintf", "-ls", "-fls", "-fprint", "-fprint0", "-delete")
	case "fd", "fdfind":
		return !has("-l", "--list-details", "-x", "--exec", "-X", "--exec-batch", "--format")
	case "git":
		return len(words) > 1 && words[1] == "ls-files" && !has("--format", "-s", "--stage", "--debug", "--eol")
	case "grep", "rg":
		return has("-l", "--files-with-matches", "-L", "--files-without-match", "--files")
	}
	return false
}

// call checks one simple command.
func (c *autoChecker) call(call *syntax.CallExpr, depth int) {
	c.calls++
	for _, a := range call.Assigns {
		c.assign(a)
	}
	if len(call.Args) == 0 || c.why != "" {
		return
	}
	if !isQuotedLiteral(call.Args[0]) {
		c.deny("its command name is computed when it runs (%s), so the deny list cannot be checked", render(call.Args[0]))
		return
	}
	c.count(renderAll(call.Args))
	c.words(call.Args, depth, c.fed[call])
}

// count records the base names a command's words name, once per word.
func (c *autoChecker) count(words []string) {
	for _, w := range words {
		seen := map[string]bool{}
		for _, cand := range candidates(w) {
			b := filepath.Base(filepath.Clean(cand.text))
			if b == "." || b == ".." || b == "/" || seen[b] {
				continue
			}
			seen[b] = true
			c.names[b]++
		}
	}
}

// words checks a command given as words (wrappers' inner commands are
// slices of the same words). fed says its input is a list of project
// files (see pipe).
func (c *autoChecker) words(args []*syntax.Word, depth int, fed bool) {
	if c.why != "" || len(args) == 0 {
		return
	}
	if depth > maxDepth {
		c.deny("it nests commands too deeply to check")
		return
	}
	words, literal := renderAll(args), literals(args)
	text := strings.Join(words, " ")
	name := base(words[0])
	short := strings.Join(append([]string{name}, words[1:]...), " ")
	for _, d := range c.g.deny {
		if d.match(text) || d.match(short) {
			c.deny("it matches the deny list (%s)", string(d))
			return
		}
	}
	if why := rmDisaster(words); why != "" {
		c.deny("%s", why)
		return
	}
	if why := pushRisk(words); why != "" {
		c.deny("%s", why)
		return
	}
	if _, ok := runners[runnerName(name)]; ok || name == "source" || name == "." || name == "awk" || name == "gawk" || name == "mawk" || name == "nawk" || name == "sed" || name == "gsed" {
		for _, w := range args[1:] {
			for _, p := range w.Parts {
				if _, ok := p.(*syntax.ProcSubst); ok {
					c.deny("it feeds a process substitution to %s, which runs code nobody reviewed", name)
					return
				}
			}
		}
	}
	if code, ok, has := codeString(words, literal); has {
		if !ok {
			c.deny("it runs a code string that is not literal (%s), so the deny list cannot be checked", shorten(text, 60))
			return
		}
		f, err := parse(code)
		if err != nil {
			c.deny("it runs a code string that could not be parsed (%s)", parseMessage(err))
			return
		}
		// The code is checked first, so that a deny-list match inside
		// gives the reason.
		c.file(f, depth+1)
		if c.why != "" {
			return
		}
	}
	if why := codeRisk(words); why != "" {
		c.deny("%s", why)
		return
	}
	// The wrapped command's words are checked in its own right (echo's
	// arguments are no paths even under timeout), so paths below looks
	// only at the wrapper's.
	own := len(words)
	if inner, ok := unwrap(words); ok && len(inner) > 0 {
		own = len(words) - len(inner)
		c.words(args[own:], depth+1, fed)
	}
	for _, cmd := range findExecs(words) {
		c.words(args[cmd.offset:cmd.offset+len(cmd.words)], depth+1, false)
	}
	if c.why != "" {
		return
	}
	if why := c.special(words, fed); why != "" {
		c.deny("%s", why)
		return
	}
	c.recordRuns(words)
	if why := c.g.followsOut(words); why != "" {
		c.deny("%s", why)
		return
	}
	c.paths(args[:own], words[:own])
}

// special applies the rules for single commands: settings that programs
// run as code, xargs reading names the guard cannot see, changes to
// configuration shared by every project, sourcing standard input, and
// the files sed scripts read and write.
func (c *autoChecker) special(words []string, fed bool) string {
	name := base(words[0])
	switch name {
	case "env":
		for _, w := range words[1:] {
			if strings.HasPrefix(w, "-") || !strings.Contains(w, "=") {
				continue
			}
			if v, value, _ := strings.Cut(w, "="); codeEnv[v] && !harmlessCommands[value] {
				return fmt.Sprintf("it sets %s, which programs run as a command or code; infer cannot see what it does", v)
			}
		}
	case "xargs":
		inner, _ := unwrap(words)
		if len(inner) > 0 && notPathCommands[base(inner[0])] {
			return ""
		}
		for _, w := range words[1:] {
			if w == "-a" || strings.HasPrefix(w, "--arg-file") || strings.HasPrefix(w, "-a") && len(w) > 2 {
				return "xargs reads the arguments it passes from a file; infer cannot see which files they name"
			}
		}
		if !fed {
			return "xargs passes what it reads as arguments; infer cannot see which files they name"
		}
		if l := c.g.outsideLink(); l != "" {
			return "xargs passes file names found in the project, and " + l
		}
	case "source", ".":
		if len(words) > 1 && isStdinPath(words[1]) {
			return "it sources code from standard input; infer cannot see what it does"
		}
	case "go":
		if len(words) > 2 && words[1] == "env" {
			for _, w := range words[2:] {
				if n, _, _ := strings.Cut(strings.TrimLeft(w, "-"), "="); strings.HasPrefix(w, "-") && (n == "w" || n == "u") {
					return "`go env " + w + "` changes the Go settings of every project, outside this one"
				}
			}
		}
	case "git":
		if len(words) > 1 && words[1] == "config" {
			for _, w := range words[2:] {
				if n, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "="); strings.HasPrefix(w, "--") && len(n) >= 2 && (strings.HasPrefix("global", n) || strings.HasPrefix("system", n)) {
					return "`git config " + w + "` reads or changes git settings shared with other projects, outside this one"
				}
			}
		}
	case "sed", "gsed":
		_, files := sedRisk(words[1:])
		for _, f := range files {
			if p := c.g.outsideWord(f, false, true, c.sc); p != "" {
				return "its sed script names " + p + ", which is outside the project"
			}
		}
	}
	return ""
}

// harmlessCommands are values of PAGER, GIT_EDITOR and the like that are
// common and run nothing of note (GIT_PAGER=cat git log, GIT_EDITOR=true
// git rebase --continue).
var harmlessCommands = map[string]bool{"": true, "cat": true, "true": true, ":": true, "less": true, "more": true}

func harmlessCommand(w *syntax.Word) bool {
	return isQuotedLiteral(w) && harmlessCommands[render(w)]
}

// recordRuns notes the scripts and programs a command runs from a file,
// for the written-then-run rule (see scripts).
func (c *autoChecker) recordRuns(words []string) {
	name := words[0]
	if strings.Contains(name, "/") {
		c.runs = append(c.runs, name)
	}
	switch b := base(name); {
	case b == "source" || b == ".":
		if len(words) > 1 {
			c.runs = append(c.runs, words[1])
		}
	case b == "awk" || b == "gawk" || b == "mawk" || b == "nawk":
		c.runs = append(c.runs, optionValues(words[1:], "fiE", "--file", "--include", "--exec")...)
	case b == "sed" || b == "gsed":
		c.runs = append(c.runs, optionValues(words[1:], "f", "--file")...)
	case b == "go" && len(words) > 2 && words[1] == "run":
		for _, w := range words[2:] {
			if strings.HasSuffix(w, ".go") {
				c.runs = append(c.runs, w)
			}
		}
	case (b == "deno" || b == "bun") && len(words) > 2 && words[1] == "run":
		if !strings.HasPrefix(words[2], "-") {
			c.runs = append(c.runs, words[2])
		}
	default:
		// Only interpreters run their first operand; make, vim, gdb or
		// sqlite3 read theirs as a target, a file or a database.
		if r, ok := runners[runnerName(b)]; ok && r.stdin && !r.console {
			if inv := r.invoke(words[1:], c.exists); inv.code == "" && inv.script != "" && !isStdinPath(inv.script) {
				c.runs = append(c.runs, inv.script)
			}
		}
	}
}

// optionValues returns the values of the given short options (in
// clusters, attached or in the next word) and long options.
func optionValues(args []string, shorts string, longs ...string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		w := args[i]
		if name, v, ok := strings.Cut(w, "="); ok && strings.HasPrefix(w, "--") {
			for _, l := range longs {
				if name == l {
					out = append(out, v)
				}
			}
			continue
		}
		for _, l := range longs {
			if w == l && i+1 < len(args) {
				out = append(out, args[i+1])
			}
		}
		if len(w) < 2 || w[0] != '-' || w[1] == '-' {
			continue
		}
		for j := 1; j < len(w); j++ {
			if strings.IndexByte(shorts, w[j]) < 0 {
				continue
			}
			if j+1 < len(w) {
				out = append(out, w[j+1:])
			} else if i+1 < len(args) {
				out = append(out, args[i+1])
			}
			break
		}
	}
	return out
}

// scripts applies the written-then-run rule: a script or program run from
// a file that the same command line also names elsewhere (writes with >,
// downloads with curl -o, edits with sed -i…), or that does not exist yet
// in a line of several commands (so one of them must create it, as tar or
// a build might), runs code the guard never saw.
func (c *autoChecker) scripts() {
	for _, r := range c.runs {
		if c.why != "" {
			return
		}
		b := filepath.Base(filepath.Clean(r))
		switch {
		case c.names[b] > 1:
			c.deny("it runs %s, which this command line also writes or names; infer cannot see what that code does", r)
		case c.calls > 1 && !c.exists(r):
			c.deny("it runs %s, which does not exist yet, so this command line would create it; infer cannot see what that code does", r)
		}
	}
}

// assign checks an assignment: its value for a path outside the project
// (x=/etc/passwd; cat $x), and its name for a variable programs run as
// code (GIT_SSH_COMMAND=…).
func (c *autoChecker) assign(a *syntax.Assign) {
	if a == nil || c.why != "" {
		return
	}
	if a.Name != nil && codeEnv[a.Name.Value] && (a.Value != nil && !harmlessCommand(a.Value) || a.Array != nil) {
		c.deny("it sets %s, which programs run as a command or code; infer cannot see what it does", a.Name.Value)
		return
	}
	values := []*syntax.Word{a.Value}
	if a.Array != nil {
		for _, e := range a.Array.Elems {
			values = append(values, e.Value)
		}
	}
	for _, w := range values {
		if w == nil {
			continue
		}
		var p string
		if isQuotedLiteral(w) {
			v := render(w)
			// Bash expands ~ after : in assignments (PATH=a:~/bin).
			if i := strings.Index(v, ":~"); i >= 0 {
				p = v[i+1:]
			} else {
				p = c.g.outsideWord(v, false, false, c.sc)
			}
		} else {
			p = c.g.outsideExpanding(render(w))
		}
		if p != "" {
			c.deny("it names %s, which is outside the project", p)
			return
		}
	}
}

// redirect checks a redirection's target like an argument that is
// certainly a path. Here-documents and here-strings name no file, and
// >&2 and <&0 name descriptors.
func (c *autoChecker) redirect(r *syntax.Redirect) {
	if r.Word == nil {
		return
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return
	}
	target := render(r.Word)
	if (r.Op == syntax.DplIn || r.Op == syntax.DplOut) && (isDigits(target) || target == "-") {
		return
	}
	if r.Op != syntax.RdrIn && isDiskDevice(target) {
		c.deny("it writes to a disk device (%s)", target)
		return
	}
	c.count([]string{target})
	if why := c.arg(r.Word, false, true); why != "" {
		c.deny("%s", why)
	}
}

// paths checks a command's arguments for paths outside the project, and
// for values computed at run time where a path may go. It runs after the
// commands nested in them are checked, so that a deny-list match inside
// (find / -exec rm -rf / ;) gives the reason. A cd without a directory
// goes home, and cd -, pushd and popd to a directory the guard cannot
// see, so the commands after them could read anything.
func (c *autoChecker) paths(args []*syntax.Word, words []string) {
	switch name := base(words[0]); {
	case name == "cd" && (len(words) == 1 || words[1] == "-"),
		(name == "pushd" || name == "popd") && len(words) == 1,
		name == "popd":
		c.deny("it changes to a directory outside the project (%s)", strings.Join(words, " "))
		return
	case (name == "cd" || name == "pushd") && os.Getenv("CDPATH") != "":
		if op := words[len(words)-1]; !filepath.IsAbs(op) && op != "." && op != ".." && !strings.HasPrefix(op, "./") && !strings.HasPrefix(op, "../") {
			c.deny("it changes directory through CDPATH, which may lead outside the project (%s)", strings.Join(words, " "))
			return
		}
	}
	strict := pathCommands[base(words[0])]
	for i := 1; i < len(args) && c.why == ""; i++ {
		if why := c.arg(args[i], notPath(words, i), strict); why != "" {
			c.deny("%s", why)
		}
	}
}

// pathCommands take only paths as operands, so an absolute word is a path
// even when its first folder does not exist yet (mkdir -p /new/x).
var pathCommands = map[string]bool{
	"mkdir": true, "touch": true, "cp": true, "mv": true, "rm": true, "rmdir": true, "ln": true,
	"tee": true, "install": true, "chmod": true, "chown": true, "chgrp": true, "truncate": true,
	"cd": true, "pushd": true, "cat": true, "head": true, "tail": true, "ls": true, "stat": true,
}

// notPathCommands never open their arguments as files: what a value
// computed at run time becomes there cannot make them read or write
// anything (echo "$(date)", exit $rc, kill $pid).
var notPathCommands = map[string]bool{
	"echo": true, "printf": true, "true": true, "false": true, ":": true, "exit": true, "return": true,
	"shift": true, "sleep": true, "kill": true, "wait": true, "seq": true, "expr": true, "let": true,
	"basename": true, "dirname": true, "unset": true, "read": true, "jobs": true,
}

// fileTests are test's operators that look at a file.
var fileTests = map[string]bool{
	"-a": true, "-b": true, "-c": true, "-d": true, "-e": true, "-f": true, "-g": true, "-h": true,
	"-k": true, "-p": true, "-r": true, "-s": true, "-t": false, "-u": true, "-w": true, "-x": true,
	"-G": true, "-L": true, "-N": true, "-O": true, "-S": true,
}

// messageOptions are options whose value is text, per program, so a
// computed value there names no file (git commit -m "$(cat <<EOF …)").
var messageOptions = map[string][]string{
	"git": {"-m", "--message"},
	"gh":  {"-t", "--title", "-b", "--body"},
	"hg":  {"-m", "--message"},
	"jj":  {"-m", "--message"},
	"svn": {"-m", "--message"},
}

// gitMessageCommands are the git subcommands whose -m is a message.
var gitMessageCommands = map[string]bool{"commit": true, "tag": true, "merge": true, "stash": true, "notes": true}

// notPath reports whether words[i] cannot be a path for the command:
// an argument of a command that opens no files, a string operand of
// test, or the value of a message option.
func notPath(words []string, i int) bool {
	name := base(words[0])
	if notPathCommands[name] {
		return true
	}
	prev, next := "", ""
	if i > 1 {
		prev = words[i-1]
	}
	if i+1 < len(words) {
		next = words[i+1]
	}
	if name == "test" || name == "[" {
		return !fileTests[prev] && prev != "-nt" && prev != "-ot" && prev != "-ef" && next != "-nt" && next != "-ot" && next != "-ef"
	}
	opts, ok := messageOptions[name]
	if !ok || name == "git" && (len(words) < 2 || !gitMessageCommands[words[1]]) {
		return false
	}
	for _, o := range opts {
		if prev == o || strings.HasPrefix(words[i], o+"=") {
			return true
		}
		// A cluster ending in the option letter takes the next word (git
		// commit -am "…"); one with text after it holds the value.
		if len(o) == 2 && (isShortCluster(prev) && strings.HasSuffix(prev, o[1:]) || name == "git" && strings.HasPrefix(words[i], o) && len(words[i]) > 2) {
			return true
		}
	}
	return false
}

// arg checks one word where a path may go. A value computed when the
// command runs is unknown there, so it asks, unless notPath says the word
// cannot be a path (a path the word is known to leave the project by
// still counts: echo $HOME). strict says the word is certainly a path
// (see outsideWord).
func (c *autoChecker) arg(w *syntax.Word, notPath, strict bool) string {
	if !isQuotedLiteral(w) {
		if p := c.g.outsideExpanding(render(w)); p != "" {
			return fmt.Sprintf("it names %s, which is outside the project", p)
		}
	}
	alts, ok := braceAlternatives(w)
	if !ok {
		return fmt.Sprintf("it uses brace expansion with too many results to check (%s)", shorten(render(w), 40))
	}
	for _, alt := range alts {
		text, glob, unknown := c.value(alt)
		if unknown != "" {
			if notPath {
				continue
			}
			return unknown
		}
		if glob && c.globsUnknown {
			return fmt.Sprintf("it changes how globs match (shopt), so infer cannot tell which files %s names", shorten(text, 40))
		}
		if p := c.g.outsideWord(text, glob, strict, c.sc); p != "" {
			return fmt.Sprintf("it names %s, which is outside the project", p)
		}
	}
	return ""
}

// value returns what a word becomes when the values of its expansions are
// known, and whether an unquoted glob remains in it; unknown says why
// the guard cannot know it. Numbers ($?, $#, $$, ${#x}, $((…))) are
// known well enough: they name no folder. A process substitution is a
// /dev/fd path.
func (c *autoChecker) value(w *syntax.Word) (text string, glob bool, unknown string) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			s, g := unescapeUnquoted(p.Value)
			b.WriteString(s)
			glob = glob || g
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false, fmt.Sprintf("it uses $'…' quoting (%s) where a file name may go; infer cannot see which file it names", snippet(p))
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false, fmt.Sprintf("it uses $\"…\" quoting (%s) where a file name may go; infer cannot see which file it names", snippet(p))
			}
			for _, q := range p.Parts {
				if lit, ok := q.(*syntax.Lit); ok {
					b.WriteString(unescapeDouble(lit.Value))
					continue
				}
				s, why := expansionValue(q)
				if why != "" {
					return "", false, why
				}
				b.WriteString(s)
			}
		default:
			s, why := expansionValue(part)
			if why != "" {
				return "", false, why
			}
			b.WriteString(s)
		}
	}
	return b.String(), glob, ""
}

// numericParams are shell variables that always hold a number or flag
// letters.
var numericParams = map[string]bool{
	"?": true, "#": true, "$": true, "!": true, "-": true, "RANDOM": true, "LINENO": true, "SECONDS": true,
	"BASHPID": true, "PPID": true, "UID": true, "EUID": true, "EPOCHSECONDS": true, "SRANDOM": true,
}

// expansionValue is value for one expansion: a stand-in for what it
// becomes, or why it cannot be known.
func expansionValue(part syntax.WordPart) (string, string) {
	switch p := part.(type) {
	case *syntax.ParamExp:
		if p.Length || p.Param != nil && numericParams[p.Param.Value] && !p.Excl && p.Exp == nil && p.Repl == nil && p.Slice == nil && p.Index == nil && p.Names == 0 {
			return "0", ""
		}
		return "", fmt.Sprintf("it uses %s where a file name may go; infer cannot see which file it names", snippet(p))
	case *syntax.ArithmExp:
		return "0", ""
	case *syntax.ProcSubst:
		return "/dev/fd/63", ""
	case *syntax.CmdSubst:
		return "", fmt.Sprintf("it computes an argument with command substitution (%s); infer cannot see which file it names", snippet(p))
	case *syntax.ExtGlob:
		return "", fmt.Sprintf("it uses an extended glob (%s); infer cannot tell which files it matches", snippet(p))
	default:
		return "", fmt.Sprintf("it uses a shell expansion (%s) where a file name may go; infer cannot see which file it names", snippet(part))
	}
}

// snippet prints a node on one line, shortened for messages.
func snippet(n syntax.Node) string {
	var buf bytes.Buffer
	if p, ok := n.(syntax.WordPart); ok {
		n = &syntax.Word{Parts: []syntax.WordPart{p}}
	}
	if err := syntax.NewPrinter(syntax.SingleLine(true)).Print(&buf, n); err != nil {
		return "?"
	}
	return shorten(buf.String(), 40)
}

// maxBraceWords bounds the words a brace expansion may produce before the
// guard gives up checking them.
const maxBraceWords = 256

// braceAlternatives returns the words bash's brace expansion makes of w
// (w itself when it has none). A sequence ({1..100}) becomes a * glob,
// which matches at least what the sequence names; ok is false when there
// are too many words to check.
func braceAlternatives(w *syntax.Word) ([]*syntax.Word, bool) {
	probe := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
	if !syntax.SplitBraces(probe) {
		return []*syntax.Word{w}, true
	}
	parts, ok := expandParts(probe.Parts)
	if !ok {
		return nil, false
	}
	out := make([]*syntax.Word, len(parts))
	for i, p := range parts {
		out[i] = &syntax.Word{Parts: p}
	}
	return out, true
}

func expandParts(parts []syntax.WordPart) ([][]syntax.WordPart, bool) {
	results := [][]syntax.WordPart{nil}
	for _, part := range parts {
		be, ok := part.(*syntax.BraceExp)
		var choices [][]syntax.WordPart
		switch {
		case !ok:
			choices = [][]syntax.WordPart{{part}}
		case be.Sequence:
			choices = [][]syntax.WordPart{{&syntax.Lit{Value: "*"}}}
		case len(be.Elems) <= 1:
			// One element stays literal, braces and all (HEAD@{1}).
			lit := []syntax.WordPart{&syntax.Lit{Value: "{"}}
			for _, e := range be.Elems {
				lit = append(lit, e.Parts...)
			}
			choices = [][]syntax.WordPart{append(lit, &syntax.Lit{Value: "}"})}
		default:
			for _, e := range be.Elems {
				sub, ok := expandParts(e.Parts)
				if !ok {
					return nil, false
				}
				choices = append(choices, sub...)
			}
		}
		if len(results)*len(choices) > maxBraceWords {
			return nil, false
		}
		var next [][]syntax.WordPart
		for _, r := range results {
			for _, ch := range choices {
				next = append(next, append(append([]syntax.WordPart(nil), r...), ch...))
			}
		}
		results = next
	}
	return results, true
}

func literals(ws []*syntax.Word) []bool {
	out := make([]bool, len(ws))
	for i, w := range ws {
		out[i] = isQuotedLiteral(w)
	}
	return out
}
