package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/internal/testreq"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/sandbox"
)

// needSandbox skips where the machine has no sandbox, except under CI,
// whose .ci/run installs bubblewrap. Besides the sandbox's own tests, every
// test whose commands must run without a question needs it: without a
// sandbox every Bash call asks first, so such a test would wait for an
// answer nobody gives and fail with a symptom instead of the reason.
func needSandbox(t *testing.T) {
	t.Helper()
	sb := sandbox.Detect()
	testreq.Check(t, testreq.Bubblewrap, sb.Confines(), sb.Problem())
}

func TestDoctorPassesOnAHealthySetup(t *testing.T) {
	needSandbox(t)
	pairHome(t, freePort(t))
	newTrustProject(t, "")
	t.Setenv("OPENAI_API_KEY", "sk-doctor-must-never-print-this")
	out, errOut, code := infer(t, "doctor")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"sandbox", "bubblewrap", "bwrap (sandbox.mode", "shell", "bash runs every command", "network only through infer's proxy, 0 in network.allow", "no .infer/config.yaml", "mode 0600", "is free", "OPENAI_API_KEY", "All checks passed"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "sk-doctor") {
		t.Errorf("a key's value was printed:\n%s", out)
	}
}

func TestDoctorFailsOnWhatIsWrong(t *testing.T) {
	needSandbox(t)
	token := pairHome(t, 0)
	home := os.Getenv(config.HomeEnv)
	// An infer that runs, with no extension connected.
	port := statusServer(t, &token, serverStatus{Connected: false})
	b := config.NewBrowserUse(port)
	b.Extension.Token = token
	if err := config.WriteBrowserUse(config.BrowserUsePath(home), b); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(config.BrowserUsePath(home), 0o644); err != nil {
		t.Fatal(err)
	}
	// A cloned project whose config was never trusted, and the sandbox
	// turned off.
	newTrustProject(t, "providers:\n  openai:\n    base_url: http://127.0.0.1:9/v1\n")
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("sandbox:\n  mode: off\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := infer(t, "doctor")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"FAIL  sandbox   off",
		"FAIL  trust",
		"infer trust",
		"FAIL  token",
		"mode 0644",
		"chmod 600",
		"FAIL  bridge",
		"no extension is connected",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "some checks failed") {
		t.Errorf("stderr: %q", errOut)
	}
}

func TestDoctorWithoutInitSaysToRunIt(t *testing.T) {
	newHome(t)
	newTrustProject(t, "")
	out, _, code := infer(t, "doctor")
	if code != 1 || !strings.Contains(out, "infer init") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}
