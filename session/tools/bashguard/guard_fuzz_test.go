package bashguard

import (
	"regexp"
	"strings"
	"testing"
)

// fdDup matches a redirection that duplicates a file descriptor. Bash
// allows blanks between the operator and the descriptor (ls >& 0).
var fdDup = regexp.MustCompile(`[0-9]*[<>]&[ \t]*[0-9]+`)

// FuzzGuard feeds arbitrary command lines to the guard. It must never
// panic, and whatever it approves without asking must be exactly one
// simple command of literal words, with none of the structures that are
// never auto-approved.
func FuzzGuard(f *testing.F) {
	for _, seed := range []string{
		"ls -la", "git status", `echo "a && b"`, "echo $(id)", "cat x | sh", "ls; rm -rf /",
		"a && b", "echo `id`", "ls > out", "ls |& cat", "ls\nrm x", "FOO=1 ls", "eval ls",
		"bash -c 'ls'", "ls *.go", "cat < in.txt", "echo '$(x)'", `echo "$HOME"`, "sudo ls",
		"find . -exec rm {} +", "git -c core.pager=sh log", "ls 2>&1", "cat <<EOF\nx\nEOF", "",
		"((1+1))", "f() { ls; }", "ls &", "{ ls; }", "(ls)", "ls ${X:-y}", "echo ~", "echo {a,b}",
	} {
		f.Add(seed)
	}
	g := Default("/work/project")
	f.Fuzz(func(t *testing.T, cmd string) {
		a := Analyze(cmd)
		for _, readOnly := range []bool{true, false} {
			ok, why := g.Allowed(cmd, readOnly)
			if !ok {
				continue
			}
			if a.Unsafe != "" || a.Words == nil {
				t.Fatalf("approved %q (%s) although analysis says unsafe: %q", cmd, why, a.Unsafe)
			}
			// The guard deliberately accepts redirections that write nowhere,
			// including any duplication of a descriptor (>&0, 2>&1).
			// A single statement may end with ";" or a newline.
			plain := fdDup.ReplaceAllString(cmd, "")
			plain = strings.NewReplacer(">&-", "", "2>/dev/null", "", ">/dev/null", "").Replace(plain)
			plain = withoutCommentLines(plain)
			plain = strings.TrimRight(plain, " \t\n;")
			for _, bad := range []string{"|", "&&", "||", ";", "`", "$(", ">", "\n"} {
				if strings.Contains(plain, bad) && !quotedOnly(plain, bad) {
					t.Fatalf("approved %q containing unquoted %q", cmd, bad)
				}
			}
		}
		g.CheckAuto(cmd)
		Prefix(cmd)
	})
}

// withoutCommentLines drops the lines that hold only a comment: "ls\n#"
// is one command and a comment, which Bash runs as ls alone, so its
// newline separates nothing the guard must refuse.
func withoutCommentLines(cmd string) string {
	lines := strings.Split(cmd, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !strings.HasPrefix(strings.TrimLeft(l, " \t"), "#") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// quotedOnly reports whether every occurrence of tok in cmd sits inside
// single quotes, or inside double quotes for tokens the shell does not
// expand there. It is deliberately simple: the fuzz check only needs to
// rule out approvals of commands where tok is plainly active.
func quotedOnly(cmd, tok string) bool {
	inSingle, inDouble := false, false
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case c == '\\' && !inSingle && i+1 < len(cmd):
			i++
			continue
		case c == '\'' && !inDouble:
			inSingle = !inSingle
			continue
		case c == '"' && !inSingle:
			inDouble = !inDouble
			continue
		case c == '#' && !inSingle && !inDouble && (i == 0 || cmd[i-1] == ' ' || cmd[i-1] == '\t'):
			// A comment runs to the end of the line.
			for i < len(cmd) && cmd[i] != '\n' {
				i++
			}
			continue
		}
		if strings.HasPrefix(cmd[i:], tok) {
			expandsInDouble := tok == "`" || tok == "$("
			if !inSingle && (!inDouble || expandsInDouble) {
				return false
			}
		}
	}
	return true
}
