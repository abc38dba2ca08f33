package assemble

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/infer-workspace/infer/session/config"
)

// TestConfinePolicyHidesInfersOwnFiles: the issue found infer's own log
// (tool arguments, URLs, approvals) readable by confined commands. The
// policy hides it with infer's home, its cache and the person's stores,
// and carries sandbox.env through.
func TestConfinePolicyHidesInfersOwnFiles(t *testing.T) {
	home := filepath.Join(t.TempDir(), ".infer")
	cfg := config.Config{Sandbox: config.SandboxConfig{Env: []string{"DATABASE_URL"}}}
	p := ConfinePolicy(cfg, home)
	userHome, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home here:", err)
	}
	// infer.log lives in the first of OwnDirs (cmd/infer's openTUILog).
	log := filepath.Join(config.OwnDirs()[0], "infer.log")
	if filepath.Base(filepath.Dir(filepath.Dir(log))) != "state" && os.Getenv("XDG_STATE_HOME") == "" {
		t.Errorf("infer's own folders do not hold its log: %q", config.OwnDirs())
	}
	for _, want := range append([]string{home, filepath.Join(userHome, ".config", "gh")}, config.OwnDirs()...) {
		if !slices.Contains(p.DenyRead, want) {
			t.Errorf("%s is readable by confined commands", want)
		}
	}
	if !slices.Equal(p.Env, []string{"DATABASE_URL"}) {
		t.Errorf("sandbox.env did not reach the policy: %q", p.Env)
	}
}
