// Package bashguard decides which Bash commands may run without asking.
//
// It parses commands with mvdan.cc/sh/v3/syntax, a real Bash parser, rather
// than scanning text: quoting decides what a character means, and only a
// parser gets `echo "a && b"` (one harmless command) and `echo "$(rm x)"` (a
// hidden second command) both right.
//
// Three questions are answered here, each for a different mode:
//
//   - Allowed: may this command run without asking in standard or plan mode?
//     Only a single simple command made of literal words that matches an
//     allowlist pattern qualifies (see Analyze for everything that does not).
//   - CheckAuto: does this command hit the deny list, name a path outside
//     the project, or do something the guard cannot see (hand code to an
//     interpreter, compute a path when it runs)? Any of those still asks,
//     even in auto mode. Every command inside the input is checked,
//     including those hidden in chains, pipes, substitutions and wrappers
//     like `env`.
//   - Prefix / Covers: what would "always allow" save, and does a saved
//     prefix cover a command? Structurally unsafe commands are never covered.
//
// Paths are judged as the kernel will see them: symbolic links are
// followed, globs are expanded against the project, and every spot of a
// word a program may read as a path is looked at. When the guard cannot
// know what a command touches, it asks.
//
// The guard decides when to ask; it is not a sandbox. A command that an
// allowlisted program is tricked into running through its own
// configuration files, or a file a program creates and another then runs
// without either being named, is beyond what parsing can see: the kernel
// sandbox is what keeps those promises.
package bashguard

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Analysis is what the parser makes of one command line.
type Analysis struct {
	// Words are the command's words with quoting removed, when the input is
	// exactly one simple command made of literal words; nil otherwise.
	Words []string
	// Glob is true when some word holds an unquoted glob (*, ? or [),
	// which the shell expands to file names before the command runs.
	Glob bool
	// Inputs are files read through `< file` redirections.
	Inputs []string
	// Unsafe says why the command is not a single literal simple command
	// (e.g. "it uses a pipe (|)"); empty when it is one.
	Unsafe string
	// globbed says, per word, whether it holds an unquoted glob, so the
	// path check can expand that word and no other.
	globbed []bool
}

// parse parses command as Bash, the shell the Bash tool runs.
func parse(command string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
}

// Analyze parses command and reports whether it is one simple command made
// only of literal words. Never literal: pipes, chains (&&, ||, ;, several
// lines), background &, redirections to files (2>&1, >/dev/null and
// `< file` are fine), here-documents, command and process substitution,
// variable, tilde, arithmetic and brace expansion, subshells, blocks,
// control flow, function declarations, environment prefixes (FOO=1 cmd),
// $'…' quoting, and commands that run other commands or code strings (eval,
// exec, source, bash -c, python -c, awk programs that run commands, sed's
// e, xargs, env, find -exec, git -c, …; see codeRisk). Unquoted globs
// are literal here but flagged in Glob, because the allowlist treats them
// per command.
func Analyze(command string) Analysis {
	if strings.TrimSpace(command) == "" {
		return Analysis{Unsafe: "it is empty"}
	}
	f, err := parse(command)
	if err != nil {
		return Analysis{Unsafe: "it could not be parsed as Bash (" + parseMessage(err) + ")"}
	}
	if n := len(f.Stmts); n != 1 {
		return Analysis{Unsafe: fmt.Sprintf("it has %d commands (chains with ;, &&, || or several lines are never auto-approved)", n)}
	}
	a := &analyzer{src: command}
	a.stmt(f.Stmts[0])
	if a.unsafe != "" {
		return Analysis{Unsafe: a.unsafe}
	}
	if why := runsOtherCode(a.words); why != "" {
		return Analysis{Unsafe: why}
	}
	return Analysis{Words: a.words, Glob: a.glob, Inputs: a.inputs, globbed: a.globbed}
}

func parseMessage(err error) string {
	if pe, ok := err.(syntax.ParseError); ok {
		return pe.Text
	}
	return err.Error()
}

// analyzer walks one statement, stopping at the first unsafe construct.
type analyzer struct {
	src     string
	words   []string
	globbed []bool
	glob    bool
	inputs  []string
	unsafe  string
}

func (a *analyzer) fail(format string, args ...any) {
	if a.unsafe == "" {
		a.unsafe = fmt.Sprintf(format, args...)
	}
}

// snippet returns the source text of n, shortened for messages.
func (a *analyzer) snippet(n syntax.Node) string {
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(a.src) || start >= end {
		return ""
	}
	return shorten(a.src[start:end], 40)
}

func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func (a *analyzer) stmt(s *syntax.Stmt) {
	switch {
	case s.Background:
		a.fail("it runs in the background (&)")
	case s.Coprocess:
		a.fail("it starts a coprocess (|&)")
	case s.Disown:
		a.fail("it disowns a background job")
	case s.Negated:
		a.fail("it negates a command (!)")
	}
	for _, r := range s.Redirs {
		a.redirect(r)
	}
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok {
		a.fail("%s", compoundReason(s.Cmd))
		return
	}
	if len(call.Assigns) > 0 {
		a.fail("it sets environment variables before the command (%s)", a.snippet(call.Assigns[0]))
		return
	}
	for _, w := range call.Args {
		if a.unsafe != "" {
			return
		}
		lit, glob := a.word(w)
		a.glob = a.glob || glob
		a.words = append(a.words, lit)
		a.globbed = append(a.globbed, glob)
	}
}

// compoundReason names a command that is not a simple command.
func compoundReason(c syntax.Command) string {
	switch c := c.(type) {
	case nil:
		return "it has no command"
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.Pipe:
			return "it uses a pipe (|); pipes are never auto-approved"
		case syntax.PipeAll:
			return "it uses a pipe (|&); pipes are never auto-approved"
		default:
			return "it chains commands (" + c.Op.String() + "); chains are never auto-approved"
		}
	case *syntax.Subshell:
		return "it runs a subshell ( … )"
	case *syntax.Block:
		return "it runs a block { … }"
	case *syntax.FuncDecl:
		return "it declares a function"
	case *syntax.IfClause, *syntax.WhileClause, *syntax.ForClause, *syntax.CaseClause:
		return "it uses shell control flow (if, while, for or case)"
	case *syntax.ArithmCmd, *syntax.LetClause:
		return "it evaluates shell arithmetic"
	case *syntax.TestClause:
		return "it uses a [[ … ]] test"
	case *syntax.DeclClause:
		return "it declares or exports variables (" + c.Variant.Value + ")"
	case *syntax.TimeClause:
		return "it times another command (time)"
	case *syntax.CoprocClause:
		return "it starts a coprocess"
	default:
		return "it is not a simple command"
	}
}

// redirect accepts only redirections that neither write files nor run code:
// fd duplication (2>&1), discarding to /dev/null, and reading `< file`.
func (a *analyzer) redirect(r *syntax.Redirect) {
	if r.N != nil && strings.HasPrefix(r.N.Value, "{") {
		a.fail("it redirects through a file-descriptor variable (%s)", a.snippet(r))
		return
	}
	switch r.Op {
	case syntax.DplOut, syntax.DplIn:
		if t := r.Word.Lit(); t == "-" || isDigits(t) {
			return
		}
		a.fail("it redirects output to a file (%s)", a.snippet(r))
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob:
		if r.Word.Lit() == "/dev/null" {
			return
		}
		a.fail("it redirects output to a file (%s)", a.snippet(r))
	case syntax.RdrIn:
		sub := &analyzer{src: a.src}
		lit, glob := sub.word(r.Word)
		if sub.unsafe != "" {
			a.fail("%s", sub.unsafe)
			return
		}
		if glob {
			a.fail("it reads from a globbed file name (%s)", a.snippet(r))
			return
		}
		a.inputs = append(a.inputs, lit)
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		a.fail("it uses a here-document or here-string (%s)", a.snippet(r))
	default:
		a.fail("it redirects to or from a file (%s)", a.snippet(r))
	}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// word returns w without its quoting, and whether it holds an unquoted
// glob. Anything the shell would expand at run time makes it unsafe.
func (a *analyzer) word(w *syntax.Word) (string, bool) {
	if expandsBraces(w) {
		a.fail("it uses brace expansion (%s)", a.snippet(w))
		return "", false
	}
	var b strings.Builder
	glob := false
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			// Bash expands an unquoted ~ at the start of a word and after
			// = or : (as in --dir=~/x), so all three count.
			if i == 0 && strings.HasPrefix(p.Value, "~") || strings.Contains(p.Value, "=~") || strings.Contains(p.Value, ":~") {
				a.fail("it uses ~, which expands to a home directory (%s)", a.snippet(w))
				return "", false
			}
			s, g := unescapeUnquoted(p.Value)
			b.WriteString(s)
			glob = glob || g
		case *syntax.SglQuoted:
			if p.Dollar {
				a.fail("it uses $'…' quoting (%s)", a.snippet(p))
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				a.fail("it uses $\"…\" quoting (%s)", a.snippet(p))
				return "", false
			}
			for _, inner := range p.Parts {
				lit, ok := inner.(*syntax.Lit)
				if !ok {
					a.fail("%s", expansionReason(inner, a.snippet(inner)))
					return "", false
				}
				b.WriteString(unescapeDouble(lit.Value))
			}
		default:
			a.fail("%s", expansionReason(part, a.snippet(part)))
			return "", false
		}
	}
	return b.String(), glob
}

// expandsBraces reports whether Bash would brace-expand w. Braces with a
// single element, like HEAD@{1} or find's {}, stay literal in Bash.
func expandsBraces(w *syntax.Word) bool {
	probe := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
	if !syntax.SplitBraces(probe) {
		return false
	}
	found := false
	syntax.Walk(probe, func(n syntax.Node) bool {
		if b, ok := n.(*syntax.BraceExp); ok && (b.Sequence || len(b.Elems) > 1) {
			found = true
		}
		return !found
	})
	return found
}

// expansionReason names a word part that the shell expands at run time.
func expansionReason(p syntax.WordPart, src string) string {
	switch p := p.(type) {
	case *syntax.ParamExp:
		return "it expands a variable (" + src + ")"
	case *syntax.CmdSubst:
		if p.Backquotes {
			return "it uses command substitution with backticks (" + src + ")"
		}
		return "it uses command substitution (" + src + ")"
	case *syntax.ArithmExp:
		return "it uses arithmetic expansion (" + src + ")"
	case *syntax.ProcSubst:
		return "it uses process substitution (" + src + ")"
	case *syntax.ExtGlob:
		return "it uses an extended glob (" + src + ")"
	default:
		return "it uses a shell expansion (" + src + ")"
	}
}

// unescapeUnquoted removes backslash escapes from an unquoted literal and
// reports whether an unescaped glob character remains.
func unescapeUnquoted(s string) (string, bool) {
	var b strings.Builder
	glob := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		case c == '*' || c == '?' || c == '[':
			glob = true
		}
		b.WriteByte(c)
	}
	return b.String(), glob
}

// unescapeDouble removes the backslash escapes that double quotes honour.
func unescapeDouble(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
				b.WriteByte(s[i])
				continue
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// shells run a code string given with -c.
var shells = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true, "mksh": true, "ash": true,
	"yash": true, "rbash": true, "csh": true, "tcsh": true,
}

// codeRunners run another command or a string of code, so what they do is
// not visible in their own name.
var codeRunners = map[string]bool{
	"eval": true, "exec": true, "source": true, ".": true, "command": true, "builtin": true,
	"env": true, "xargs": true, "nohup": true, "nice": true, "timeout": true, "time": true,
	"sudo": true, "doas": true, "su": true, "setsid": true, "stdbuf": true, "chroot": true,
	"flock": true, "watch": true, "parallel": true, "trap": true, "alias": true,
	"unbuffer": true, "ionice": true, "taskset": true, "strace": true, "ltrace": true, "script": true,
}

// runsOtherCode says why a literal command runs code its words do not
// show, or returns "".
func runsOtherCode(words []string) string {
	if len(words) == 0 {
		return "it has no command"
	}
	name := path.Base(words[0])
	if codeRunners[name] {
		return "`" + name + "` runs another command or code string, so it is never auto-approved"
	}
	if shells[name] {
		for _, w := range words[1:] {
			if isShortCluster(w) && strings.ContainsRune(w, 'c') {
				return "`" + name + " -c` runs a string as code, so it is never auto-approved"
			}
		}
	}
	if why := codeRisk(words); why != "" {
		return why
	}
	switch name {
	case "find":
		for _, w := range words[1:] {
			switch w {
			case "-exec", "-execdir", "-ok", "-okdir":
				return "`find " + w + "` runs another command, so it is never auto-approved"
			}
		}
	case "git":
		for _, w := range words[1:] {
			if !strings.HasPrefix(w, "-") {
				break
			}
			if w == "-c" || strings.HasPrefix(w, "--config-env") || strings.HasPrefix(w, "--exec-path") {
				return "`git " + w + "` can change which programs git runs, so it is never auto-approved"
			}
		}
	case "rg":
		for _, w := range words[1:] {
			if w == "--pre" || strings.HasPrefix(w, "--pre=") {
				return "`rg --pre` runs another command, so it is never auto-approved"
			}
		}
	}
	return ""
}

// isShortCluster reports whether w is a cluster of short options like -lc.
func isShortCluster(w string) bool {
	if len(w) < 2 || w[0] != '-' || w[1] == '-' {
		return false
	}
	for _, r := range w[1:] {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return false
		}
	}
	return true
}
