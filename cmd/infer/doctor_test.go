package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/bridge"
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
	t.Parallel()
	needSandbox(t)
	token := pairHome(t, 0)
	home := testWhere(t).home
	// An infer that runs, with no extension connected.
	port := statusServer(t, &token, serverStatus{Connected: false})
	b := config.NewBrowserUse(port)
	b.Extension.Token = token
	if err := writeBrowserUse(config.BrowserUsePath(home), b); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(config.BrowserUsePath(home), 0o644); err != nil {
		t.Fatal(err)
	}
	// A cloned project whose config was never trusted, and the sandbox
	// turned off.
	useDirs(t, home, newTrustFolder(t, "providers:\n  openai:\n    base_url: http://127.0.0.1:9/v1\n"))
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

// TestDoctorSaysWhoseInferHoldsThePort: run in one project while the
// infer on the bridge port was started in another, doctor names that other
// project instead of reporting its infer as this folder's; in the
// holder's own project it says it is this one's. The bridge is the real
// one, so its /status is what doctor reads.
func TestDoctorSaysWhoseInferHoldsThePort(t *testing.T) {
	t.Parallel()
	token := pairHome(t, 0)
	home := testWhere(t).home
	other := newTrustFolder(t, "")
	here := newTrustFolder(t, "")
	useDirs(t, home, here) // doctor runs here
	for _, tc := range []struct {
		holder      string
		want, avoid string
	}{
		{holder: other, want: "for another project, " + config.DisplayPath(other) + ", not this folder's", avoid: "for this project"},
		{holder: here, want: "for this project", avoid: "another project"},
	} {
		srv, err := bridge.Listen(bridge.Options{Token: token, Project: tc.holder})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ctx) }()
		b := config.NewBrowserUse(srv.Port())
		b.Extension.Token = token
		if err := writeBrowserUse(config.BrowserUsePath(home), b); err != nil {
			t.Fatal(err)
		}
		out, errOut, _ := infer(t, "doctor")
		cancel()
		<-served
		srv.Close()
		line := ""
		for l := range strings.Lines(out) {
			if strings.Contains(l, "bridge") && strings.Contains(l, "infer is running") {
				line = l
			}
		}
		if !strings.Contains(line, tc.want) || strings.Contains(line, tc.avoid) {
			t.Errorf("holder %s: the bridge line is %q, want %q in it\n%s%s", tc.holder, line, tc.want, out, errOut)
		}
	}
}
