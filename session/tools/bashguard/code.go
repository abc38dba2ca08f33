package bashguard

import (
	"path"
	"strings"
)

// This file recognises code handed to another program: python -c, perl
// -e, awk programs that run commands, sed's e command, git -c settings
// that name a program, and interpreters reading their code from standard
// input. The guard cannot see what such code does, so it never runs
// without asking, in any mode.

// runner describes how an interpreter takes its code.
type runner struct {
	// code lists short options whose value is code (python -c, perl -e).
	code string
	// long lists long options whose value is code (node --eval); any
	// prefix counts, since getopt-style parsers accept abbreviations.
	long []string
	// exact lists one-dash long options whose value is code, matched
	// exactly and without regard to case (erl -eval, gdb -ex, pwsh
	// -Command).
	exact []string
	// attached lists short options that take the rest of their word as a
	// value (perl -Mstrict), so the letters after them are not options.
	attached string
	// valued lists short options that take the next word as their value
	// when they end a cluster (python -W ignore).
	valued string
	// longValued lists long options that take the next word as a value.
	longValued []string
	// module lists options after which a named module runs (python -m),
	// so neither a script nor standard input is read.
	module string
	// stdin says the program reads code from standard input when it is
	// given no script (or the script -).
	stdin bool
	// stdinFlag lists short options that make it read code from
	// standard input even with operands (bash -s, python -i).
	stdinFlag string
	// console says it reads commands from standard input whatever its
	// operands (gdb, sqlite3, psql, ed), and those can run programs.
	console bool
}

var shellRunner = runner{code: "c", long: []string{"--command", "--init-command"}, valued: "oO", longValued: []string{"--rcfile", "--init-file"}, stdin: true, stdinFlag: "si"}

// runners are the interpreters the guard knows, by name without a
// version suffix (python3.12 is python).
var runners = map[string]runner{
	"sh": shellRunner, "bash": shellRunner, "zsh": shellRunner, "dash": shellRunner, "ksh": shellRunner,
	"mksh": shellRunner, "ash": shellRunner, "yash": shellRunner, "rbash": shellRunner, "csh": shellRunner, "tcsh": shellRunner,
	"fish":   {code: "cC", long: []string{"--command", "--init-command"}, stdin: true},
	"python": {code: "c", valued: "WX", module: "m", stdin: true, stdinFlag: "i"},
	"pypy":   {code: "c", valued: "WX", module: "m", stdin: true, stdinFlag: "i"},
	"perl":   {code: "eE", attached: "IMm", stdin: true, stdinFlag: "d"},
	"ruby":   {code: "e", attached: "IrCEFx", stdin: true},
	"node": {code: "ep", long: []string{"--eval", "--print"}, valued: "rC",
		longValued: []string{"--require", "--import", "--loader", "--experimental-loader", "--conditions", "--input-type", "--env-file", "--title"}, stdin: true},
	"nodejs":    {code: "ep", long: []string{"--eval", "--print"}, valued: "rC", longValued: []string{"--require", "--import", "--loader"}, stdin: true},
	"bun":       {code: "ep", long: []string{"--eval", "--print"}},
	"tsx":       {code: "ep", long: []string{"--eval", "--print"}, stdin: true},
	"ts-node":   {code: "ep", long: []string{"--eval", "--print"}, stdin: true},
	"php":       {code: "rBRFE", valued: "dcz", stdin: true, stdinFlag: "a"},
	"lua":       {code: "e", valued: "l", stdin: true, stdinFlag: "i"},
	"luajit":    {code: "e", valued: "l", stdin: true, stdinFlag: "i"},
	"Rscript":   {code: "e", stdin: true},
	"R":         {code: "e", stdin: true},
	"julia":     {code: "eE", long: []string{"--eval", "--print"}, stdin: true},
	"osascript": {code: "e", stdin: true},
	"tclsh":     {stdin: true},
	"wish":      {stdin: true},
	"expect":    {code: "c", stdin: true},
	"irb":       {stdin: true},
	"groovy":    {code: "e"},
	"scala":     {code: "e"},
	"elixir":    {code: "e", long: []string{"--eval"}},
	"erl":       {exact: []string{"-eval", "-s", "-run"}},
	"pwsh":      {exact: []string{"-c", "-command", "-e", "-ec", "-encodedcommand", "--command"}, stdin: true},
	"vim":       {code: "c", long: []string{"--cmd"}, stdin: true, console: true},
	"vi":        {code: "c", long: []string{"--cmd"}, stdin: true, console: true},
	"nvim":      {code: "c", long: []string{"--cmd"}, stdin: true, console: true},
	"view":      {code: "c", long: []string{"--cmd"}, stdin: true, console: true},
	"ex":        {code: "c", long: []string{"--cmd"}, stdin: true, console: true},
	"emacs":     {exact: []string{"-eval", "--eval", "-execute", "--execute"}},
	"gdb":       {exact: []string{"-ex", "--ex", "-iex", "--iex", "-eval-command", "--eval-command", "-init-eval-command", "--init-eval-command"}, stdin: true, console: true},
	"lldb":      {exact: []string{"-o", "--one-line", "-O", "--one-line-before-file", "-k", "--one-line-on-crash"}, stdin: true, console: true},
	"sqlite3":   {exact: []string{"-cmd"}, stdin: true, console: true},
	"psql":      {code: "c", long: []string{"--command"}, stdin: true, console: true},
	"mysql":     {code: "e", long: []string{"--execute"}, stdin: true, console: true},
	"ed":        {stdin: true, console: true},
	"dc":        {code: "e", long: []string{"--expression"}, stdin: true, console: true},
	"sftp":      {stdin: true, console: true},
	"ftp":       {stdin: true, console: true},
	"make":      {code: "E", long: []string{"--eval"}},
	"gmake":     {code: "E", long: []string{"--eval"}},
	"npx":       {code: "c", long: []string{"--call"}},
	"script":    {code: "c", long: []string{"--command"}},
	"flock":     {code: "c", long: []string{"--command"}},
	"su":        {code: "c", long: []string{"--command", "--session-command"}},
	"runuser":   {code: "c", long: []string{"--command", "--session-command"}},
}

// scanned are the interpreters whose code options codeRisk also looks
// for inside another command's words (uv run python -c …). Editors,
// tools whose names are common words, and awk and sed (whose programs
// are judged by content, which an argument like system.txt would fake)
// are left out.
var scanned = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true, "python": true,
	"pypy": true, "perl": true, "ruby": true, "node": true, "nodejs": true, "bun": true, "deno": true,
	"tsx": true, "ts-node": true, "php": true, "lua": true, "luajit": true, "Rscript": true, "julia": true,
	"pwsh": true, "osascript": true,
}

// versioned are interpreter names that often carry a version suffix.
var versioned = []string{"python", "pypy", "perl", "ruby", "php", "lua", "luajit", "node", "tclsh", "wish"}

// runnerName returns the runners key for a command name: its base name,
// without a version suffix (python3.12, php8.2, lua5.4).
func runnerName(word string) string {
	name := path.Base(word)
	if _, ok := runners[name]; ok {
		return name
	}
	if name == "pwsh" || strings.EqualFold(name, "powershell") {
		return "pwsh"
	}
	for _, v := range versioned {
		if rest, ok := strings.CutPrefix(name, v); ok && rest != "" && strings.Trim(rest, "0123456789.-") == "" {
			return v
		}
	}
	return name
}

// isShell reports whether name is a shell, which the guard treats more
// strictly than other interpreters (a pipe into it always asks).
func isShell(name string) bool { return shells[path.Base(name)] }

// invocation is what an interpreter's arguments ask it to run.
type invocation struct {
	code   string // the option that passes code (-c, -e, --eval), if any
	script string // the script it runs: the first operand that exists, else the first operand
	stdin  bool   // it reads its code from standard input
}

// isStdinPath reports whether p names the standard input of the process
// that opens it.
func isStdinPath(p string) bool {
	switch p {
	case "-", "/dev/stdin", "/proc/self/fd/0":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/") && strings.Contains(p, "/fd/")
}

// invoke reads an interpreter's arguments. exists tells whether an
// operand names a file; an operand that does not exist may be the value
// of an option the guard does not know, so only one that exists counts
// as the script, and without one the program reads standard input. Every
// word is searched for code options, even after the script, since a
// wrong guess about which option takes a value must not hide one.
func (r runner) invoke(args []string, exists func(string) bool) invocation {
	var inv invocation
	module, stdinFlag, found := false, false, false
	first := ""
	for _, w := range args {
		if inv.code = r.codeOption(w); inv.code != "" {
			break
		}
	}
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "--":
			if i+1 < len(args) && !found {
				first, found = args[i+1], true
				if first == "" {
					first = "-"
				}
			}
			i = len(args)
			continue
		case w == "-" || isStdinPath(w):
			if !found {
				first, found = w, true
			}
			continue
		case strings.HasPrefix(w, "--"):
			name, _, hasValue := strings.Cut(w, "=")
			for _, v := range r.longValued {
				if name == v && !hasValue {
					i++
				}
			}
			continue
		case strings.HasPrefix(w, "-") || strings.HasPrefix(w, "+") && r.stdinFlag != "":
			for j := 1; j < len(w); j++ {
				c := w[j]
				if strings.IndexByte(r.module, c) >= 0 {
					module = true
				}
				if strings.IndexByte(r.stdinFlag, c) >= 0 {
					stdinFlag = true
				}
				if strings.IndexByte(r.attached, c) >= 0 || strings.IndexByte(r.valued, c) >= 0 || strings.IndexByte(r.code, c) >= 0 || strings.IndexByte(r.module, c) >= 0 {
					if j == len(w)-1 {
						i++ // the value is the next word
					}
					break
				}
			}
			continue
		}
		if !found && exists(w) {
			first, found = w, true
		} else if inv.script == "" {
			inv.script = w
		}
	}
	if found {
		inv.script = first
	}
	if module {
		inv.script = ""
	}
	switch {
	case !r.stdin:
	case r.console:
		inv.stdin = true
	case inv.code != "" || module:
	case stdinFlag, !found, isStdinPath(first):
		inv.stdin = true
	}
	return inv
}

// codeOption returns w when it is an option that passes code, or "".
func (r runner) codeOption(w string) string {
	for _, e := range r.exact {
		if strings.EqualFold(w, e) || strings.HasPrefix(strings.ToLower(w), strings.ToLower(e)+"=") {
			return w
		}
	}
	if long, ok := strings.CutPrefix(w, "--"); ok {
		name, _, _ := strings.Cut(long, "=")
		for _, l := range r.long {
			if name != "" && strings.HasPrefix(strings.TrimPrefix(l, "--"), name) {
				return w
			}
		}
		return ""
	}
	if len(w) < 2 || w[0] != '-' || r.code == "" {
		return ""
	}
	for j := 1; j < len(w); j++ {
		c := w[j]
		if strings.IndexByte(r.code, c) >= 0 {
			return w
		}
		if strings.IndexByte(r.attached, c) >= 0 {
			return ""
		}
	}
	return ""
}

// codeRisk says why a command given as literal words runs code the guard
// cannot see, or returns "": an interpreter given code in an option, an
// awk program that runs commands or opens files itself, a sed script
// with the e command, git told to run a program, watch, parallel.
func codeRisk(words []string) string {
	if why := directRisk(words); why != "" {
		return why
	}
	// An interpreter further along the words may be run by a wrapper the
	// guard does not know (uv run, poetry run, docker exec): its code
	// options count too, and so do the options of the tools optionRisk
	// knows (poetry run tar --to-command=…).
	for i := 1; i < len(words); i++ {
		if why := optionRisk(words[i:]); why != "" {
			return why
		}
		name := runnerName(words[i])
		if !scanned[name] {
			continue
		}
		if c := runners[name].invoke(words[i+1:], func(string) bool { return false }).code; c != "" {
			return "it passes code to " + path.Base(words[i]) + " with " + shorten(c, 20) + "; infer cannot see what it does"
		}
	}
	return ""
}

// directRisk is codeRisk for the command the words start with.
func directRisk(words []string) string {
	if len(words) == 0 {
		return ""
	}
	if why := optionRisk(words); why != "" {
		return why
	}
	name := runnerName(words[0])
	args := words[1:]
	if r, ok := runners[name]; ok {
		if c := r.invoke(args, func(string) bool { return false }).code; c != "" {
			return "it passes code to " + path.Base(words[0]) + " with " + shorten(c, 20) + "; infer cannot see what it does"
		}
	}
	switch name {
	case "awk", "gawk", "mawk", "nawk":
		return awkRisk(path.Base(words[0]), args)
	case "sed", "gsed":
		if why, _ := sedRisk(args); why != "" {
			return why
		}
	case "git":
		return gitRisk(args)
	case "watch":
		for _, w := range args {
			if w == "-x" || w == "--exec" || isShortCluster(w) && strings.ContainsRune(w, 'x') {
				return ""
			}
		}
		return "`watch` runs its arguments as shell code; infer cannot see what it does"
	case "parallel":
		return "`parallel` runs its arguments as shell code; infer cannot see what it does"
	case "sqlite3":
		// The sqlite3 shell's dot commands and functions read and write
		// files and run programs (.shell, .output, readfile()).
		operands := 0
		for _, w := range args {
			if strings.HasPrefix(w, "-") {
				continue
			}
			if operands++; operands == 1 {
				continue
			}
			lower := strings.ToLower(w)
			for _, risky := range sqliteRisky {
				if strings.Contains(lower, risky) {
					return "it gives sqlite3 a command that can run programs or open files (" + risky + "); infer cannot see what it does"
				}
			}
		}
	case "deno":
		if len(args) > 0 && args[0] == "eval" {
			return "it passes code to deno eval; infer cannot see what it does"
		}
	case "npm":
		if len(args) > 0 && (args[0] == "exec" || args[0] == "x") {
			if c := (runner{code: "c", long: []string{"--call"}}).invoke(args[1:], func(string) bool { return false }).code; c != "" {
				return "it passes code to npm exec with " + c + "; infer cannot see what it does"
			}
		}
	case "vim", "vi", "nvim", "view", "ex":
		for _, w := range args {
			if len(w) > 1 && w[0] == '+' && strings.Trim(w[1:], "0123456789") != "" {
				return "it passes a command to " + name + " with " + shorten(w, 20) + "; infer cannot see what it does"
			}
		}
	}
	return ""
}

// sqliteRisky are sqlite3 shell commands and SQL functions that reach
// beyond the database named.
var sqliteRisky = []string{".shell", ".system", ".output", ".once", ".read", ".import", ".open", ".save",
	".backup", ".restore", ".load", ".excel", ".log", ".cd", ".clone", ".archive", ".ar ", "readfile",
	"writefile", "edit(", "load_extension", "attach", "fts3_tokenizer"}

// awkRisk finds what in an awk command can run commands or touch files
// beyond the operands the guard checks: system(), getline (which reads
// other files or a command's output), ARGV (which changes the files
// read), print or printf redirected with > or |, gawk's @load, @include
// and @f() indirect calls, and the options that load code. The program
// is the first operand, or the text of -e and --source; to be safe from
// an option the guard does not know taking a word, every operand that
// could be program text (it holds braces, parentheses, quotes, operators
// or spaces, unlike a file name such as system.txt) is searched too.
// Quoting inside the program is not tracked, because a regular
// expression can fake a string's start and hide what follows.
func awkRisk(name string, args []string) string {
	var programs []string
	explicit, operands := false, false
	for i := 0; i < len(args); i++ {
		w := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case w == "-l" || w == "--load" || strings.HasPrefix(w, "--load=") || strings.HasPrefix(w, "-l") && len(w) > 2 && !operands:
			return "`" + name + " " + shorten(w, 20) + "` loads a compiled extension; infer cannot see what it does"
		case operands || w == "-" || !strings.HasPrefix(w, "-"):
			if len(programs) == 0 && !explicit || strings.ContainsAny(w, "{}()[];\"'<>|=@$ \t\n") {
				programs = append(programs, w)
			}
		case w == "--":
			operands = true
		case strings.HasPrefix(w, "--"):
			long, value, hasValue := strings.Cut(w[2:], "=")
			for _, opt := range []string{"source", "file", "include", "exec", "field-separator", "assign"} {
				if long == "" || !strings.HasPrefix(opt, long) {
					continue
				}
				if !hasValue {
					value = next()
				}
				switch opt {
				case "source":
					programs, explicit = append(programs, value), true
				case "file", "include", "exec":
					explicit = true
				}
				break
			}
		default:
			letter, value := w[1], w[2:]
			if strings.IndexByte("FvfeiEW", letter) < 0 {
				continue
			}
			if value == "" {
				value = next()
			}
			switch letter {
			case 'e':
				programs, explicit = append(programs, value), true
			case 'f', 'i', 'E':
				explicit = true
			}
		}
	}
	for _, p := range programs {
		if what := awkProgramRisk(p); what != "" {
			return "it runs an awk program that uses " + what + ", which can run commands or open other files; infer cannot see what it does"
		}
	}
	return ""
}

func awkProgramRisk(prog string) string {
	// gawk's @load and @include bring in code, and @f() calls the
	// function named by f's value, system included.
	for i := 0; i+1 < len(prog); i++ {
		if prog[i] == '@' && isIdentByte(prog[i+1]) {
			return "@" + string(prog[i+1]) + "…"
		}
	}
	inPrint, depth := false, 0
	for i := 0; i < len(prog); i++ {
		c := prog[i]
		if isIdentByte(c) {
			j := i
			for j < len(prog) && isIdentByte(prog[j]) {
				j++
			}
			switch word := prog[i:j]; word {
			case "system", "getline", "ARGV":
				return word
			case "print", "printf":
				inPrint, depth = true, 0
			}
			i = j - 1
			continue
		}
		if !inPrint {
			continue
		}
		switch c {
		case '(', '[':
			depth++
		case ')', ']':
			if depth--; depth < 0 {
				inPrint = false
			}
		case ';', '}', '\n':
			if depth == 0 {
				inPrint = false
			}
		case '>', '|':
			if depth == 0 {
				return "a redirected print (" + string(c) + ")"
			}
		}
	}
	return ""
}

func isIdentByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// sedRisk reads sed's arguments: the scripts given with -e (or the first
// operand), and -f script files. It returns why a script runs code (the e
// command or the e flag of s, or a script the guard cannot read), and
// the files the scripts read or write by name (r, R, w, W and s///w),
// which the caller checks like other paths. --sandbox makes sed refuse
// all of those, so nothing is reported then.
func sedRisk(args []string) (string, []string) {
	var scripts []string
	given, sandbox := false, false
	operandsOnly := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case operandsOnly || w == "-" || !strings.HasPrefix(w, "-"):
			if !given {
				scripts, given = append(scripts, w), true
			}
		case w == "--":
			operandsOnly = true
		case strings.HasPrefix(w, "--"):
			name, value, hasValue := strings.Cut(w[2:], "=")
			switch {
			case name == "":
			case strings.HasPrefix("sandbox", name) && len(name) >= 2:
				sandbox = true
			case strings.HasPrefix("expression", name):
				if !hasValue {
					value = next()
				}
				scripts, given = append(scripts, value), true
			case strings.HasPrefix("file", name):
				if !hasValue {
					next()
				}
				given = true
			case strings.HasPrefix("line-length", name) && !hasValue:
				next()
			}
		default:
			for j := 1; j < len(w); j++ {
				switch w[j] {
				case 'e':
					v := w[j+1:]
					if v == "" {
						v = next()
					}
					scripts, given = append(scripts, v), true
				case 'f':
					if j == len(w)-1 {
						next()
					}
					given = true
				case 'l':
					if j == len(w)-1 {
						next()
					}
				case 'i':
				default:
					continue
				}
				break
			}
		}
	}
	if sandbox {
		return "", nil
	}
	var files []string
	for _, s := range scripts {
		why, f := sedScript(s)
		if why != "" {
			return why, nil
		}
		files = append(files, f...)
	}
	return "", files
}

// sedScript reads one sed script far enough to find the commands that run
// code or name files. Anything it cannot follow counts as code: a
// misreading must never hide an e.
func sedScript(s string) (string, []string) {
	const unreadable = "it runs a sed script infer cannot read, which may run commands (the e command)"
	const runs = "it runs a sed script that runs shell commands (the e command or flag); infer cannot see what they do"
	var files []string
	i, n := 0, len(s)
	spaces := func() {
		for i < n && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	// delimited reads up to the next unescaped d, leaving i after it.
	delimited := func(d byte) bool {
		for i < n {
			switch s[i] {
			case '\\':
				i += 2
				continue
			case d:
				i++
				return true
			case '\n':
				if d != '\n' {
					return false
				}
			}
			i++
		}
		return false
	}
	toLineEnd := func() string {
		start := i
		for i < n && s[i] != '\n' {
			i++
		}
		return s[start:i]
	}
	address := func() bool {
		switch {
		case i >= n:
		case '0' <= s[i] && s[i] <= '9':
			for i < n && ('0' <= s[i] && s[i] <= '9' || s[i] == '~') {
				i++
			}
		case s[i] == '$':
			i++
		case s[i] == '/':
			i++
			if !delimited('/') {
				return false
			}
		case s[i] == '\\':
			if i+1 >= n || s[i+1] == '\n' || s[i+1] == '\\' {
				return false
			}
			d := s[i+1]
			i += 2
			if !delimited(d) {
				return false
			}
		default:
			return true
		}
		for i < n && (s[i] == 'I' || s[i] == 'M') {
			i++
		}
		return true
	}
	for {
		for i < n && strings.IndexByte(" \t\n;", s[i]) >= 0 {
			i++
		}
		if i >= n {
			return "", files
		}
		if s[i] == '#' {
			toLineEnd()
			continue
		}
		if !address() {
			return unreadable, nil
		}
		spaces()
		if i < n && s[i] == ',' {
			i++
			spaces()
			if i < n && (s[i] == '+' || s[i] == '~') {
				i++
			}
			if !address() {
				return unreadable, nil
			}
		}
		spaces()
		for i < n && s[i] == '!' {
			i++
			spaces()
		}
		if i >= n {
			return unreadable, nil
		}
		cmd := s[i]
		i++
		switch cmd {
		case '{', '}':
			continue
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'l', 'L', 'q', 'Q':
			spaces()
			for i < n && '0' <= s[i] && s[i] <= '9' {
				i++
			}
		case ':', 'b', 't', 'T', 'v':
			for i < n && s[i] != '\n' && s[i] != ';' {
				i++
			}
		case 'a', 'i', 'c':
			// Text runs to the end of the line; a backslash at the end
			// of a line continues it.
			for i < n {
				if s[i] == '\\' {
					i += 2
					continue
				}
				if s[i] == '\n' {
					break
				}
				i++
			}
			continue
		case 'r', 'R', 'w', 'W':
			spaces()
			files = append(files, toLineEnd())
			continue
		case 'e':
			return runs, nil
		case 's', 'y':
			if i >= n || s[i] == '\n' || s[i] == '\\' {
				return unreadable, nil
			}
			d := s[i]
			i++
			// Both parts are read in turn, the pattern and then the
			// replacement (for y, the two character lists); delimited
			// moves i past each.
			if pattern := delimited(d); !pattern {
				return unreadable, nil
			}
			if replacement := delimited(d); !replacement {
				return unreadable, nil
			}
			if cmd == 'y' {
				break
			}
		flags:
			for i < n {
				switch c := s[i]; {
				case c == 'e':
					return runs, nil
				case c == 'w':
					i++
					spaces()
					files = append(files, toLineEnd())
					break flags
				case strings.IndexByte("gpiImM0123456789", c) >= 0:
					i++
				default:
					break flags
				}
			}
		default:
			return unreadable, nil
		}
		spaces()
		if i < n && strings.IndexByte(";\n}#", s[i]) < 0 {
			return unreadable, nil
		}
	}
}

// safeGitKeys are settings git -c may change without naming a program
// for git to run.
var safeGitKeys = map[string]bool{
	"user.name": true, "user.email": true, "core.quotepath": true, "init.defaultbranch": true,
	"commit.gpgsign": true, "tag.gpgsign": true, "core.autocrlf": true, "core.filemode": true,
	"merge.conflictstyle": true, "pull.rebase": true, "push.default": true, "diff.noprefix": true,
	"log.showsignature": true, "core.abbrev": true, "safe.directory": true,
}

// gitRisk finds git options that make git run a program the guard cannot
// see: -c with a setting outside a short safe list (core.pager,
// core.sshCommand, alias.x=!cmd…), --config-env, --exec-path, and the
// subcommand options that take a command (rebase --exec, grep
// --open-files-in-pager, difftool --extcmd, --upload-pack, submodule
// foreach).
func gitRisk(args []string) string {
	i := 0
global:
	for ; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "-c" && i+1 < len(args):
			i++
			key, _, _ := strings.Cut(args[i], "=")
			key = strings.ToLower(key)
			if !safeGitKeys[key] && !strings.HasPrefix(key, "color.") && !strings.HasPrefix(key, "advice.") {
				return "`git -c " + shorten(args[i], 30) + "` can make git run a program; infer cannot see what it does"
			}
		case strings.HasPrefix(w, "-c") && len(w) > 2, strings.HasPrefix(w, "--config-env"), strings.HasPrefix(w, "--exec-path="):
			return "`git " + shorten(w, 30) + "` can make git run a program; infer cannot see what it does"
		case w == "-C" || w == "--git-dir" || w == "--work-tree" || w == "--namespace":
			i++
		case !strings.HasPrefix(w, "-"):
			break global
		}
	}
	if i >= len(args) {
		return ""
	}
	sub, rest := args[i], args[i+1:]
	if sub == "submodule" && len(rest) > 0 && rest[0] == "foreach" {
		return "`git submodule foreach` runs shell code in every submodule; infer cannot see what it does"
	}
	r := runner{long: []string{"--upload-pack", "--receive-pack"}}
	switch sub {
	case "rebase":
		r.code, r.long = "x", append(r.long, "--exec")
	case "grep":
		r.code, r.long = "O", append(r.long, "--open-files-in-pager")
	case "difftool", "mergetool":
		r.code, r.long = "x", append(r.long, "--extcmd")
	case "clone":
		r.code = "u"
	case "push", "archive":
		r.long = append(r.long, "--exec")
	}
	if c := r.invoke(rest, func(string) bool { return false }).code; c != "" {
		return "`git " + sub + " " + shorten(c, 30) + "` makes git run a command; infer cannot see what it does"
	}
	return ""
}

// codeEnv lists environment variables whose value is a command or code
// that programs run (GIT_SSH_COMMAND, PAGER, LD_PRELOAD, BASH_ENV…):
// setting one hands a program code the guard cannot see.
var codeEnv = map[string]bool{
	"BASH_ENV": true, "ENV": true, "PROMPT_COMMAND": true, "LD_PRELOAD": true, "LD_AUDIT": true,
	"GIT_SSH_COMMAND": true, "GIT_SSH": true, "GIT_EXTERNAL_DIFF": true, "GIT_PAGER": true, "PAGER": true,
	"MANPAGER": true, "GIT_EDITOR": true, "EDITOR": true, "VISUAL": true, "GIT_SEQUENCE_EDITOR": true,
	"GIT_ASKPASS": true, "SSH_ASKPASS": true, "GIT_PROXY_COMMAND": true, "GIT_CONFIG_PARAMETERS": true,
	"GIT_CONFIG_COUNT": true, "PERL5OPT": true, "NODE_OPTIONS": true, "RUBYOPT": true, "LESSOPEN": true,
	"LESSCLOSE": true, "TAR_OPTIONS": true, "PYTHONSTARTUP": true, "PYTHONINSPECT": true,
	"GIT_CONFIG": true, "GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true, "GIT_EXEC_PATH": true,
	"GIT_TEMPLATE_DIR": true, "GIT_DIFF_OPTS": true, "SHELLOPTS": true, "BASHOPTS": true,
	"RSYNC_RSH": true, "RSYNC_CONNECT_PROG": true, "BROWSER": true, "MAKEFLAGS": true, "MFLAGS": true,
}
