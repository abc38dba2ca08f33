package skills

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// skillFile is a valid SKILL.md for name.
func skillFile(name, description, body string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\nallowed-tools: Bash Read\n---\n\n%s", name, description, body)
}

// writeSkill creates <dir>/<name>/SKILL.md.
func writeSkill(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name, "SKILL.md"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

type layout struct {
	root, home            string
	project, agents, user string
}

func newLayout(t *testing.T) layout {
	base := t.TempDir()
	l := layout{root: filepath.Join(base, "repo"), home: filepath.Join(base, "home")}
	l.project = filepath.Join(l.root, ".infer", "skills")
	l.agents = filepath.Join(l.root, ".agents", "skills")
	l.user = filepath.Join(l.home, "skills")
	return l
}

func (l layout) plugin(name string) string { return filepath.Join(l.home, "plugins", name, "skills") }

// summary renders skills as "name(scope)" in order.
func summary(skills []Skill) string {
	var parts []string
	for _, s := range skills {
		parts = append(parts, fmt.Sprintf("%s(%s)", s.Name, s.Scope))
	}
	return strings.Join(parts, " ")
}

func noWarnings(t *testing.T, warnings []error) {
	t.Helper()
	for _, w := range warnings {
		t.Errorf("unexpected warning: %v", w)
	}
}

func TestShadowingAcrossEveryScope(t *testing.T) {
	l := newLayout(t)
	catalog := fstest.MapFS{
		"shared/SKILL.md":       {Data: []byte(skillFile("shared", "from the catalog", "catalog body"))},
		"catalog-only/SKILL.md": {Data: []byte(skillFile("catalog-only", "c", ""))},
	}
	for dir, scope := range map[string]string{l.project: "project", l.agents: "agents", l.user: "user", l.plugin("p"): "plugin"} {
		writeSkill(t, dir, "shared", skillFile("shared", "from "+scope, scope+" body"))
		writeSkill(t, dir, scope+"-only", skillFile(scope+"-only", scope, ""))
	}
	opts := Options{ProjectRoot: l.root, Home: l.home, Catalog: catalog}

	skills, warnings := Discover(opts)
	noWarnings(t, warnings)
	want := "agents-only(agents) catalog-only(catalog) p:plugin-only(plugin) p:shared(plugin) project-only(project) shared(project) user-only(user)"
	if got := summary(skills); got != want {
		t.Fatalf("skills\n got %s\nwant %s", got, want)
	}

	// Remove the strongest copy each time: the next scope's shows through.
	for _, step := range []struct {
		remove, scope, description string
	}{
		{l.project, "project", "from project"},
		{l.agents, "agents", "from agents"},
		{l.user, "user", "from user"},
		{"", "catalog", "from the catalog"},
	} {
		skills, warnings := Discover(opts)
		noWarnings(t, warnings)
		var shared []Skill
		for _, s := range skills {
			if s.Name == "shared" {
				shared = append(shared, s)
			}
		}
		if len(shared) != 1 || string(shared[0].Scope) != step.scope || shared[0].Description != step.description {
			t.Fatalf("shared resolved to %+v, want one from %s", shared, step.scope)
		}
		if body, err := shared[0].Body(); err != nil || body != step.scope+" body" {
			t.Fatalf("%s body %q, %v", step.scope, body, err)
		}
		if step.remove != "" {
			os.RemoveAll(filepath.Join(step.remove, "shared"))
		}
	}
}

func TestPluginSkillsAreQualified(t *testing.T) {
	l := newLayout(t)
	writeSkill(t, l.plugin("gh-tools"), "review", skillFile("review", "Review pull requests", "Use gh."))
	writeSkill(t, l.plugin("other"), "review", skillFile("review", "Another review", ""))
	writeSkill(t, l.user, "review", skillFile("review", "The user's own", ""))
	writeSkill(t, l.plugin("Bad_Plugin"), "x", skillFile("x", "never seen", ""))
	os.MkdirAll(filepath.Join(l.home, "plugins", "no-skills-dir"), 0o755)
	os.WriteFile(filepath.Join(l.home, "plugins", "README.md"), []byte("stray file"), 0o644)

	skills, warnings := Discover(Options{Home: l.home})
	if got, want := summary(skills), "gh-tools:review(plugin) other:review(plugin) review(user)"; got != want {
		t.Fatalf("skills\n got %s\nwant %s", got, want)
	}
	if s := skills[0]; s.Path != filepath.Join(l.plugin("gh-tools"), "review", "SKILL.md") || s.Description != "Review pull requests" {
		t.Fatalf("plugin skill %+v", s)
	}
	if body, err := skills[0].Body(); err != nil || body != "Use gh." {
		t.Fatalf("Body = %q, %v", body, err)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0].Error(), "Bad_Plugin") {
		t.Fatalf("warnings %v, want one about Bad_Plugin", warnings)
	}
}

func TestBadFrontMatterIsSkippedWithAWarning(t *testing.T) {
	l := newLayout(t)
	bad := map[string]string{
		"no-front-matter":       "# Just markdown\n",
		"unclosed":              "---\nname: unclosed\ndescription: d\n",
		"bad-yaml":              "---\nname: [bad-yaml\ndescription: d\n---\n",
		"not-a-mapping":         "---\njust a string\n---\n",
		"no-name":               "---\ndescription: d\n---\n",
		"mismatch":              skillFile("other-name", "d", ""),
		"Upper":                 skillFile("Upper", "d", ""),
		"double--hyphen":        skillFile("double--hyphen", "d", ""),
		"-leading":              skillFile("-leading", "d", ""),
		strings.Repeat("a", 65): skillFile(strings.Repeat("a", 65), "d", ""),
		"no-description":        "---\nname: no-description\n---\n",
		"blank-description":     "---\nname: blank-description\ndescription: \"  \"\n---\n",
		"long-description":      skillFile("long-description", strings.Repeat("x", 1025), ""),
		"name-is-a-list":        "---\nname: [a, b]\ndescription: d\n---\n",
	}
	for dir, content := range bad {
		writeSkill(t, l.user, dir, content)
	}
	os.MkdirAll(filepath.Join(l.user, "no-skill-md"), 0o755)
	writeSkill(t, l.user, "good", skillFile("good", "fine", ""))
	writeSkill(t, l.user, strings.Repeat("b", 64), skillFile(strings.Repeat("b", 64), strings.Repeat("y", 1024), ""))
	writeSkill(t, l.user, "folded", "\ufeff---\r\nname: folded\r\ndescription: >\r\n  Spans\r\n  lines.\r\nlicense: MIT\r\nmetadata:\r\n  author: me\r\n---\r\nBody\r\n")
	os.WriteFile(filepath.Join(l.user, "notes.txt"), []byte("not a skill"), 0o644)

	skills, warnings := Discover(Options{Home: l.home})
	if got, want := summary(skills), strings.Repeat("b", 64)+"(user) folded(user) good(user)"; got != want {
		t.Fatalf("skills\n got %s\nwant %s", got, want)
	}
	if skills[1].Description != "Spans lines." {
		t.Fatalf("folded description %q", skills[1].Description)
	}
	if len(warnings) != len(bad)+1 {
		t.Errorf("%d warnings, want %d:", len(warnings), len(bad)+1)
		for _, w := range warnings {
			t.Log(w)
		}
	}
	for dir := range bad {
		found := false
		for _, w := range warnings {
			found = found || strings.Contains(w.Error(), filepath.Join(l.user, dir, "SKILL.md")+":")
		}
		if !found {
			t.Errorf("no warning names %s", dir)
		}
	}
}

func TestMissingDirectoriesAreFine(t *testing.T) {
	l := newLayout(t)
	for _, opts := range []Options{{}, {ProjectRoot: l.root, Home: l.home}, {ProjectRoot: "/nonexistent/x", Home: "/nonexistent/y"}} {
		skills, warnings := Discover(opts)
		if len(skills) != 0 || len(warnings) != 0 {
			t.Fatalf("Discover(%+v) = %v, %v", opts, skills, warnings)
		}
	}
}

func TestSymlinksAndLoopsDoNotHang(t *testing.T) {
	l := newLayout(t)
	elsewhere := filepath.Join(filepath.Dir(l.root), "shared-skills")
	writeSkill(t, elsewhere, "linked", skillFile("linked", "reached through a symlink", ""))
	writeSkill(t, l.agents, "good", skillFile("good", "g", ""))
	links := map[string]string{
		filepath.Join(l.agents, "linked"):         filepath.Join(elsewhere, "linked"),
		filepath.Join(l.agents, "self"):           "self",
		filepath.Join(l.agents, "ping"):           "pong",
		filepath.Join(l.agents, "pong"):           "ping",
		filepath.Join(l.agents, "parent"):         "..",
		filepath.Join(l.agents, "dangling"):       "nowhere",
		filepath.Join(l.agents, "good", "cycle"):  "..",
		l.project:                                 "skills", // .infer/skills -> itself
		filepath.Join(l.home, "plugins", "loopy"): ".",
		l.user: l.user,
	}
	for link, target := range links {
		os.MkdirAll(filepath.Dir(link), 0o755)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}

	type result struct {
		skills   []Skill
		warnings []error
	}
	done := make(chan result, 1)
	go func() {
		s, w := Discover(Options{ProjectRoot: l.root, Home: l.home})
		done <- result{s, w}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Discover hung on symlink loops")
	}
	if got, want := summary(r.skills), "good(agents) linked(agents)"; got != want {
		t.Fatalf("skills\n got %s\nwant %s", got, want)
	}
	text := fmt.Sprint(r.warnings)
	for _, name := range []string{"self", "ping", "pong", "dangling", "parent", l.project, l.user} {
		if !strings.Contains(text, name) {
			t.Errorf("no warning mentions %s: %v", name, r.warnings)
		}
	}
}

func TestBody(t *testing.T) {
	l := newLayout(t)
	writeSkill(t, l.project, "crlf", "---\r\nname: crlf\r\ndescription: d\r\n---\r\n\r\n# Steps\r\n1. one\r\n")
	skills, warnings := Discover(Options{ProjectRoot: l.root})
	noWarnings(t, warnings)
	body, err := skills[0].Body()
	if err != nil || body != "# Steps\r\n1. one\r\n" {
		t.Fatalf("Body = %q, %v", body, err)
	}
	// Body rereads the file, so edits show without rediscovery.
	writeSkill(t, l.project, "crlf", skillFile("crlf", "d", "edited"))
	if body, err := skills[0].Body(); err != nil || body != "edited" {
		t.Fatalf("Body after edit = %q, %v", body, err)
	}
	os.RemoveAll(filepath.Join(l.project, "crlf"))
	if _, err := skills[0].Body(); err == nil || !strings.Contains(err.Error(), "skill crlf") {
		t.Fatalf("Body of a removed skill: %v", err)
	}
	if _, err := (Skill{Name: "x"}).Body(); err == nil {
		t.Fatal("Body of a zero Skill succeeded")
	}
}

func TestBuiltInCatalogIsValid(t *testing.T) {
	skills, warnings := Discover(Options{Catalog: os.DirFS(filepath.Join("..", "..", "assets", "skills"))})
	noWarnings(t, warnings)
	if len(skills) < 3 {
		t.Fatalf("the built-in catalog has %d skills: %s", len(skills), summary(skills))
	}
	for _, s := range skills {
		if s.Scope != ScopeCatalog || s.Path != s.Name+"/SKILL.md" {
			t.Errorf("catalog skill %+v", s)
		}
		body, err := s.Body()
		if err != nil || len(body) < 200 {
			t.Errorf("%s: body of %d bytes, %v", s.Name, len(body), err)
		}
	}
}
