package bashguard

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Config configures a Guard.
type Config struct {
	// Root is the project root. Built-in read-only commands that name a
	// path outside it (an absolute path, ~, .., or a symbolic link that
	// leads out) are not auto-approved. Empty means every absolute or
	// parent path needs approval.
	Root string
	// Allow adds allowlist patterns (see Pattern) that run without asking
	// in standard mode only: plan mode uses the built-in read-only list,
	// because a configured command may write.
	Allow []string
	// Deny adds deny globs (see CheckAuto) that ask even in auto mode.
	Deny []string
}

// Guard answers the allowlist and deny-list questions for one project. It
// is immutable and safe for concurrent use. It reads the file system
// (to follow symbolic links and expand globs) but never writes.
type Guard struct {
	root string
	// realRoot is root with its symbolic links resolved, which is what
	// resolved paths are compared with.
	realRoot string
	allow    []Pattern
	deny     []denyGlob
}

// New builds a Guard, rejecting malformed patterns with the reason.
func New(cfg Config) (*Guard, error) {
	g := &Guard{}
	if cfg.Root != "" {
		g.root = filepath.Clean(cfg.Root)
		if root, err := filepath.Abs(cfg.Root); err == nil {
			g.root = root
		}
		g.realRoot = resolvePath(g.root)
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
	for _, c := range builtinReadOnly() {
		if !c.pattern.Match(a.Words) {
			continue
		}
		if bad := c.forbidden(a.Words[len(c.pattern.Words):]); bad != "" {
			why = fmt.Sprintf("`%s` is not read-only with %s", a.Words[0], bad)
		} else if a.Glob && !c.globSafe {
			why = "it uses an unquoted glob, which could expand to a file named like an option"
		} else if p := g.outside(a); p != "" {
			why = fmt.Sprintf("it names %s, which is outside the project", p)
		} else if opt := g.globOption(a); opt != "" {
			why = fmt.Sprintf("it uses a glob that matches %s, a file named like an option", opt)
		} else if l := g.followsOut(a.Words); l != "" {
			why = l
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
	sc := g.newScope()
	for i, w := range a.Words {
		if i == 0 {
			continue
		}
		if p := g.outsideWord(w, i < len(a.globbed) && a.globbed[i], pathCommands[base(a.Words[0])], sc); p != "" {
			return p
		}
	}
	for _, in := range a.Inputs {
		if p := g.outsideWord(in, false, true, sc); p != "" {
			return p
		}
	}
	return ""
}

// globOption returns a file name starting with - that an unquoted glob of
// the command matches, or "": the shell would hand it to the program as
// an option (a file named --files0-from=list makes `wc *` read the files
// list names).
func (g *Guard) globOption(a Analysis) string {
	budget := maxGlobEntries
	for i, w := range a.Words {
		if i == 0 || i >= len(a.globbed) || !a.globbed[i] || g.root == "" {
			continue
		}
		var matches []string
		start := g.root
		if filepath.IsAbs(w) {
			start = "/"
		}
		if !expandGlob(start, strings.Split(w, "/"), &matches, &budget) {
			return w + " (too many files to check)"
		}
		for _, m := range matches {
			if name := filepath.Base(m); strings.HasPrefix(name, "-") {
				return name
			}
		}
	}
	return ""
}

// followsOut says why a command that follows symbolic links while it
// recurses (see followsLinks) would read outside the project, or "".
func (g *Guard) followsOut(words []string) string {
	if !followsLinks(words) {
		return ""
	}
	if l := g.outsideLink(); l != "" {
		return fmt.Sprintf("`%s` follows symbolic links while it walks folders, and %s", base(words[0]), l)
	}
	return ""
}

// outsideExpanding judges a word the shell expands by what can be seen
// before it runs: $HOME or ~ at its start, a .. element anywhere
// ($PWD/../../etc), or a literal start that is already outside
// (/home/$USER/.ssh). Whatever else the word may become is unknown; the
// caller decides what that means.
func (g *Guard) outsideExpanding(w string) string {
	v := strings.TrimPrefix(w, `"`)
	if strings.HasPrefix(v, "$HOME") || strings.HasPrefix(v, "${HOME}") || strings.HasPrefix(v, "~") || hasParentElem(v) {
		return w
	}
	lit := v
	if i := strings.IndexAny(v, "$`"); i >= 0 {
		lit = v[:i]
	}
	if strings.HasPrefix(lit, "/") && g.pathOutside(lit[:strings.LastIndexByte(lit, '/')+1], nil, false) != "" {
		return w
	}
	return ""
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
	"strace":   {"abeEIoOpPsSuUX", 0},
	"ltrace":   {"aADeFlnopsuwx", 0},
	"watch":    {"nd", 0},
	"busybox":  {"", 0},
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
