package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadmeCaptureIsMakeDemo runs scripts/readme-capture.sh, which makes
// the README's 120×40 picture from `make demo` (scripts/demo.sh in tmux,
// with infer-sim's default fake browser), and checks that the picture shows
// what the demo's hints lead to: the demo site read, a screenshot of it,
// and a command waiting for approval, with no browser error in it.
func TestReadmeCaptureIsMakeDemo(t *testing.T) {
	t.Parallel()
	needTmux(t)
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("the capture script needs bash")
	}
	bin := t.TempDir()
	for name, path := range map[string]string{"infer": inferBinary(t), "infer-sim": simBinary(t)} {
		if err := os.Symlink(path, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "capture.txt")
	// The script bounds each of its waits; this only stops a hung one.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "../../scripts/readme-capture.sh", out)
	cmd.Env = append(os.Environ(), "INFER_BIN="+bin)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("readme-capture.sh: %v\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	screen := string(data)
	if lines := strings.Split(strings.TrimRight(screen, "\n"), "\n"); len(lines) != tmuxRows {
		t.Errorf("the capture has %d lines, want %d", len(lines), tmuxRows)
	}
	for _, want := range []string{
		"● connected · extension infer-sim", "✓ BrowserNavigate http://demo.infer.localhost", "Welcome to Tidewater Library",
		"✓ BrowserScreenshot", "Screenshot of Tidewater Library", "$ touch notes.md", "waiting for your approval",
		"model: offline/demo",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("the capture lacks %q", want)
		}
	}
	for _, bad := range []string{"no page is open", "level=", "✗"} {
		if strings.Contains(screen, bad) {
			t.Errorf("the capture shows %q", bad)
		}
	}
	if t.Failed() {
		t.Logf("capture:\n%s\nscript:\n%s", screen, stderr.String())
	}
}
