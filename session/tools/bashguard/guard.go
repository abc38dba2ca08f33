package bashguard

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Config configures a Guard.
type Config struct {
	// Root is the project root. Built-in read-only commands that name a
	// path outside it (an absolute path, ~ or ..) are not auto-approved.
	// Empty means every absolute or parent path needs approval.
	Root string
	// Allow adds allowlist patterns (see Pattern) that run without asking
	// in standard mode only: plan mode uses the built-in read-only list,
	// because a configured command may write.
	Allow []string
	// Deny adds deny globs (see CheckAuto) that ask even in auto mode.
	Deny []string
}

// Guard answers the allowlist and deny-list questions for one project. It
// is immutable and safe for concurrent use.
type Guard struct {
	root  string
	allow []Pattern
	deny  []denyGlob
}

// New builds a Guard, rejecting malformed patterns with the reason.
func New(cfg Config) (*Guard, error) {
	g := &Guard{}
	if cfg.Root != "" {
		g.root = cfg.Root
		if root, err := filepath.Abs(cfg.Root); err == nil {
			g.root = root
		}
	}
	for _, s := range cfg.Allow {
		p, err := ParsePattern(s)
		if err != nil {
			return nil, fmt.Errorf("tools.bash.allow: %w", err)
		}
		g.allow = append(g.allow, p)
	}
	for _, s := range append(append([]string(nil), builtinDeny...), cfg.Deny...) {
		d, err := parseDeny(s)
		if err != nil {
			return nil, fmt.Errorf("tools.bash.deny: %w", err)
		}
		g.deny = append(g.deny, d)
	}
	return g, nil
}

// Default is a Guard with only the built-in lists. It cannot fail.
func Default(root string) *Guard {
	g, err := New(Config{Root: root})
	if err != nil {
		panic("bashguard: built-in lists: " + err.Error())
	}
	return g
}

// Allowed reports whether command may run without asking, with a reason
// either way: which pattern allowed it, or why it was not allowed (e.g.
// "it uses a pipe (|); pipes are never auto-approved"). readOnlyOnly
// restricts the check to the built-in read-only allowlist, as plan mode
// does. Allowed does not consult the deny list; callers check CheckAuto
// first.
func (g *Guard) Allowed(command string, readOnlyOnly bool) (bool, string) {
	a := Analyze(command)
	if a.Unsafe != "" {
		return false, a.Unsafe
	}
	why := ""
	for _, c := range builtinReadOnly {
		if !c.pattern.Match(a.Words) {
			continue
		}
		if bad := c.forbidden(a.Words[len(c.pattern.Words):]); bad != "" {
			why = fmt.Sprintf("`%s` is not read-only with %s", a.Words[0], bad)
		} else if a.Glob && !c.globSafe {
			why = "it uses an unquoted glob, which could expand to a file named like an option"
		} else if p := g.outside(a); p != "" {
			why = fmt.Sprintf("it names %s, which is outside the project", p)
		} else {
			return true, "on the read-only allowlist (" + c.pattern.String() + ")"
		}
		break
	}
	if !readOnlyOnly {
		for _, p := range g.allow {
			if p.Match(a.Words) {
				return true, "allowed by your configuration (" + p.String() + ")"
			}
		}
	}
	if why != "" {
		return false, why
	}
	list := "allowlist"
	if readOnlyOnly {
		list = "read-only allowlist"
	}
	return false, fmt.Sprintf("`%s` is not on the %s", shorten(joinQuoted(a.Words), 60), list)
}

// outside returns the first argument or input file that names a path
// outside the project (see outsideWord), or "".
func (g *Guard) outside(a Analysis) string {
	for _, w := range append(append([]string(nil), a.Words[1:]...), a.Inputs...) {
		if p := g.outsideWord(w, true); p != "" {
			return p
		}
	}
	return ""
}

// inside reports whether p, taken relative to the root, stays inside it.
// Words that are not paths stay inside trivially.
func (g *Guard) inside(p string) bool {
	if !filepath.IsAbs(p) && !hasParentElem(p) {
		return true
	}
	if g.root == "" {
		return false
	}
	full := p
	if !filepath.IsAbs(p) {
		full = filepath.Join(g.root, p)
	}
	rel, err := filepath.Rel(g.root, filepath.Clean(full))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// outsideWord returns the path w names outside the project, or "". A
// literal word is checked whole and, when it carries a value, by that value
// too: after its first = (if=/etc/x, --file=/etc/x, DESTDIR=/usr/local) or
// after a short option's letter (-C/home/me). A value counts when it starts
// with ~, or looks like a path (see looksLikePath) that resolves outside
// the root. A word the shell expands is judged by what can be seen before
// it runs (see outsideExpanding).
func (g *Guard) outsideWord(w string, literal bool) string {
	if !literal {
		return g.outsideExpanding(w)
	}
	candidates := []string{w}
	if _, v, ok := strings.Cut(w, "="); ok {
		candidates = append(candidates, v)
	}
	if len(w) > 2 && w[0] == '-' && w[1] != '-' {
		candidates = append(candidates, w[2:])
	}
	for _, p := range candidates {
		switch {
		case strings.HasPrefix(p, "~"):
			return p
		case standardStream(p), !looksLikePath(p):
		case !g.inside(p):
			return p
		}
	}
	return ""
}

// outsideExpanding judges a word the shell expands: $HOME or ~ at its
// start, a .. element anywhere ($PWD/../../etc), or a literal start that
// is already outside (/home/$USER/.ssh) count. Other variables are only
// known when the command runs, which the guard cannot see.
func (g *Guard) outsideExpanding(w string) string {
	v := strings.TrimPrefix(w, `"`)
	if strings.HasPrefix(v, "$HOME") || strings.HasPrefix(v, "${HOME}") || strings.HasPrefix(v, "~") || hasParentElem(v) {
		return w
	}
	lit := v
	if i := strings.IndexAny(v, "$`"); i >= 0 {
		lit = v[:i]
	}
	if strings.HasPrefix(lit, "/") && !g.inside(lit[:strings.LastIndexByte(lit, '/')+1]) {
		return w
	}
	return ""
}

// redirectOutside returns the file a redirection names outside the
// project, or "". Here-documents and here-strings name no file, and >&2
// and <&0 name descriptors.
func (g *Guard) redirectOutside(r *syntax.Redirect) string {
	if r.Word == nil {
		return ""
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return ""
	}
	target := render(r.Word)
	if (r.Op == syntax.DplIn || r.Op == syntax.DplOut) && (isDigits(target) || target == "-") {
		return ""
	}
	return g.outsideWord(target, isQuotedLiteral(r.Word))
}

// standardStream reports whether p is one of the device files every
// program may read or write without touching anything: /dev/null, the
// standard streams, the terminal and /dev/fd/N.
func standardStream(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/")
}

// looksLikePath reports whether a literal word may be a file path that
// inside should judge: one on one line, without the anchors, groups and
// alternations of a regular expression, that leaves its directory through
// .. or is absolute and starts with a folder that exists (or names a file
// right under /). Patterns that start with / are common arguments (sed's
// '/^$/d', awk's '/ERROR/', grep's "/api/users") and name no file, since
// no /api exists; spaces are allowed ("Application Support").
func looksLikePath(p string) bool {
	if strings.ContainsAny(p, "\n^$()|\\") {
		return false
	}
	if hasParentElem(p) {
		return true
	}
	if !strings.HasPrefix(p, "/") {
		return false
	}
	first, _, nested := strings.Cut(p[1:], "/")
	if !nested || first == "" {
		return true
	}
	_, err := os.Lstat("/" + first)
	return err == nil
}

func hasParentElem(p string) bool {
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return true
		}
	}
	return false
}

// CheckAuto reports whether command may run in auto mode. It checks every
// simple command anywhere in the input (chains, pipes, substitutions,
// function bodies) against the deny list, looks through wrappers such as
// env, nohup, timeout, xargs, find -exec, eval and bash -c, and applies
// structural rules: recursive rm of / or a home directory, piping or
// feeding code into a shell, and writing to a disk device. A command whose
// name is computed at run time, or a code string that is not literal,
// cannot be checked, so it is not allowed either. So is a command that
// names a path outside the project (see outsideWord), in an argument or a
// redirection: those ask in every mode. The reason says which rule applied.
func (g *Guard) CheckAuto(command string) (bool, string) {
	f, err := parse(command)
	if err != nil {
		return false, "it could not be parsed as Bash (" + parseMessage(err) + "), so the deny list cannot be checked"
	}
	c := &autoChecker{g: g, src: command}
	c.file(f, 0)
	if c.why != "" {
		return false, c.why
	}
	return true, ""
}

// maxDepth bounds nested code strings (bash -c "eval '…'").
const maxDepth = 8

type autoChecker struct {
	g   *Guard
	src string
	why string
}

func (c *autoChecker) deny(format string, args ...any) {
	if c.why == "" {
		c.why = fmt.Sprintf(format, args...)
	}
}

func (c *autoChecker) file(f *syntax.File, depth int) {
	syntax.Walk(f, func(n syntax.Node) bool {
		if c.why != "" {
			return false
		}
		switch n := n.(type) {
		case *syntax.CallExpr:
			c.call(n, depth)
		case *syntax.BinaryCmd:
			if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
				if call, ok := n.Y.Cmd.(*syntax.CallExpr); ok {
					if name := c.innermostName(call); shells[name] {
						c.deny("it pipes into a shell (%s), which runs code nobody reviewed", name)
					}
				}
			}
		case *syntax.WordIter:
			for _, w := range n.Items {
				c.word(w)
			}
		case *syntax.DeclClause:
			for _, a := range n.Args {
				c.assign(a)
			}
		case *syntax.Redirect:
			if n.Op != syntax.RdrIn && n.Word != nil && isDiskDevice(render(n.Word)) {
				c.deny("it writes to a disk device (%s)", render(n.Word))
			} else if p := c.g.redirectOutside(n); p != "" {
				c.deny("it names %s, which is outside the project", p)
			}
		}
		return true
	})
}

// innermostName is a piped-into command's name after unwrapping wrappers.
func (c *autoChecker) innermostName(call *syntax.CallExpr) string {
	words := renderAll(call.Args)
	for range maxDepth {
		if len(words) == 0 {
			return ""
		}
		inner, ok := unwrap(words)
		if !ok || len(inner) == 0 {
			return base(words[0])
		}
		words = inner
	}
	return ""
}

// word checks a word that is not an argument of a command for a path
// outside the project: a for loop's list, an assignment's value.
func (c *autoChecker) word(w *syntax.Word) {
	if p := c.g.outsideWord(render(w), isQuotedLiteral(w)); p != "" {
		c.deny("it names %s, which is outside the project", p)
	}
}

// assign checks an assignment's value (x=/etc/passwd; cat $x).
func (c *autoChecker) assign(a *syntax.Assign) {
	if a != nil && a.Value != nil {
		c.word(a.Value)
	}
}

// call checks one simple command.
func (c *autoChecker) call(call *syntax.CallExpr, depth int) {
	for _, a := range call.Assigns {
		c.assign(a)
	}
	if len(call.Args) == 0 {
		return
	}
	if !isQuotedLiteral(call.Args[0]) {
		c.deny("its command name is computed when it runs (%s), so the deny list cannot be checked", render(call.Args[0]))
		return
	}
	words := renderAll(call.Args)
	literal := make([]bool, len(call.Args))
	for i, w := range call.Args {
		literal[i] = isQuotedLiteral(w)
	}
	name := base(words[0])
	if shells[name] || name == "source" || name == "." {
		for _, w := range call.Args[1:] {
			for _, p := range w.Parts {
				if _, ok := p.(*syntax.ProcSubst); ok {
					c.deny("it feeds a process substitution to %s, which runs code nobody reviewed", name)
					return
				}
			}
		}
	}
	c.words(words, literal, depth)
}

// words checks a command given as rendered words; literal says which words
// hold no expansion (wrappers' inner commands reuse the flags).
func (c *autoChecker) words(words []string, literal []bool, depth int) {
	if c.why != "" || len(words) == 0 {
		return
	}
	if depth > maxDepth {
		c.deny("it nests commands too deeply to check")
		return
	}
	text := strings.Join(words, " ")
	short := strings.Join(append([]string{base(words[0])}, words[1:]...), " ")
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
		c.file(f, depth+1)
		c.paths(words, literal)
		return
	}
	if inner, ok := unwrap(words); ok && len(inner) > 0 {
		off := len(words) - len(inner)
		c.words(inner, literal[off:], depth+1)
	}
	for _, cmd := range findExecs(words) {
		c.words(cmd.words, literal[cmd.offset:cmd.offset+len(cmd.words)], depth+1)
	}
	c.paths(words, literal)
}

// paths checks a command's arguments for paths outside the project. It
// runs after the commands nested in them are checked, so that a deny-list
// match inside (find / -exec rm -rf / ;) gives the reason. A cd without a
// directory goes home, and cd -, pushd and popd to a directory the guard
// cannot see, so the commands after them could read anything.
func (c *autoChecker) paths(words []string, literal []bool) {
	switch name := base(words[0]); {
	case name == "cd" && (len(words) == 1 || words[1] == "-"),
		(name == "pushd" || name == "popd") && len(words) == 1,
		name == "popd":
		c.deny("it changes to a directory outside the project (%s)", strings.Join(words, " "))
		return
	}
	for i := 1; i < len(words) && c.why == ""; i++ {
		if p := c.g.outsideWord(words[i], literal[i]); p != "" {
			c.deny("it names %s, which is outside the project", p)
		}
	}
}

// codeString finds the code string of eval, `sh -c`, `env -S`, alias and
// trap. has is false when the command has none; ok is false when some word
// of it is not literal.
func codeString(words []string, literal []bool) (code string, ok, has bool) {
	name := base(words[0])
	from := -1
	switch {
	case name == "eval":
		from = 1
	case name == "trap" && len(words) > 1:
		return words[1], literal[1], true
	case name == "alias":
		var parts []string
		for i, w := range words[1:] {
			if _, v, found := strings.Cut(w, "="); found {
				if !literal[i+1] {
					return "", false, true
				}
				parts = append(parts, v)
			}
		}
		return strings.Join(parts, "\n"), true, len(parts) > 0
	case shells[name]:
		for i := 1; i < len(words); i++ {
			if isShortCluster(words[i]) && strings.ContainsRune(words[i], 'c') && i+1 < len(words) {
				return words[i+1], literal[i+1], true
			}
		}
	case name == "env":
		for i := 1; i < len(words); i++ {
			if (words[i] == "-S" || words[i] == "--split-string") && i+1 < len(words) {
				return words[i+1], literal[i+1], true
			}
			if v, found := strings.CutPrefix(words[i], "--split-string="); found {
				return v, literal[i], true
			}
		}
	}
	if from < 0 || from >= len(words) {
		return "", false, false
	}
	for _, l := range literal[from:] {
		if !l {
			return "", false, true
		}
	}
	return strings.Join(words[from:], " "), true, true
}

// wrapperArgs lists, per wrapper, the options that take a separate value
// and how many leading operands precede the wrapped command.
var wrapperArgs = map[string]struct {
	valued   string // short options taking a value, e.g. "n" for nice -n 5
	operands int
}{
	"env":      {"uCS", 0},
	"command":  {"", 0},
	"builtin":  {"", 0},
	"exec":     {"a", 0},
	"nice":     {"n", 0},
	"nohup":    {"", 0},
	"time":     {"fo", 0},
	"timeout":  {"ks", 1},
	"xargs":    {"adEeIiLlnPs", 0},
	"sudo":     {"ugCDhprTU", 0},
	"doas":     {"uC", 0},
	"setsid":   {"", 0},
	"stdbuf":   {"ioe", 0},
	"chroot":   {"", 1},
	"flock":    {"wEc", 1},
	"ionice":   {"cnp", 0},
	"taskset":  {"", 1},
	"unbuffer": {"", 0},
	"strace":   {"eoEpsuU", 0},
	"watch":    {"nd", 0},
}

// unwrap returns the command a wrapper such as `env X=1 nohup cmd` runs.
func unwrap(words []string) ([]string, bool) {
	name := base(words[0])
	spec, ok := wrapperArgs[name]
	if !ok {
		return nil, false
	}
	i := 1
	for i < len(words) {
		w := words[i]
		if w == "--" {
			i++
			break
		}
		if name == "env" && strings.Contains(w, "=") && !strings.HasPrefix(w, "-") {
			i++
			continue
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			break
		}
		i++
		if !strings.HasPrefix(w, "--") && len(w) == 2 && strings.ContainsRune(spec.valued, rune(w[1])) {
			i++
		}
	}
	i += spec.operands
	if i >= len(words) {
		return nil, true
	}
	return words[i:], true
}

type execCmd struct {
	words  []string
	offset int
}

// findExecs returns the commands of find's -exec family of actions.
func findExecs(words []string) []execCmd {
	if base(words[0]) != "find" {
		return nil
	}
	var out []execCmd
	for i := 1; i < len(words); i++ {
		switch words[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			start := i + 1
			end := start
			for end < len(words) && words[end] != ";" && words[end] != "+" {
				end++
			}
			if end > start {
				out = append(out, execCmd{words: words[start:end], offset: start})
			}
			i = end
		}
	}
	return out
}

// rmDisaster catches recursive rm of / or a home directory in any flag
// spelling, which a glob list cannot.
func rmDisaster(words []string) string {
	if base(words[0]) != "rm" {
		return ""
	}
	recursive := false
	for _, w := range words[1:] {
		if w == "--no-preserve-root" {
			return "it removes files with --no-preserve-root"
		}
		if w == "--recursive" || isShortCluster(w) && strings.ContainsAny(w[1:], "rR") {
			recursive = true
		}
	}
	if !recursive {
		return ""
	}
	for _, w := range words[1:] {
		t := strings.ReplaceAll(w, `"`, "")
		switch t {
		case "~", "~/", "~/*", "$HOME", "${HOME}", "$HOME/", "${HOME}/", "$HOME/*", "${HOME}/*", "/*":
			return "it recursively removes your home directory or the whole filesystem (" + w + ")"
		}
		if strings.HasPrefix(t, "/") && filepath.Clean(t) == "/" {
			return "it recursively removes the whole filesystem (" + w + ")"
		}
	}
	return ""
}

func isDiskDevice(p string) bool {
	for _, prefix := range []string{"/dev/sd", "/dev/hd", "/dev/nvme", "/dev/disk", "/dev/mmcblk", "/dev/vd", "/dev/xvd"} {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

// isQuotedLiteral reports whether w has no expansion at all, quotes
// allowed.
func isQuotedLiteral(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
		case *syntax.SglQuoted:
			if p.Dollar {
				return false
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// render gives a word's value for matching: literal words without their
// quotes, other words as written (so `rm -rf $HOME` shows $HOME).
func render(w *syntax.Word) string {
	if isQuotedLiteral(w) {
		var b strings.Builder
		for _, p := range w.Parts {
			switch p := p.(type) {
			case *syntax.Lit:
				s, _ := unescapeUnquoted(p.Value)
				b.WriteString(s)
			case *syntax.SglQuoted:
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				for _, q := range p.Parts {
					b.WriteString(unescapeDouble(q.(*syntax.Lit).Value))
				}
			}
		}
		return b.String()
	}
	var buf bytes.Buffer
	if err := syntax.NewPrinter(syntax.SingleLine(true)).Print(&buf, w); err != nil {
		return "?"
	}
	return buf.String()
}

func renderAll(ws []*syntax.Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = render(w)
	}
	return out
}

// Prefix returns what "always allow" would save for command: the first two
// words for tools with subcommands (git commit, gh api, go test, npm run,
// docker, kubectl, …), the first word otherwise. It returns "" when the
// command is structurally unsafe (see Analyze), or when a tool with
// subcommands starts with an option (git --no-pager log), where no prefix
// is narrow enough to be safe.
func Prefix(command string) string {
	a := Analyze(command)
	if a.Unsafe != "" {
		return ""
	}
	w := a.Words
	if !multiVerb[base(w[0])] || len(w) == 1 {
		return quoteWord(w[0])
	}
	if strings.HasPrefix(w[1], "-") {
		return ""
	}
	return joinQuoted(w[:2])
}

// multiVerb names programs whose first argument picks what they do.
var multiVerb = map[string]bool{
	"git": true, "gh": true, "go": true, "npm": true, "npx": true, "yarn": true, "pnpm": true,
	"bun": true, "deno": true, "cargo": true, "rustup": true, "docker": true, "podman": true,
	"kubectl": true, "helm": true, "terraform": true, "make": true, "pip": true, "pip3": true,
	"uv": true, "poetry": true, "brew": true, "apt": true, "apt-get": true, "systemctl": true,
	"dotnet": true, "mvn": true, "gradle": true, "bundle": true, "rails": true, "composer": true,
	"gcloud": true, "aws": true, "az": true, "flyctl": true, "heroku": true, "just": true,
}

// Covers reports whether a saved prefix (as Prefix returns) covers
// command: the command must be structurally safe and start with the
// prefix's words. Paths outside the project are not checked here: the
// person chose the prefix.
func Covers(prefix, command string) bool {
	p := Analyze(prefix)
	if p.Unsafe != "" || p.Glob {
		return false
	}
	a := Analyze(command)
	if a.Unsafe != "" {
		return false
	}
	return Pattern{Words: p.Words, AnyArgs: true}.Match(a.Words)
}

func quote(s string) (string, error) { return syntax.Quote(s, syntax.LangBash) }
