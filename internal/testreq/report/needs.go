package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// testreqPath is the import path tests name their needs through.
const testreqPath = "github.com/infer-workspace/infer/internal/testreq"

// needUsers walks the module under root and maps each testreq variable
// named in a test file (testreq.Bubblewrap, …) to the folders, as
// ./a/b, whose tests name it. Reading the tests themselves keeps the list
// true as tests come and go, where a hand-kept one would drift.
func needUsers(root string) (map[string][]string, error) {
	sets := map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		local := importName(f)
		if local == "" {
			return nil
		}
		dir := "./" + filepath.ToSlash(filepath.Dir(path))
		if rel, err := filepath.Rel(root, filepath.Dir(path)); err == nil {
			dir = "./" + filepath.ToSlash(rel)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == local {
				if sets[sel.Sel.Name] == nil {
					sets[sel.Sel.Name] = map[string]bool{}
				}
				sets[sel.Sel.Name][dir] = true
			}
			return true
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for ident, dirs := range sets {
		for d := range dirs {
			out[ident] = append(out[ident], d)
		}
		sort.Strings(out[ident])
	}
	return out, nil
}

// importName is the name f refers to testreq by, or "" when f does not
// import it.
func importName(f *ast.File) string {
	for _, imp := range f.Imports {
		if p, err := strconv.Unquote(imp.Path.Value); err != nil || p != testreqPath {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return "testreq"
	}
	return ""
}

// listOr joins items with commas, or says none.
func listOr(items []string, none string) string {
	if len(items) == 0 {
		return none
	}
	return strings.Join(items, ", ")
}
