package wording

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// moduleRoot is where go.mod is, two folders up from this package.
const moduleRoot = "../.."

// text is one piece of prose to check and where it is.
type text struct {
	where string // file:line
	s     string
}

// goStrings returns the string literals of a Go file, raw and
// interpreted, with their lines. Comments are left out: they are for the
// maintainers, and quote code freely.
func goStrings(t *testing.T, path string) []text {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	file := fset.AddFile(path, -1, len(src))
	var sc scanner.Scanner
	sc.Init(file, src, nil, 0)
	var out []text
	for {
		pos, tok, lit := sc.Scan()
		if tok == token.EOF {
			return out
		}
		if tok != token.STRING {
			continue
		}
		s, err := strconv.Unquote(lit)
		if err != nil {
			continue
		}
		out = append(out, text{where: fset.Position(pos).String(), s: s})
	}
}

// markdown returns a Markdown file's prose paragraphs, line by line, with
// code blocks and table rows left out: code is not prose, and tables align
// their columns with spaces.
func markdown(t *testing.T, path string) []text {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []text
	fenced := false
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			fenced = !fenced
			continue
		}
		if fenced || strings.HasPrefix(trimmed, "|") || strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") {
			continue
		}
		out = append(out, text{where: path + ":" + strconv.Itoa(i+1), s: line})
	}
	return out
}

// sources walks the module for the text to check. Test files and test
// data are left out: they quote broken text on purpose.
func sources(t *testing.T) []text {
	t.Helper()
	var out []text
	err := filepath.WalkDir(moduleRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != moduleRoot && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case strings.HasSuffix(p, "_test.go"):
		case strings.HasSuffix(p, ".go"):
			out = append(out, goStrings(t, p)...)
		case strings.HasSuffix(p, ".md"), strings.HasSuffix(p, ".yaml"):
			// The YAML files are the commented templates infer writes.
			out = append(out, markdown(t, p)...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatal("found no text to check")
	}
	return out
}

// doubledWords finds a word written twice in a row, as in "the the".
// Words in code (after a dot, a dash, a slash or an underscore, or in
// backquotes) and the same word in two cases ("mode MODE", a flag and its
// placeholder) are not prose slips; neither are numbers.
func doubledWords(s string) []string {
	var found []string
	words := wordsOf(s)
	for i := 1; i < len(words); i++ {
		a, b := words[i-1], words[i]
		if a.text != b.text && !(strings.EqualFold(a.text, b.text) && isCapitalized(a.text) && !isUpper(b.text)) {
			continue
		}
		// "read-only only" reads as a word written twice too.
		if !(a.prose || a.hyphenated) || !b.prose || !b.adjacent {
			continue
		}
		found = append(found, a.text+" "+b.text)
	}
	return found
}

// word is one word of a text and how it stands there.
type word struct {
	text string
	// prose is false for a word glued to code punctuation or inside
	// backquotes.
	prose bool
	// hyphenated is true for the last part of a compound ("only" in
	// "read-only") outside code.
	hyphenated bool
	// adjacent is true when one space, or one line break and the next
	// line's indentation, separate it from the word before; more spaces
	// line up columns.
	adjacent bool
}

func wordsOf(s string) []word {
	var out []word
	inCode := false
	start := -1
	gap := ""
	runes := []rune(s)
	for i := 0; i <= len(runes); i++ {
		var r rune
		if i < len(runes) {
			r = runes[i]
		}
		if i < len(runes) && (unicode.IsLetter(r) || r == '\'') {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			before, after := rune(0), r
			if start > 0 {
				before = runes[start-1]
			}
			w := word{text: strings.Trim(string(runes[start:i]), "'")}
			w.prose = !inCode && !strings.ContainsRune("._-/$%{<=:@#", before) && !strings.ContainsRune("._-/(=:@[{<", after) && !unicode.IsDigit(after) && w.text != ""
			w.hyphenated = !inCode && before == '-' && start > 1 && unicode.IsLetter(runes[start-2])
			w.adjacent = gap == " " || (strings.Count(gap, "\n") == 1 && strings.Trim(gap, " \t\n") == "")
			out = append(out, w)
			start = -1
			gap = ""
		}
		if i < len(runes) {
			if r == '`' {
				inCode = !inCode
			}
			gap += string(r)
		}
	}
	return out
}

func isCapitalized(s string) bool {
	r := []rune(s)
	return len(r) > 0 && unicode.IsUpper(r[0])
}

func isUpper(s string) bool { return strings.ToUpper(s) == s }

// doubleSpace is two spaces between words inside a sentence.
var doubleSpace = regexp.MustCompile(`[\p{Ll},;]  [\p{Ll}]`)

// doubledSpaces finds two spaces inside a sentence of a line that does
// not otherwise line things up in columns: a line with a run of three or
// more spaces, or two runs, is a table or an aligned help text, whose
// spacing is on purpose.
func doubledSpaces(s string) []string {
	var found []string
	for line := range strings.Lines(s) {
		body := strings.TrimLeft(line, " \t")
		if strings.Contains(body, "   ") || strings.Count(body, "  ") != 1 || strings.Contains(body, "\t") {
			continue
		}
		// An indented "term  what it is" line is a list lined up by hand.
		if len(body) < len(line) && strings.Index(body, "  ") < strings.Index(body+" ", " ")+1 {
			continue
		}
		if m := doubleSpace.FindString(body); m != "" {
			found = append(found, strings.TrimSpace(line))
		}
	}
	return found
}

// TestNoDoubledWordsOrSpaces: a message, help text or page of the docs
// with a word written twice, or two spaces inside a sentence, reads as
// careless; a few once did ("the the" in an error, "to  the" in help).
func TestNoDoubledWordsOrSpaces(t *testing.T) {
	for _, tx := range sources(t) {
		for _, d := range doubledWords(tx.s) {
			t.Errorf("%s: doubled word %q", tx.where, d)
		}
		for _, d := range doubledSpaces(tx.s) {
			t.Errorf("%s: two spaces in %q", tx.where, d)
		}
	}
}

// TestTheCheckFindsSlips keeps the check honest: it finds what it is for
// and passes what only looks like it.
func TestTheCheckFindsSlips(t *testing.T) {
	for _, s := range []string{"open the the page", "The the page", "it is is ready", "the\nthe page", "a  sentence with two spaces", "plan (read-only only)"} {
		if len(doubledWords(s))+len(doubledSpaces(s)) == 0 {
			t.Errorf("%q passed", s)
		}
	}
	for _, s := range []string{"--mode MODE", "a.b b", "`x x`", "go go1.26", "col1  col2   col3", "1 1", "tabs\tand  more\tcolumns", "had to, to be fair", "  ag-ui  newline-delimited events", "  list                  list them", "--only only", "a-b-only only-x"} {
		if d := append(doubledWords(s), doubledSpaces(s)...); len(d) != 0 {
			t.Errorf("%q flagged: %q", s, d)
		}
	}
}
