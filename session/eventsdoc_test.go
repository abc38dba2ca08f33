package session

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDesignTableNamesEveryEvent keeps docs/design.md's table of who
// publishes each fact whole: every type that implements Event has one
// row, and every name in the table is an Event.
func TestDesignTableNamesEveryEvent(t *testing.T) {
	events := eventTypes(t)
	if len(events) < 10 {
		t.Fatalf("found only %d event types in events.go: %v", len(events), events)
	}
	table := designTableEvents(t)
	for _, e := range events {
		if n := count(table, e); n != 1 {
			t.Errorf("docs/design.md's publisher table has %d rows for %s, want 1", n, e)
		}
	}
	for _, e := range table {
		if !slices.Contains(events, e) {
			t.Errorf("docs/design.md's publisher table names %s, which is not a session.Event", e)
		}
	}
}

// eventTypes lists the receivers of sessionEvent, the sealed interface's
// method, in events.go.
func eventTypes(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "events.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || fn.Name.Name != "sessionEvent" {
			continue
		}
		if id, ok := fn.Recv.List[0].Type.(*ast.Ident); ok {
			out = append(out, id.Name)
		}
	}
	return out
}

// designTableEvents reads the names in the first column of the table that
// follows the "Fact (event)" header.
func designTableEvents(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile("`([A-Z][A-Za-z]*)`")
	var out []string
	in := false
	for line := range strings.SplitSeq(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "| Fact (event) |"):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "|"):
			first, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), "|")
			for _, m := range name.FindAllStringSubmatch(first, -1) {
				out = append(out, m[1])
			}
		case in:
			if len(out) == 0 {
				t.Fatal("docs/design.md's publisher table is empty")
			}
			return out
		}
	}
	if len(out) == 0 {
		t.Fatal("docs/design.md has no table headed | Fact (event) |")
	}
	return out
}

func count(names []string, name string) int {
	n := 0
	for _, x := range names {
		if x == name {
			n++
		}
	}
	return n
}

// TestEventDocNamesTheFactsWithSeveralPublishers holds Event's doc comment
// to the code: the facts it says are published from more than one place
// are exactly those whose composite literal is passed to publish in more
// than one function of this package. It once said every fact had one.
func TestEventDocNamesTheFactsWithSeveralPublishers(t *testing.T) {
	events := eventTypes(t)
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	sites := map[string]map[string]bool{} // event type -> publishing functions
	var doc string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					if ts, ok := sp.(*ast.TypeSpec); ok && ts.Name.Name == "Event" && name == "events.go" {
						doc = d.Doc.Text()
					}
				}
			case *ast.FuncDecl:
				ast.Inspect(d, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok || len(call.Args) != 1 {
						return true
					}
					if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "publish" {
						return true
					}
					if lit, ok := call.Args[0].(*ast.CompositeLit); ok {
						if id, ok := lit.Type.(*ast.Ident); ok {
							if sites[id.Name] == nil {
								sites[id.Name] = map[string]bool{}
							}
							sites[id.Name][d.Name.Name] = true
						}
					}
					return true
				})
			}
		}
	}
	if doc == "" {
		t.Fatal("no doc comment on Event in events.go")
	}
	mentioned := map[string]bool{}
	for _, w := range regexp.MustCompile(`[A-Z][A-Za-z]+`).FindAllString(doc, -1) {
		if slices.Contains(events, w) {
			mentioned[w] = true
		}
	}
	for _, e := range events {
		// One publisher per fact is a rule, not a debt: who reports a
		// fact calls its one publishing function.
		if len(sites[e]) > 1 {
			t.Errorf("%s is published from %d functions %v; give it one that the others call", e, len(sites[e]), sites[e])
		}
		several := len(sites[e]) > 1
		if several != mentioned[e] {
			t.Errorf("%s is published from %d functions %v; Event's doc names it among the facts with several publishers: %v",
				e, len(sites[e]), sites[e], mentioned[e])
		}
	}
}

// TestTheDomainSpeaksNoClientProtocol: no package under session imports
// the AG-UI SDK; the panel's protocol is encoded at the edge (bridge/agui).
func TestTheDomainSpeaksNoClientProtocol(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			if strings.Contains(imp.Path.Value, "ag-ui-protocol") {
				t.Errorf("%s imports %s", path, imp.Path.Value)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked only %d files", checked)
	}
}
