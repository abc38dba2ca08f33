package bashguard

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
)

// Pattern is an allowlist entry: literal words, optionally followed by a
// final `*` word meaning "any further arguments, or none". `git log *`
// matches `git log` and `git log -3 --oneline`; `git status` matches only
// itself. Words are compared after quoting is removed, so `echo "a b"` and
// `echo 'a b'` are the same command.
type Pattern struct {
	Words   []string
	AnyArgs bool
}

// ParsePattern reads an allowlist pattern such as "gh api *".
func ParsePattern(s string) (Pattern, error) {
	text := strings.TrimSpace(s)
	var p Pattern
	if text == "*" {
		return p, errors.New(`allow pattern "*" would allow every command; name the command, e.g. "gh api *"`)
	}
	if rest, ok := strings.CutSuffix(text, " *"); ok {
		p.AnyArgs = true
		text = strings.TrimSpace(rest)
	}
	if text == "" {
		return p, errors.New("allow pattern is empty; write the command's words, e.g. \"git status\" or \"gh api *\"")
	}
	a := Analyze(text)
	if a.Unsafe != "" {
		return p, fmt.Errorf("allow pattern %q is not a plain command: %s; a `*` may appear only as the last word, meaning any further arguments", s, a.Unsafe)
	}
	if a.Glob {
		return p, fmt.Errorf("allow pattern %q has a glob inside a word; a `*` may appear only as the last word, meaning any further arguments", s)
	}
	p.Words = a.Words
	return p, nil
}

// Match reports whether the words of a command fit the pattern.
func (p Pattern) Match(words []string) bool {
	if len(words) < len(p.Words) || (!p.AnyArgs && len(words) != len(p.Words)) {
		return false
	}
	for i, w := range p.Words {
		if words[i] != w {
			return false
		}
	}
	return true
}

// String renders the pattern as it is written in configuration.
func (p Pattern) String() string {
	s := joinQuoted(p.Words)
	if p.AnyArgs {
		s += " *"
	}
	return s
}

// denyGlob is a deny-list entry matched against a command's words joined
// by single spaces, where `*` matches any run of characters (spaces
// included), so "dd *of=/dev/*" catches `dd if=x of=/dev/sda`.
type denyGlob string

func parseDeny(s string) (denyGlob, error) {
	g := strings.Join(strings.Fields(s), " ")
	if g == "" {
		return "", errors.New("deny pattern is empty; write a command glob such as \"git push --force*\"")
	}
	if strings.Trim(g, "* ") == "" {
		return "", fmt.Errorf("deny pattern %q would deny every command", s)
	}
	return denyGlob(g), nil
}

// match reports whether text fits the glob; only `*` is special.
func (g denyGlob) match(text string) bool {
	return globMatch(string(g), text)
}

// globMatch matches s against pattern, where `*` matches any run of bytes.
// It backtracks only to the latest star, which is enough for a pattern
// language with a single wildcard.
func globMatch(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// readOnlyCommand is a built-in allowlist entry for commands that only
// read. Forbid lists options that would make it write or run something;
// globSafe marks commands where a glob may be used: those without such
// options, and those whose only forbidden options cannot be spelled by
// a file name the glob matches (Allowed refuses a glob matching a name
// that starts with -).
type readOnlyCommand struct {
	pattern  Pattern
	forbid   []string
	globSafe bool
	// valued lists the short options that take the rest of their cluster
	// as a value (sort -t, in -t,o), so the letters after them are not
	// options and forbidding them would be wrong.
	valued string
	// goFlags marks the go command, which parses its flags with Go's flag
	// package: -flag and --flag are the same, clusters do not exist and
	// names are never abbreviated.
	goFlags bool
}

// builtinReadOnly is the allowlist used in standard and plan modes. printenv
// and env are left out on purpose: they would hand API keys to the model.
// It is parsed on first use: a run that never asks about a command (a
// browsing loop, `infer version`) should not pay for it at start-up.
var builtinReadOnly = sync.OnceValue(func() []readOnlyCommand {
	type entry struct {
		pattern  string
		forbid   []string
		globSafe bool
		valued   string
	}
	entries := []entry{
		{"pwd *", nil, false, ""},
		{"ls *", nil, true, "ITw"},
		{"cat *", nil, true, ""},
		{"head *", nil, true, "cn"},
		{"tail *", nil, true, "cns"},
		// --files0-from reads the names of the files to read from a file,
		// where the guard cannot see them.
		{"wc *", []string{"--files0-from"}, true, ""},
		{"echo *", nil, true, ""},
		{"date *", []string{"-s", "--set"}, false, "dfIr"},
		{"whoami", nil, false, ""},
		{"id *", nil, false, ""},
		{"uname *", nil, false, ""},
		{"which *", nil, false, ""},
		{"file *", []string{"-C", "--compile", "-f", "--files-from"}, false, "eFfmP"},
		{"stat *", nil, true, "ct"},
		{"du *", []string{"--files0-from"}, true, "BdtX"},
		{"df *", nil, false, "Btx"},
		{"basename *", nil, false, "s"},
		{"dirname *", nil, false, ""},
		{"realpath *", nil, false, ""},
		{"diff *", nil, false, "CDFILSUWx"},
		{"cmp *", nil, false, "in"},
		{"sort *", []string{"-o", "--output", "--compress-program", "--files0-from"}, false, "kStT"},
		{"tree *", []string{"-o", "-R"}, false, "HILPT"},
		{"grep *", nil, false, "ABCDdefm"},
		{"rg *", []string{"--pre"}, false, "ABCEefgMmjrTt"},
		{"find *", []string{"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls", "-files0-from"}, false, ""},
		{"git status *", nil, false, ""},
		{"git log *", []string{"--output"}, false, "nSGL"},
		{"git diff *", []string{"--output"}, false, "SGlU"},
		{"git show *", []string{"--output"}, false, "SGU"},
		{"git blame *", nil, false, "LSC"},
		{"git ls-files *", nil, false, "xX"},
		{"git rev-parse *", nil, false, ""},
		{"git describe *", nil, false, ""},
		{"git shortlog *", nil, false, "w"},
		{"git branch", nil, false, ""},
		{"git branch -a", nil, false, ""},
		{"git branch -r", nil, false, ""},
		{"git branch -v", nil, false, ""},
		{"git branch -vv", nil, false, ""},
		{"git branch --show-current", nil, false, ""},
		{"git remote", nil, false, ""},
		{"git remote -v", nil, false, ""},
		{"git tag", nil, false, ""},
		{"git tag -l *", nil, false, ""},
		{"git tag --list *", nil, false, ""},
		{"go version", nil, false, ""},
		// go env -w and -u change the person's Go configuration for every
		// project (GOFLAGS=-toolexec=… would run a program on each build).
		{"go env *", []string{"-w", "-u"}, false, ""},
		// -toolexec and -exec run a program; -export and -compiled build
		// (running cgo and the compiler); -mod=mod rewrites go.mod; -C
		// moves to another folder first.
		{"go list *", []string{"-toolexec", "-exec", "-export", "-compiled", "-mod", "-C"}, false, ""},
		// go doc -http downloads and runs a documentation server.
		{"go doc *", []string{"-http"}, false, ""},
	}
	out := make([]readOnlyCommand, len(entries))
	for i, e := range entries {
		p, err := ParsePattern(e.pattern)
		if err != nil {
			panic("bashguard: bad built-in pattern: " + err.Error())
		}
		out[i] = readOnlyCommand{pattern: p, forbid: e.forbid, globSafe: e.globSafe, valued: e.valued, goFlags: p.Words[0] == "go"}
	}
	return out
})

// forbidden returns the first argument that uses a forbidden option, in
// any spelling the program accepts:
//
//   - GNU long options may be abbreviated to any unambiguous prefix, with
//     or without =value (sort --out=F, sort --compress=sh, date --se=…,
//     file --comp). Any prefix counts here, even an ambiguous one: the
//     program would refuse it, and the guard need not know the others.
//   - Short options match anywhere in a cluster (sort -uo F), up to a
//     letter that takes the rest of the cluster as its value.
//   - find's one-dash words match as prefixes (-fprint catches -fprintf).
//   - Go's flag package reads -flag and --flag, -flag=v and -flag v alike,
//     and has no clusters (go env --w, go list --toolexec=…).
func (c readOnlyCommand) forbidden(args []string) string {
	for _, a := range args {
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		if c.goFlags {
			name, _, _ := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
			for _, f := range c.forbid {
				if name == strings.TrimLeft(f, "-") {
					return a
				}
			}
			continue
		}
		if long, ok := strings.CutPrefix(a, "--"); ok {
			name, _, _ := strings.Cut(long, "=")
			for _, f := range c.forbid {
				if fl, ok := strings.CutPrefix(f, "--"); ok && name != "" && strings.HasPrefix(fl, name) {
					return a
				}
			}
			continue
		}
		for _, f := range c.forbid {
			if len(f) > 2 && f[1] != '-' && strings.HasPrefix(a, f) {
				return a
			}
		}
		for _, r := range a[1:] {
			for _, f := range c.forbid {
				if len(f) == 2 && rune(f[1]) == r {
					return a
				}
			}
			if strings.ContainsRune(c.valued, r) {
				break
			}
		}
	}
	return ""
}

// builtinDeny always asks, even in auto mode.
var builtinDeny = []string{
	"sudo", "sudo *", "doas *", "su", "su *", "pkexec *",
	"mkfs*",
	"dd *of=/dev/*",
	"git push --force*", "git push *--force*", "git push -f", "git push -f *", "git push * -f", "git push * -f *", "git push * +*",
	"chmod -R * /", "chown -R * /",
	"shutdown*", "reboot*", "halt", "poweroff*",
}

// joinQuoted renders words as a command line, quoting where needed.
func joinQuoted(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = quoteWord(w)
	}
	return strings.Join(out, " ")
}

func quoteWord(w string) string {
	if q, err := quote(w); err == nil {
		return q
	}
	return w
}

// base is the program name without its directory, so /bin/rm is rm.
func base(word string) string { return path.Base(word) }
