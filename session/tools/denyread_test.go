package tools

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// infer started in the home folder (no repository above it) makes the
// home the project, and with it ~/.ssh and infer's own home, whose
// browser_use.yaml holds the bridge token. The sandbox hides those from
// commands; Read, Grep and Tree run in infer's own process and must not
// read them unasked either, in any mode, nor for the browser panel (a web
// page can drive it), which only a person at infer may let through.
func TestFileToolsAskForWhatTheSandboxHides(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	writeFiles(t, env.Root, map[string]string{
		".ssh/id_ed25519":         "PRIVATE KEY",
		".infer/browser_use.yaml": "extension:\n  token: SECRET\n",
		"notes.txt":               "hello",
	})
	env.Confine.DenyRead = []string{filepath.Join(env.Root, ".infer"), filepath.Join(env.Root, ".ssh")}
	p := NewPipeline(PipelineConfig{Env: env})
	for _, c := range []struct{ tool, args string }{
		{"Read", `{"path": ".ssh/id_ed25519"}`},
		{"Read", `{"path": ".infer/browser_use.yaml"}`},
		{"Grep", `{"pattern": "KEY", "path": ".ssh"}`},
		{"Tree", `{"path": ".ssh"}`},
		{"Write", `{"path": ".ssh/authorized_keys", "content": "ssh-ed25519 AAAA attacker"}`},
	} {
		for _, origin := range []Origin{OriginAgent, OriginPanel} {
			for _, mode := range []Mode{Standard, Auto, Plan} {
				perm := p.Check(Call{Name: c.tool, Args: c.args, Origin: origin}, mode)
				if mode == Plan && c.tool == "Write" {
					if perm.Kind != Refuse {
						t.Errorf("Write in plan mode: %v", perm.Kind)
					}
					continue
				}
				if perm.Kind != Ask || !perm.LocalOnly || len(perm.Options) != 0 {
					t.Errorf("%s %s from %s in %s: %v (local only %t), want a question at infer only: %s", c.tool, c.args, origin, mode, perm.Kind, perm.LocalOnly, perm.Why)
				}
			}
		}
		o := p.Run(context.Background(), Call{ID: "c", Name: c.tool, Args: c.args, Origin: OriginPanel}, Auto)
		if strings.Contains(o.Output, "SECRET") || strings.Contains(o.Output, "PRIVATE") {
			t.Errorf("%s %s: the panel read it: %s", c.tool, c.args, o.Output)
		}
	}
	// Searching and listing the project skip what is hidden, unasked.
	for _, c := range []struct{ tool, args string }{
		{"Grep", `{"pattern": "SECRET|KEY|hello"}`},
		{"Tree", `{"path": "."}`},
	} {
		o := p.Run(context.Background(), Call{ID: "c", Name: c.tool, Args: c.args, Origin: OriginPanel}, Standard)
		if !o.Success || strings.Contains(o.Output, "SECRET") || strings.Contains(o.Output, "KEY") || strings.Contains(o.Output, "id_ed25519") || strings.Contains(o.Output, "browser_use") {
			t.Errorf("%s %s: %+v", c.tool, c.args, o)
		}
		if !strings.Contains(o.Output, "notes.txt") {
			t.Errorf("%s %s lost the project's own files: %s", c.tool, c.args, o.Output)
		}
	}
	if perm := p.Check(Call{Name: "Read", Args: `{"path": "notes.txt"}`, Origin: OriginAgent}, Standard); perm.Kind != Allow {
		t.Errorf("a project file: %v %s", perm.Kind, perm.Why)
	}
}
