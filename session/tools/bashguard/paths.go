package bashguard

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/infer-workspace/infer/internal/linkpath"
)

// This file answers "does this path stay inside the project?" the way the
// kernel will see the path, not the way it reads: symbolic links are
// followed, globs are expanded, and a word is looked at in every spot
// where a program may find a path in it (after =, after a short option's
// letter).

// resolvePath returns where the absolute path p leads once every symbolic
// link in it is followed, as the kernel will walk it (see linkpath): ..
// after a link climbs out of the link's target, what does not exist is
// kept as written, and a dangling link counts as the place it points to.
func resolvePath(p string) string { return linkpath.Real(p) }

// resolveFrom resolves rel (or an absolute path) starting in the already
// resolved folder dir.
func resolveFrom(dir, rel string) string { return linkpath.From(dir, rel) }

// under reports whether p is dir or below it; both must be clean.
func under(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// workDir is a folder a command may run in: the root, or a folder a cd in
// the same command line moves to. real is text with its links resolved.
type workDir struct {
	text, real string
}

// rootDirs is the working folder of a command with no cd in it.
func (g *Guard) rootDirs() []workDir {
	if g.root == "" {
		return nil
	}
	return []workDir{{g.root, g.realRoot}}
}

// scope is what checking the paths of one command line shares: the
// folders its commands may run in, and how many folder entries its globs
// may still read, so that no command line makes the guard read without
// end (a word has a candidate per letter, and braces multiply words).
type scope struct {
	dirs   []workDir
	budget int
}

func (g *Guard) newScope() *scope { return &scope{dirs: g.rootDirs(), budget: maxGlobEntries} }

// dirsOf is sc's folders; a nil scope has none, for absolute paths.
func dirsOf(sc *scope) []workDir {
	if sc == nil {
		return nil
	}
	return sc.dirs
}

// leadsOutside reports whether the absolute path abs is outside the
// project, either as written or once its links are followed; target is
// where it leads when only a link takes it out.
func (g *Guard) leadsOutside(abs string) (target string, outside bool) {
	if g.root == "" {
		return "", true
	}
	clean := filepath.Clean(abs)
	if !under(g.root, clean) && !under(g.realRoot, clean) {
		return "", true
	}
	// Resolving from the already resolved root saves walking the folders
	// above it for every word.
	var real string
	if rel, ok := strings.CutPrefix(abs, g.root+string(filepath.Separator)); ok {
		real = resolveFrom(g.realRoot, rel)
	} else if abs == g.root {
		real = g.realRoot
	} else {
		real = resolvePath(abs)
	}
	if !under(g.realRoot, real) {
		return real, true
	}
	return "", false
}

// pathOutside returns how to show p when it leads outside the project, or
// "". Relative paths are taken from every folder of sc, because a cd
// earlier in the command line may have moved there. glob says p is
// expanded by the shell (see globOutside).
func (g *Guard) pathOutside(p string, sc *scope, glob bool) string {
	if glob && hasGlobMeta(p) {
		return g.globOutside(p, sc)
	}
	if filepath.IsAbs(p) {
		target, out := g.leadsOutside(p)
		if out {
			return describeLink(p, target)
		}
		return ""
	}
	if g.root == "" {
		// Without a root nothing can be resolved; only .. is known to
		// leave the folder the command runs in.
		if hasParentElem(p) {
			return p
		}
		return ""
	}
	for _, d := range dirsOf(sc) {
		var target string
		var out bool
		if d.text == g.root {
			target, out = g.leadsOutside(d.text + string(filepath.Separator) + p)
		} else {
			target, out = g.leadsOutsideFrom(d, p)
		}
		if out {
			return describeLink(p, target)
		}
	}
	return ""
}

// leadsOutsideFrom is leadsOutside for p relative to a folder a cd moved
// to: p must stay inside both as written and once links are followed.
func (g *Guard) leadsOutsideFrom(d workDir, p string) (string, bool) {
	clean := filepath.Join(d.text, p)
	if !under(g.root, clean) && !under(g.realRoot, clean) {
		return "", true
	}
	if real := resolveFrom(d.real, p); !under(g.realRoot, real) {
		return real, true
	}
	return "", false
}

func describeLink(p, target string) string {
	if target == "" || target == p {
		return p
	}
	return p + " (it leads to " + target + ")"
}

// candidate is one spot in a word where a program may find a path.
type candidate struct {
	text string
	// tilde says bash would expand a leading ~ here: at the start of the
	// word or after = (bash does that in assignments and option values).
	tilde bool
}

// candidates lists the spots of a word a program may read as a path: the
// whole word; what follows each = (if=/etc/x, --file=/etc/x,
// DESTDIR=/usr/local) and each : after one; and, in a word of short options, what follows
// every letter, because any letter of a cluster may be one that takes the
// rest as its value (file -bm/etc/passwd, git commit -qF/tmp/x).
func candidates(w string) []candidate {
	out := []candidate{{w, true}}
	seen := map[string]bool{w: true}
	add := func(s string, tilde bool) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, candidate{s, tilde})
		}
	}
	assignment := false
	for i := 0; i < len(w); i++ {
		switch {
		case w[i] == '=':
			add(w[i+1:], true)
			assignment = true
		case w[i] == ':' && assignment:
			// In a word shaped like an assignment bash expands ~ after
			// each : too (PATH=a:~/bin).
			add(w[i+1:], true)
		}
	}
	if len(w) > 2 && w[0] == '-' && w[1] != '-' {
		for i := 2; i < len(w); i++ {
			add(w[i:], false)
		}
	}
	return out
}

// outsideWord returns the path a word names outside the project, or "".
// glob says the word holds an unquoted glob the shell expands. path says
// the word is certainly a path (a redirection target, or an argument of
// a command that only takes paths); otherwise an absolute word counts
// only if it looks like one (see looksLikePath), so that sed's '/^$/d'
// and grep's "/api/users" do not ask.
func (g *Guard) outsideWord(w string, glob, path bool, sc *scope) string {
	for _, c := range candidates(w) {
		p := c.text
		switch {
		case c.tilde && strings.HasPrefix(p, "~"):
			return p
		case standardStream(p):
			continue
		case filepath.IsAbs(p) && !path && !(glob && hasGlobMeta(p)) && !looksLikePath(p):
			continue
		}
		if d := g.pathOutside(p, sc, glob); d != "" {
			return d
		}
	}
	return ""
}

// looksLikePath reports whether an absolute word may be a file path: one
// on one line that starts with a folder that exists (or names a file
// right under /). Patterns that start with / are common arguments (sed's
// '/^$/d', awk's '/ERROR/', grep's "/api/users") and name no file, since
// no /api exists; spaces are allowed ("Application Support").
func looksLikePath(p string) bool {
	if strings.Contains(p, "\n") {
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

// standardStream reports whether p is one of the device files every
// program may read or write without touching anything: /dev/null, the
// standard streams, the terminal and /dev/fd/N.
func standardStream(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero":
		return true
	}
	n, ok := strings.CutPrefix(p, "/dev/fd/")
	return ok && isDigits(n)
}

func hasGlobMeta(s string) bool { return strings.ContainsAny(s, "*?[") }

// maxGlobEntries bounds the folder entries the globs of one command line
// may read; a glob that needs more is not checked and counts as outside.
const maxGlobEntries = 20000

// globOutside judges a word the shell expands as a glob. It is inside only
// if the folder before the first glob element is inside, no glob element
// can match .. (bash before 5.2 let .* match it), every file it matches
// now is inside once links are followed, and so is the word taken
// literally, as bash passes a glob that matches nothing. Matching is a
// superset of bash's: a pattern Go cannot read matches every name.
func (g *Guard) globOutside(p string, sc *scope) string {
	if strings.HasPrefix(p, "~") {
		return p
	}
	elems := strings.Split(p, "/")
	first := 0
	for first < len(elems) && !hasGlobMeta(elems[first]) {
		first++
	}
	for _, e := range elems[first:] {
		if strings.HasPrefix(e, ".") && hasGlobMeta(e) && globMatches(e, "..") {
			return p
		}
	}
	prefix := strings.Join(elems[:first], "/")
	switch {
	case filepath.IsAbs(p) && prefix == "":
		prefix = "/"
	case prefix == "":
		prefix = "."
	}
	if g.pathOutside(prefix, sc, false) != "" {
		return p
	}
	var starts []string
	if filepath.IsAbs(p) {
		starts = []string{"/"}
	} else {
		for _, d := range dirsOf(sc) {
			starts = append(starts, d.text)
		}
	}
	local := maxGlobEntries
	budget := &local
	if sc != nil {
		budget = &sc.budget
	}
	for _, s := range starts {
		var matches []string
		if !expandGlob(s, elems, &matches, budget) {
			return p + " (it matches too many files to check)"
		}
		for _, m := range matches {
			if d := g.pathOutside(m, nil, false); d != "" {
				return p + " (it matches " + d + ")"
			}
		}
	}
	return g.pathOutside(p, sc, false)
}

// expandGlob appends to out the paths under dir that elems match, reading
// at most budget folder entries in all; it returns false when the budget
// runs out. A literal element is appended whether or not it exists,
// which only adds paths to check.
func expandGlob(dir string, elems []string, out *[]string, budget *int) bool {
	if len(elems) == 0 {
		*out = append(*out, dir)
		return true
	}
	e := elems[0]
	if !hasGlobMeta(e) {
		next := dir
		if e != "" {
			next = strings.TrimSuffix(dir, "/") + "/" + e
		}
		return expandGlob(next, elems[1:], out, budget)
	}
	f, err := openDir(dir)
	if err != nil {
		return true
	}
	defer f.Close()
	for {
		entries, err := f.ReadDir(256)
		for _, en := range entries {
			if *budget--; *budget < 0 {
				return false
			}
			if globMatches(e, en.Name()) {
				if !expandGlob(strings.TrimSuffix(dir, "/")+"/"+en.Name(), elems[1:], out, budget) {
					return false
				}
			}
		}
		if err != nil {
			return true
		}
	}
}

// globMatches matches one path element against a bash glob element,
// erring towards a match: bash's negation [!…] is Go's [^…], and what Go
// cannot parse (character classes like [[:alpha:]]) matches everything.
func globMatches(pattern, name string) bool {
	pattern = strings.ReplaceAll(pattern, "[!", "[^")
	ok, err := filepath.Match(pattern, name)
	return ok || err != nil
}

// maxWalkEntries bounds the walk that looks for links leading out of the
// project; a bigger project counts as having one.
const maxWalkEntries = 50000

// outsideLink returns a symbolic link inside the project that leads out of
// it, shown as "link → target", or a note when that cannot be known (no
// root, or too many files to look at). A command that follows links while
// it recurses (grep -R, find -L, cp -rL, du -L, tar -h…) reads through
// such a link, so it touches what is outside. Git's object store is
// skipped: it is big and git writes only plain files there. Folders are
// opened with openDir, so a FIFO cannot stall the walk.
func (g *Guard) outsideLink() string {
	if g.root == "" {
		return "the project root is unknown, so its links cannot be checked"
	}
	if _, err := os.Lstat(g.realRoot); errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	queue, n := []string{g.realRoot}, 0
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		f, err := openDir(dir)
		if err != nil {
			if dir == g.realRoot {
				return "the project could not be read to check its links"
			}
			continue
		}
		for {
			entries, err := f.ReadDir(256)
			for _, e := range entries {
				if n++; n > maxWalkEntries {
					f.Close()
					return "the project has too many files to check its links"
				}
				p := filepath.Join(dir, e.Name())
				switch {
				case e.IsDir():
					if e.Name() != "objects" || filepath.Base(dir) != ".git" {
						queue = append(queue, p)
					}
				case e.Type()&fs.ModeSymlink != 0:
					if target, out := g.leadsOutside(p); out {
						f.Close()
						rel, _ := filepath.Rel(g.realRoot, p)
						if target == "" {
							target = resolvePath(p)
						}
						return "the project has a link leading out of it (" + rel + " → " + target + ")"
					}
				}
			}
			if err != nil {
				break
			}
		}
		f.Close()
	}
	return ""
}

// followsLinks reports whether a command, as its words ask, walks folders
// and follows the symbolic links it meets there: grep -R, rg -L, find -L,
// ls -RL, du -L, tar -h, cp -rL, rsync -L, tree -l, chmod -RL, zip -r
// and diff -r (both follow links unless told not to). A link named on the
// command line is checked like any path; these reach links nobody named.
func followsLinks(words []string) bool {
	args := words[1:]
	short := func(letters string) bool {
		for _, w := range args {
			if len(w) > 1 && w[0] == '-' && w[1] != '-' && strings.ContainsAny(w[1:], letters) {
				return true
			}
		}
		return false
	}
	// long accepts any prefix of the names, as getopt_long does with
	// unambiguous ones; only options that turn following on use it.
	long := func(names ...string) bool {
		for _, w := range args {
			name, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
			if !strings.HasPrefix(w, "--") || name == "" {
				continue
			}
			for _, n := range names {
				if strings.HasPrefix(n, name) {
					return true
				}
			}
		}
		return false
	}
	exact := func(opts ...string) bool {
		for _, w := range args {
			for _, o := range opts {
				if w == o {
					return true
				}
			}
		}
		return false
	}
	switch base(words[0]) {
	case "grep", "egrep", "fgrep":
		return short("R") || long("dereference-recursive")
	case "rg", "fd", "fdfind":
		return short("L") || long("follow")
	case "ag":
		return short("f") || long("follow")
	case "ack":
		return long("follow")
	case "find":
		// A command find runs on what it finds opens links it lists.
		return exact("-L", "-follow", "-exec", "-execdir", "-ok", "-okdir")
	case "ls":
		return (short("L") || long("dereference")) && (short("R") || long("recursive"))
	case "du":
		return short("L") || long("dereference")
	case "tar":
		old := len(args) > 0 && !strings.HasPrefix(args[0], "-") && strings.ContainsRune(args[0], 'h')
		return old || short("h") || long("dereference")
	case "cp":
		return (short("L") || long("dereference")) && (short("rRa") || long("recursive", "archive"))
	case "rsync":
		return short("Lk") || long("copy-links", "copy-dirlinks", "copy-unsafe-links")
	case "tree":
		return short("l")
	case "diff":
		return (short("r") || long("recursive")) && !exact("--no-dereference")
	case "zip":
		return short("rR") && !short("y") && !exact("--symlinks")
	case "chmod", "chown", "chgrp":
		return (short("R") || long("recursive")) && short("L")
	case "scp":
		return short("r")
	}
	return false
}
