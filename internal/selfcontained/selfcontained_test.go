package selfcontained

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// moduleRoot is where go.mod is, two folders up from this package.
const moduleRoot = "../.."

// outsidePath matches a path into the folder that used to sit beside the
// checkout: its design notes, style guide, protocol spec, recordings and
// hooks. What they held now lives in docs/ and sim/recording/testdata.
var outsidePath = regexp.MustCompile(`(?:^|[^\w/.-])(?:\.\./)*shared/(?:DESIGN\.md|STYLE\.md|spec/|recordings|hooks/)`)

// outsideRefs returns the lines of text that point outside the repository.
func outsideRefs(text []byte) []int {
	var lines []int
	for i, line := range bytes.Split(text, []byte("\n")) {
		if outsidePath.Match(line) {
			lines = append(lines, i+1)
		}
	}
	return lines
}

// TestNothingPointsOutsideTheRepository walks every text file of the
// module, tests included (they are where the skips were), and fails on any
// path into the old neighbouring folder.
func TestNothingPointsOutsideTheRepository(t *testing.T) {
	self, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(moduleRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != moduleRoot && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			// This package quotes the paths it looks for.
			if abs, err := filepath.Abs(p); err == nil && abs == self {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.IndexByte(data, 0) >= 0 {
			return nil // binary
		}
		checked++
		rel, err := filepath.Rel(moduleRoot, p)
		if err != nil {
			return err
		}
		for _, n := range outsideRefs(data) {
			t.Errorf("%s:%s points outside the repository; use docs/ or sim/recording/testdata", rel, strconv.Itoa(n))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("found no files to check")
	}
}

// TestTheCheckFindsOutsidePaths keeps the check honest: it finds the
// pointers that were in the tree, and passes what only looks like them.
func TestTheCheckFindsOutsidePaths(t *testing.T) {
	for _, s := range []string{
		`const sharedRecording = "../../../shared/recordings/opentask-1.12.1.jsonl"`,
		"// (shared/spec/bridge-protocol.md) and their lenient decoding.",
		"`shared/DESIGN.md` is the architecture the team agreed on",
		"  infer-sim replay ../shared/recordings/opentask-1.12.1.jsonl --ext-only",
		"shared/STYLE.md",
	} {
		if len(outsideRefs([]byte(s))) != 1 {
			t.Errorf("%q passed", s)
		}
	}
	for _, s := range []string{
		`"shared/SKILL.md": {}`,
		"input history, shared with the extension's panel",
		"sim/recording/testdata/opentask-1.12.1.jsonl",
		"docs/protocol.md",
		"a/shared/spec/x",
	} {
		if n := outsideRefs([]byte(s)); len(n) != 0 {
			t.Errorf("%q flagged", s)
		}
	}
}
