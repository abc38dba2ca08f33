package wording

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPackageMapNamesEveryPackage holds docs/design.md's package map to
// the tree: every folder with Go code outside tests is a package the map
// names, and every package the map names exists, so the map a newcomer
// reads first cannot fall behind a package added or removed.
func TestPackageMapNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(moduleRoot, "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "\n## Package map\n")
	if start < 0 {
		t.Fatal("docs/design.md has no \"## Package map\" section")
	}
	section := text[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	named := map[string]bool{}
	for _, row := range strings.Split(section, "\n") {
		if !strings.HasPrefix(row, "| `") {
			continue
		}
		cell, _, _ := strings.Cut(row[2:], " |")
		for _, part := range strings.Split(cell, "`") {
			if p := strings.TrimSpace(part); p != "" && p != "," && !strings.Contains(p, " ") {
				named[p] = true
			}
		}
	}
	packages := map[string]bool{}
	err = filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != moduleRoot && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(moduleRoot, filepath.Dir(path))
		if err != nil {
			return err
		}
		packages[filepath.ToSlash(rel)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range packages {
		if !named[p] {
			t.Errorf("docs/design.md's package map does not name %s", p)
		}
	}
	for p := range named {
		if !packages[p] {
			t.Errorf("docs/design.md's package map names %s, which is no package of the module", p)
		}
	}
}
