package skills

import (
	"os"
	"path/filepath"
	"testing"
)

// A skill written while infer runs is listed by the next List, one removed
// disappears, and a broken one is reported once however often it is listed.
func TestLiveSeesSkillsAddedAndRemovedWhileRunning(t *testing.T) {
	l := newLayout(t)
	writeSkill(t, l.user, "first", skillFile("first", "there at start", ""))
	var warnings []error
	live := NewLive(Options{ProjectRoot: l.root, Home: l.home}, func(err error) { warnings = append(warnings, err) })

	if got := summary(live.List()); got != "first(user)" {
		t.Fatalf("at start: %s", got)
	}
	writeSkill(t, l.project, "x", skillFile("x", "added while running", ""))
	if got := summary(live.List()); got != "first(user) x(project)" {
		t.Fatalf("after adding .infer/skills/x: %s", got)
	}
	if err := os.RemoveAll(filepath.Join(l.user, "first")); err != nil {
		t.Fatal(err)
	}
	if got := summary(live.List()); got != "x(project)" {
		t.Fatalf("after removing first: %s", got)
	}

	writeSkill(t, l.user, "broken", "no front matter here")
	for range 3 {
		live.List()
	}
	if len(warnings) != 1 {
		t.Fatalf("a broken skill listed three times gave %d warnings, want 1: %v", len(warnings), warnings)
	}
}
