package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/tools/bashguard"
	"github.com/infer-workspace/infer/session/tools/grants"
)

type policyFixture struct {
	env     *Env
	store   *grants.Store
	p       *Pipeline
	outside string
	pageURL string
}

func newPolicyFixture(t *testing.T) *policyFixture {
	t.Helper()
	f := &policyFixture{env: newEnv(t)}
	f.env.CurrentURL = func() string { return f.pageURL }
	writeFiles(t, f.env.Root, map[string]string{"main.go": "package main\n"})
	f.outside = filepath.Join(filepath.Dir(f.env.Root), "elsewhere.txt")
	if err := os.WriteFile(f.outside, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(f.env.Root), filepath.Join(f.env.Root, "escape")); err != nil {
		t.Fatal(err)
	}
	guard, err := bashguard.New(bashguard.Config{Root: f.env.Root, Allow: []string{"gh api *"}, Deny: []string{"git reset --hard*"}})
	if err != nil {
		t.Fatal(err)
	}
	f.store, err = grants.Open(filepath.Join(t.TempDir(), "grants.json"))
	if err != nil {
		t.Fatal(err)
	}
	f.p = NewPipeline(PipelineConfig{Env: f.env, Guard: guard, Grants: f.store})
	return f
}

// perm is an expected permission: "allow", "ask", "ask+judge", "refuse".
func permString(p Permission) string {
	s := p.Kind.String()
	if p.Judge {
		s += "+judge"
	}
	return s
}

func TestPermissionTable(t *testing.T) {
	t.Parallel()
	f := newPolicyFixture(t)
	outsideArg := fmt.Sprintf("%q", f.outside)
	rows := []struct {
		name, tool, args             string
		standard, plan, auto, judged string
	}{
		{"read inside", "Read", `{"path": "main.go"}`, "allow", "allow", "allow", "allow"},
		{"read outside", "Read", `{"path": ` + outsideArg + `}`, "ask", "ask", "ask", "ask"},
		{"read through a symlink out", "Read", `{"path": "escape/elsewhere.txt"}`, "ask", "ask", "ask", "ask"},
		{"read parent", "Read", `{"path": "../elsewhere.txt"}`, "ask", "ask", "ask", "ask"},
		{"grep outside", "Grep", `{"pattern": "x", "path": "/"}`, "ask", "ask", "ask", "ask"},
		{"grep root", "Grep", `{"pattern": "x"}`, "allow", "allow", "allow", "allow"},
		{"tree", "Tree", `{}`, "allow", "allow", "allow", "allow"},
		{"write inside", "Write", `{"path": "new.go", "content": "x"}`, "ask", "refuse", "allow", "ask+judge"},
		{"write outside", "Write", `{"path": ` + outsideArg + `, "content": "x"}`, "ask", "refuse", "ask", "ask"},
		{"edit inside", "Edit", `{"path": "main.go", "old_string": "a", "new_string": "b"}`, "ask", "refuse", "allow", "ask+judge"},
		{"bash read-only", "Bash", `{"command": "git status"}`, "allow", "allow", "allow", "allow"},
		{"bash configured", "Bash", `{"command": "gh api user"}`, "allow", "refuse", "allow", "allow"},
		{"bash pipe", "Bash", `{"command": "ls | wc -l"}`, "ask", "refuse", "allow", "ask+judge"},
		{"bash build", "Bash", `{"command": "make build"}`, "ask", "refuse", "allow", "ask+judge"},
		{"bash builtin deny", "Bash", `{"command": "sudo ls"}`, "ask", "refuse", "ask", "ask"},
		{"bash configured deny", "Bash", `{"command": "git reset --hard HEAD~1"}`, "ask", "refuse", "ask", "ask"},
		{"bash hidden deny", "Bash", `{"command": "make && curl -s x | sh"}`, "ask", "refuse", "ask", "ask"},
		{"bash outside read", "Bash", `{"command": "cat /etc/hostname"}`, "ask", "refuse", "ask", "ask"},
		{"bash outside write", "Bash", `{"command": "make && cp bin/x /usr/local/bin/"}`, "ask", "refuse", "ask", "ask"},
		{"navigate", "BrowserNavigate", `{"url": "https://github.com/x"}`, "ask", "refuse", "allow", "ask+judge"},
		{"click", "BrowserClick", `{"selector": "a"}`, "ask", "refuse", "allow", "ask+judge"},
		{"browser read", "BrowserRead", `{}`, "allow", "allow", "allow", "allow"},
		{"screenshot", "BrowserScreenshot", `{}`, "allow", "allow", "allow", "allow"},
		{"tabs", "BrowserTabs", `{}`, "allow", "allow", "allow", "allow"},
		{"unknown tool", "Launch", `{}`, "refuse", "refuse", "refuse", "refuse"},
		{"invalid args", "Write", `{"path": "x"}`, "refuse", "refuse", "refuse", "refuse"},
	}
	for _, r := range rows {
		call := Call{Name: r.tool, Args: r.args, Origin: OriginAgent}
		for mode, want := range map[Mode]string{Standard: r.standard, Plan: r.plan, Auto: r.auto, AutoWithJudge: r.judged} {
			got := f.p.Check(call, mode)
			if permString(got) != want {
				t.Errorf("%s in %s: %s (%s), want %s", r.name, mode, permString(got), got.Why, want)
			}
			if got.Why == "" {
				t.Errorf("%s in %s: no reason", r.name, mode)
			}
		}
	}
}

func TestPermissionReasons(t *testing.T) {
	t.Parallel()
	f := newPolicyFixture(t)
	check := func(mode Mode, tool, args string) Permission {
		return f.p.Check(Call{Name: tool, Args: args, Origin: OriginAgent}, mode)
	}
	p := check(Plan, "Write", `{"path": "a.go", "content": "x"}`)
	if p.Why != "plan mode: Write is not allowed while planning; describe the change instead, or ask the person to switch mode" {
		t.Errorf("plan write: %q", p.Why)
	}
	p = check(Plan, "Bash", `{"command": "go test ./..."}`)
	if !strings.HasPrefix(p.Why, "plan mode: only read-only Bash commands run while planning") || !strings.Contains(p.Why, "`go test ./...` is not on the read-only allowlist") {
		t.Errorf("plan bash: %q", p.Why)
	}
	p = check(Standard, "Bash", `{"command": "ls | wc -l"}`)
	if p.Why != "Bash command is not allowlisted: it uses a pipe (|); pipes are never auto-approved" || len(p.Options) != 0 {
		t.Errorf("pipe: %q %v", p.Why, p.Options)
	}
	p = check(Auto, "Bash", `{"command": "sudo rm -rf build"}`)
	if !strings.Contains(p.Why, "deny list (sudo *)") || len(p.Options) != 0 {
		t.Errorf("deny: %q", p.Why)
	}
	p = check(Auto, "Read", fmt.Sprintf(`{"path": %q}`, f.outside))
	if !strings.Contains(p.Why, "outside the project") || !strings.Contains(p.Why, f.outside) || len(p.Options) != 0 {
		t.Errorf("outside: %q %v", p.Why, p.Options)
	}
	p = check(Standard, "Bash", `{"command": "git commit -m 'fix'"}`)
	if len(p.Options) != 1 || p.Options[0].Grant.Prefix != "git commit" || !strings.Contains(p.Options[0].Label, "`git commit`") {
		t.Errorf("bash options: %+v", p.Options)
	}
	f.pageURL = "https://github.com/infer/pulls"
	p = check(Standard, "BrowserClick", `{"selector": "a"}`)
	if len(p.Options) != 2 || p.Options[0].Grant.Site != "https://github.com" || p.Options[1].Grant.Kind != grants.KindTool {
		t.Errorf("click options: %+v", p.Options)
	}
	if !strings.Contains(p.Why, "acts on a web page (https://github.com)") {
		t.Errorf("click why: %q", p.Why)
	}
	f.pageURL = ""
	if p = check(Standard, "BrowserType", `{"selector": "a", "text": "b"}`); len(p.Options) != 1 || p.Options[0].Grant.Kind != grants.KindTool {
		t.Errorf("type with unknown page: %+v", p.Options)
	}
	p = check(Standard, "Write", `{"path": "a.go", "content": "x"}`)
	if len(p.Options) != 1 || p.Options[0].Grant != (grants.Grant{Kind: grants.KindTool, Tool: "Write"}) {
		t.Errorf("write options: %+v", p.Options)
	}
}

func TestOriginDoesNotBypassPolicy(t *testing.T) {
	t.Parallel()
	f := newPolicyFixture(t)
	for _, o := range []Origin{OriginAgent, OriginPanel, OriginTerminal, OriginShell, OriginHeadless} {
		if p := f.p.Check(Call{Name: "Bash", Args: `{"command": "make install"}`, Origin: o}, Standard); p.Kind != Ask {
			t.Errorf("%s bash in standard: %s", o, p.Kind)
		}
		if p := f.p.Check(Call{Name: "Write", Args: `{"path": "a", "content": ""}`, Origin: o}, Plan); p.Kind != Refuse {
			t.Errorf("%s write in plan: %s", o, p.Kind)
		}
	}
}

func TestGrantsApply(t *testing.T) {
	t.Parallel()
	f := newPolicyFixture(t)
	add := func(g grants.Grant) {
		if _, err := f.store.Add(g); err != nil {
			t.Fatal(err)
		}
	}
	add(grants.Grant{Kind: grants.KindTool, Tool: "Write"})
	add(grants.Grant{Kind: grants.KindTool, Tool: "Bash"}) // ignored: Bash grants are prefixes
	add(grants.Grant{Kind: grants.KindBash, Tool: "Bash", Prefix: "git commit"})
	add(grants.Grant{Kind: grants.KindBash, Tool: "Bash", Prefix: "cat"})
	add(grants.Grant{Kind: grants.KindSite, Tool: "BrowserClick", Site: "https://github.com"})
	add(grants.Grant{Kind: grants.KindSite, Tool: "BrowserNavigate", Site: "https://github.com"})
	f.pageURL = "https://github.com/x"
	cases := []struct {
		mode       Mode
		tool, args string
		want       PermissionKind
	}{
		{Standard, "Write", `{"path": "a.go", "content": "x"}`, Allow},
		{Standard, "Write", fmt.Sprintf(`{"path": %q, "content": "x"}`, f.outside), Ask},
		{Plan, "Write", `{"path": "a.go", "content": "x"}`, Refuse},
		{Standard, "Edit", `{"path": "main.go", "old_string": "a", "new_string": "b"}`, Ask},
		{Standard, "Bash", `{"command": "git commit -m 'x'"}`, Allow},
		{Standard, "Bash", `{"command": "git commit -m x && git push"}`, Ask},
		{Standard, "Bash", `{"command": "git commit -m \"$(cat msg)\""}`, Ask},
		{Standard, "Bash", `{"command": "make build"}`, Ask},
		// A Bash grant, like a file tool's, stops at the project's edge.
		{Standard, "Bash", `{"command": "cat notes.txt"}`, Allow},
		{Standard, "Bash", fmt.Sprintf(`{"command": "cat %s"}`, f.outside), Ask},
		{Standard, "Bash", `{"command": "git commit -F /tmp/msg"}`, Ask},
		{Standard, "BrowserClick", `{"selector": "a"}`, Allow},
		{Standard, "BrowserType", `{"selector": "a", "text": "b"}`, Ask},
		{Standard, "BrowserNavigate", `{"url": "https://github.com/other"}`, Allow},
		{Standard, "BrowserNavigate", `{"url": "https://gitlab.com/"}`, Ask},
		{AutoWithJudge, "Write", `{"path": "a.go", "content": "x"}`, Allow},
	}
	for _, c := range cases {
		p := f.p.Check(Call{Name: c.tool, Args: c.args}, c.mode)
		if p.Kind != c.want {
			t.Errorf("%s %s %s: %s (%s), want %s", c.mode, c.tool, c.args, p.Kind, p.Why, c.want)
		}
	}
	f.pageURL = "https://evil.example/"
	if p := f.p.Check(Call{Name: "BrowserClick", Args: `{"selector": "a"}`}, Standard); p.Kind != Ask {
		t.Errorf("click on another site: %s", p.Kind)
	}
	if p := f.p.Check(Call{Name: "Write", Args: `{"path": "a.go", "content": "x"}`}, Standard); !strings.Contains(p.Why, "saved permission: every Write call") {
		t.Errorf("grant reason: %q", p.Why)
	}
}

// TestOutsideBashOffersNoGrant: a Bash command that names a path outside
// the project asks without an "always" choice, as a file tool's does, and
// never goes to the judge.
func TestOutsideBashOffersNoGrant(t *testing.T) {
	t.Parallel()
	f := newPolicyFixture(t)
	for _, cmd := range []string{"ls -la /", "cat ../elsewhere.txt", "cp main.go /tmp/x.go"} {
		args := fmt.Sprintf(`{"command": %q}`, cmd)
		for _, mode := range []Mode{Standard, Auto, AutoWithJudge} {
			p := f.p.Check(Call{Name: "Bash", Args: args}, mode)
			if p.Kind != Ask || p.Judge || len(p.Options) != 0 || !strings.Contains(p.Why, "outside the project") {
				t.Errorf("%q in %s: %s judge=%v options=%v (%s)", cmd, mode, p.Kind, p.Judge, p.Options, p.Why)
			}
		}
		if p := f.p.Check(Call{Name: "Bash", Args: args}, Plan); p.Kind != Refuse {
			t.Errorf("%q in plan: %s (%s)", cmd, p.Kind, p.Why)
		}
	}
	// Inside the project the same kind of command still offers its grant.
	p := f.p.Check(Call{Name: "Bash", Args: `{"command": "cp main.go backup.go"}`}, Standard)
	if p.Kind != Ask || len(p.Options) != 1 || p.Options[0].Grant.Prefix != "cp" {
		t.Errorf("cp inside: %s %v (%s)", p.Kind, p.Options, p.Why)
	}
}

func TestCorruptGrantsAsk(t *testing.T) {
	t.Parallel()
	f := newPolicyFixture(t)
	if _, err := f.store.Add(grants.Grant{Kind: grants.KindTool, Tool: "Write"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.store.Path(), []byte("{oops"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := f.p.Check(Call{Name: "Write", Args: `{"path": "a.go", "content": "x"}`}, Standard)
	if p.Kind != Ask || !strings.Contains(p.Why, "saved permissions could not be read") {
		t.Errorf("corrupt grants: %s %q", p.Kind, p.Why)
	}
}
