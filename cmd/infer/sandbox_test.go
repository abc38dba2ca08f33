package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/session/config"
)

// TestHostilePanelCommandsRunInTheSandbox is the review's attack on a
// whole infer: the panel raises the mode to auto and asks for a script
// the project carries, which tries to read the bridge token, infer's own
// environment (its provider key) and to write outside the project. The
// guard lets a project script run in auto mode; the sandbox stops each
// attempt, and the command still runs.
func TestHostilePanelCommandsRunInTheSandbox(t *testing.T) {
	needSandbox(t)
	const key = "sk-infer-process-secret-0123456789"
	t.Setenv("OPENAI_API_KEY", key)
	s := serveInProcess(t, "", "")
	outside := filepath.Join(s.home, "planted.txt")
	script := fmt.Sprintf(`echo ran-the-script
cat %s
cat /proc/%d/environ
for p in /proc/[0-9]*; do cat $p/environ; done
echo planted > %s
echo "[$OPENAI_API_KEY]"
`, config.BrowserUsePath(s.home), os.Getpid(), outside)
	if err := os.WriteFile(filepath.Join(s.project, "leak.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	s.setMode("auto")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.client.ToolRequest(ctx, "Bash", `{"command": "bash leak.sh"}`)
	if err != nil {
		t.Fatalf("the request did not run unasked in auto mode: %v", err)
	}
	if !strings.Contains(res.Output, "ran-the-script") {
		t.Fatalf("the script did not run: %+v", res)
	}
	token := s.app.BrowserUse.Extension.Token
	for _, secret := range []string{token, key} {
		if strings.Contains(res.Output, secret) {
			t.Errorf("a secret reached the output:\n%s", res.Output)
		}
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("the script wrote outside the project")
	}
}

// TestAPanelApprovalDoesNotLiftTheSandbox is the review's escape: the
// panel asks for a command and approves it itself. Allowed from the
// panel, a web page, it runs, but confined; only an answer at infer's own
// terminal would run it outside.
func TestAPanelApprovalDoesNotLiftTheSandbox(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	s := serveInProcess(t, "", "")
	outside := filepath.Join(s.home, "escaped.txt")
	done := make(chan string, 1)
	go func() {
		res, err := s.client.ToolRequest(context.Background(), "Bash", fmt.Sprintf(`{"command": "echo ran; echo x > %s"}`, outside))
		if err != nil {
			done <- err.Error()
			return
		}
		done <- res.Output
	}()
	a := s.nextApproval()
	if err := s.client.Approve(s.ctx(), a.RequestID); err != nil {
		t.Fatal(err)
	}
	var out string
	select {
	case out = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the approved request never finished")
	}
	if !strings.Contains(out, "ran") {
		t.Fatalf("the approved command did not run: %q", out)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("a command approved from the panel wrote outside the project")
	}
}
