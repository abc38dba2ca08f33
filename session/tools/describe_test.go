package tools

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestSchemasAreTheHandWrittenOnes: the schemas generated from the
// argument structs are, keyword for keyword, the ones infer offered
// models when they were written by hand (testdata/schemas.json keeps
// those), so no provider sees a different tool.
func TestSchemasAreTheHandWrittenOnes(t *testing.T) {
	raw, err := os.ReadFile("testdata/schemas.json")
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	specs := DefaultRegistry().Specs()
	if len(specs) != len(want) {
		t.Errorf("%d tools, the hand-written schemas had %d", len(specs), len(want))
	}
	for _, s := range specs {
		var got any
		if err := json.Unmarshal(s.Parameters, &got); err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if !reflect.DeepEqual(got, want[s.Name]) {
			w, _ := json.Marshal(want[s.Name])
			t.Errorf("%s: schema\n%s\nwant\n%s", s.Name, s.Parameters, w)
		}
	}
}

// TestSchemasKeepTheFieldOrder: properties are listed as the struct
// declares them, as the hand-written schemas listed them, since a model
// reads the first ones first.
func TestSchemasKeepTheFieldOrder(t *testing.T) {
	got := string(bashSchema())
	if !(strings.Index(got, `"command":{`) < strings.Index(got, `"timeout_ms":{`) &&
		strings.Index(got, `"timeout_ms":{`) < strings.Index(got, `"description":{`)) {
		t.Errorf("Bash's properties are out of order: %s", got)
	}
}

func TestBadLimitsAreRefused(t *testing.T) {
	type unknownLimit struct {
		A string `json:"a" limits:"pattern=1"`
	}
	type notKeyValue struct {
		A string `json:"a" limits:"minLength"`
	}
	type notANumber struct {
		A int `json:"a" limits:"minimum=one"`
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[unknownLimit](), reflect.TypeFor[notKeyValue](), reflect.TypeFor[notANumber]()} {
		if _, err := generateSchema(typ); err == nil {
			t.Errorf("%s: limits accepted", typ)
		}
	}
}

// TestEveryToolIsDescribedOnce: each built-in tool's name is unique and
// its schema compiles for validation; the browser tools are those that
// act through the browser.
func TestEveryToolIsDescribedOnce(t *testing.T) {
	reg := DefaultRegistry()
	var browsers []string
	for _, name := range reg.Names() {
		tool, _ := reg.Lookup(name)
		if _, err := compileSchema(tool.Schema()); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if isBrowser(tool) {
			browsers = append(browsers, name)
		}
	}
	want := []string{"BrowserNavigate", "BrowserClick", "BrowserType", "BrowserRead", "BrowserScreenshot", "BrowserTabs"}
	if !slices.Equal(browsers, want) || !slices.Equal(BrowserNames(), want) {
		t.Errorf("BrowserNames() = %v, the browser tools are %v", BrowserNames(), browsers)
	}
}

func TestShow(t *testing.T) {
	for _, tc := range []struct {
		name, args, summary, target string
		hasTarget                   bool
		detail                      []Part
	}{
		{NameBash, `{"command":"go test\n ./...","description":"tests"}`, "go test ./...", "", false,
			[]Part{{Kind: PartCommand, Text: "go test\n ./..."}, {Kind: PartField, Label: "about: ", Text: "tests"}}},
		{NameWrite, `{"path":"a.md","content":"x\n"}`, "a.md", "", false,
			[]Part{{Kind: PartField, Label: "file: ", Text: "a.md"}, {Kind: PartContent, Path: "a.md", Text: "x\n"}}},
		{NameEdit, `{"path":"a.go","old_string":"a","new_string":"b","replace_all":true}`, "a.go", "", false,
			[]Part{{Kind: PartField, Label: "file: ", Text: "a.go"}, {Kind: PartNote, Text: "every occurrence"}, {Kind: PartChange, Old: "a", Text: "b"}}},
		{NameRead, `{"path":"a.go","limit":3}`, "a.go", "", false,
			[]Part{{Kind: PartText, Text: "{\n  \"limit\": 3,\n  \"path\": \"a.go\"\n}"}}},
		{NameGrep, `{"pattern":"x","path":"cmd"}`, "x in cmd", "", false, nil},
		{NameBrowserType, `{"selector":"#q","text":"secret","press_enter":true}`, `"secret" into #q ⏎`, "text into #q ⏎", true,
			[]Part{{Kind: PartField, Label: "type: ", Text: "secret"}, {Kind: PartField, Label: "into: ", Text: "#q"}, {Kind: PartNote, Text: "then press enter"}}},
		{NameBrowserRead, `{}`, "whole page", "whole page", true, []Part{{Kind: PartField, Label: "read: ", Text: "(whole page)"}}},
		{NameBrowserTabs, `{}`, "", "", true, []Part{{Kind: PartText, Text: "{}"}}},
		{NameWebSearch, `{"query":"go"}`, "query=go", "", false, nil},
		{NetworkTool, `{"host":"h:443","command":"curl","loopback":true}`, "h:443 for curl", "", false,
			[]Part{{Kind: PartField, Label: "host: ", Text: "h:443"}, {Kind: PartField, Label: "for: ", Text: "curl"}, {Kind: PartNote, Text: "a service on your own machine", Warn: true}}},
		// A wrong type leaves its field empty; the call still shows.
		{NameBrowserClick, `{"selector":7}`, "", "", true, []Part{{Kind: PartField, Label: "click: "}}},
		// Dynamic names (an MCP server's tools) show generically.
		{"mcp__fs__read", `{"b":"2","a":"1","n":3}`, "a=1 b=2", "", false,
			[]Part{{Kind: PartText, Text: "{\n  \"a\": \"1\",\n  \"b\": \"2\",\n  \"n\": 3\n}"}}},
		{NameBash, `not json`, "not json", "", false, []Part{{Kind: PartField, Label: "args: ", Text: "not json"}}},
	} {
		s := Show(tc.name, tc.args)
		if s.Summary != tc.summary || s.Target != tc.target || s.HasTarget != tc.hasTarget {
			t.Errorf("Show(%s, %s) = %q, target %q (%v); want %q, %q (%v)", tc.name, tc.args, s.Summary, s.Target, s.HasTarget, tc.summary, tc.target, tc.hasTarget)
		}
		if tc.detail != nil && !reflect.DeepEqual(s.Detail, tc.detail) {
			t.Errorf("Show(%s, %s).Detail = %+v, want %+v", tc.name, tc.args, s.Detail, tc.detail)
		}
	}
}

// TestValidatorAgreesWithTheSchemaLibrary: the registry's own validator,
// kept for the errors it writes to the model, accepts exactly what
// jsonschema-go accepts for the generated schemas, so the model is held
// to the schema it is shown.
func TestValidatorAgreesWithTheSchemaLibrary(t *testing.T) {
	reg := DefaultRegistry()
	cases := map[string][]string{
		NameBash:              {`{"command":"ls"}`, `{"command":""}`, `{"command":"ls","timeout_ms":0}`, `{"command":"ls","timeout_ms":600000}`, `{"command":"ls","timeout_ms":600001}`, `{"command":"ls","x":1}`, `{}`},
		NameRead:              {`{"path":"a"}`, `{"path":"a","limit":"ten"}`, `{"path":"a","limit":3.0}`, `{"path":"a","offset":2.5}`, `{"path":7}`},
		NameWrite:             {`{"path":"a","content":""}`, `{"path":"a"}`},
		NameEdit:              {`{"path":"a","old_string":"x","new_string":""}`, `{"path":"a","old_string":"","new_string":"y"}`, `{"path":"a","old_string":"x","new_string":"y","replace_all":"yes"}`},
		NameGrep:              {`{"pattern":"x","glob":"*.go"}`, `{"glob":"*.go"}`},
		NameTree:              {`{}`, `{"depth":10}`, `{"depth":11}`, `{"path":3}`},
		NameBrowserNavigate:   {`{"url":"https://x"}`, `{"url":""}`},
		NameBrowserClick:      {`{"selector":"#a"}`, `{}`},
		NameBrowserType:       {`{"selector":"#a","text":""}`, `{"selector":"#a"}`, `{"selector":"#a","text":"x","press_enter":true}`},
		NameBrowserRead:       {`{}`, `{"selector":"main"}`, `{"selector":false}`},
		NameBrowserScreenshot: {`{}`, `{"full":true}`},
		NameBrowserTabs:       {`{}`, `{"all":true}`},
		NameWebSearch:         {`{"query":"go"}`, `{"query":""}`},
	}
	if len(cases) != len(reg.Names()) {
		t.Errorf("cases for %d tools, %d are registered", len(cases), len(reg.Names()))
	}
	for name, argsList := range cases {
		tool, ok := reg.Lookup(name)
		if !ok {
			t.Fatalf("%s is not registered", name)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(tool.Schema(), &s); err != nil {
			t.Fatal(err)
		}
		rs, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, args := range argsList {
			var v any
			if err := json.Unmarshal([]byte(args), &v); err != nil {
				t.Fatal(err)
			}
			libErr := rs.Validate(v)
			ourErr := reg.Validate(name, args)
			if (libErr == nil) != (ourErr == nil) {
				t.Errorf("%s %s: jsonschema-go says %v, the registry says %v", name, args, libErr, ourErr)
			}
		}
	}
}

// TestToolNamesAreSpelledOnce: outside tests, a built-in tool's name is
// written only in the constant that declares it, next to the tool; other
// code names tools by those constants, so a renamed tool cannot leave a
// switch behind that no longer matches.
func TestToolNamesAreSpelledOnce(t *testing.T) {
	names := map[string]bool{strconv.Quote(NetworkTool): true}
	for _, n := range DefaultRegistry().Names() {
		names[strconv.Quote(n)] = true
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		declared := map[*ast.BasicLit]bool{}
		if filepath.Dir(path) == filepath.Join(root, "session", "tools") {
			for _, decl := range f.Decls {
				if g, ok := decl.(*ast.GenDecl); ok && g.Tok == token.CONST {
					for _, spec := range g.Specs {
						for _, v := range spec.(*ast.ValueSpec).Values {
							if lit, ok := v.(*ast.BasicLit); ok {
								declared[lit] = true
							}
						}
					}
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && names[lit.Value] && !declared[lit] {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d spells the tool name %s; use its constant in session/tools", rel, fset.Position(lit.Pos()).Line, lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
