package sim

import (
	"os"
	"path/filepath"
	"testing"
)

// A skill added to the project while infer runs is in the panel's next
// list_skills answer, with no restart.
func TestSkillAddedWhileRunningIsListed(t *testing.T) {
	t.Parallel()
	in, c, _ := startPanel(t, nil)
	ctx := ctxGuard(t)
	if err := c.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	has := func(name string) bool {
		t.Helper()
		list, err := c.ListSkills(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list.Skills {
			if s.Name == name {
				return s.Scope == "project"
			}
		}
		return false
	}
	if has("fresh") {
		t.Fatal("skill listed before it was written")
	}
	dir := filepath.Join(in.Root, ".infer", "skills", "fresh")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	skill := "---\nname: fresh\ndescription: written while infer runs\n---\nBody.\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(skill), 0o644); err != nil {
		t.Fatal(err)
	}
	if !has("fresh") {
		t.Fatal("a skill written while infer runs is not in list_skills")
	}
}
