package skills

import (
	"testing"
	"testing/fstest"
	"unicode/utf8"
)

// FuzzFrontMatter feeds arbitrary SKILL.md files to discovery. It must
// never panic or fail as a whole; a skill it accepts has a valid name equal
// to its directory and a non-empty description within bounds, and a file
// it rejects produces exactly one warning.
func FuzzFrontMatter(f *testing.F) {
	for _, seed := range []string{
		"---\nname: demo\ndescription: Does a thing\n---\nBody\n",
		"---\r\nname: demo\r\ndescription: CRLF\r\n---\r\n",
		"\ufeff---\nname: demo\ndescription: BOM\n---\n",
		"---\nname: Demo\ndescription: bad name\n---\n",
		"---\nname: demo\n---\n", "---\nname: [x]\ndescription: y\n---\n", "no front matter",
		"---\nname: demo\ndescription: x\n", "---\n---\n", "", "---\nname: demo\ndescription: |\n  multi\n  line\n---\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, skillMD string) {
		fsys := fstest.MapFS{"demo/SKILL.md": {Data: []byte(skillMD)}}
		got, warnings := Discover(Options{Catalog: fsys})
		switch len(got) {
		case 0:
			if len(warnings) != 1 {
				t.Fatalf("rejected without exactly one warning: %v", warnings)
			}
		case 1:
			s := got[0]
			if s.Name != "demo" || checkName(s.Name) != nil {
				t.Fatalf("accepted a bad name %q", s.Name)
			}
			if s.Description == "" || utf8.RuneCountInString(s.Description) > maxDescriptionLen {
				t.Fatalf("accepted description %q", s.Description)
			}
			if len(warnings) != 0 {
				t.Fatalf("accepted with warnings %v", warnings)
			}
		default:
			t.Fatalf("one file gave %d skills", len(got))
		}
	})
}
