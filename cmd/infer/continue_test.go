package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHeadlessContinueResumesTheLatest: `infer headless -c` continues the
// project's most recently updated conversation, as `claude -c` does,
// rather than a new one; with nothing stored, or with --session-id too,
// it is a usage error that says why.
func TestHeadlessContinueResumesTheLatest(t *testing.T) {
	t.Parallel()
	hlProject(t)
	if _, errOut, code := runHL(t, "", "-c", "hello"); code != 2 || !strings.Contains(errOut, "no stored conversation in this project to continue") {
		t.Fatalf("-c with nothing stored: exit %d\n%s", code, errOut)
	}
	var ids []string
	for _, prompt := range []string{"stream 2", "stream 3"} {
		out, errOut, code := runHL(t, "", "-o", "json", prompt)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		ids = append(ids, jsonLines(t, out)[0]["conversation_id"].(string))
	}
	out, errOut, code := runHL(t, "", "-o", "json", "-c", "stream 4")
	if code != 0 {
		t.Fatalf("-c: exit %d\n%s", code, errOut)
	}
	if first := jsonLines(t, out)[0]; first["resumed"] != true || first["conversation_id"] != ids[1] {
		t.Errorf("-c resumed %v, want the latest, %s", first, ids[1])
	}
	if _, errOut, code := runHL(t, "", "-c", "--session-id", ids[0], "hello"); code != 2 || !strings.Contains(errOut, "give one") {
		t.Errorf("-c with --session-id: exit %d\n%s", code, errOut)
	}
}

// TestTUIContinueOpensTheLatest: `infer -c` opens the workspace on the
// project's most recent conversation, what was said in it on screen; plain
// `infer` still starts a new one.
func TestTUIContinueOpensTheLatest(t *testing.T) {
	t.Parallel()
	needTmux(t)
	bin := inferBinary(t)
	d := newTmuxDirs(t)
	// The first conversation, stored by infer headless run as the TUI is
	// below: in the project, with the test's own home and state.
	first := exec.Command(bin, "headless", "stream 2")
	first.Dir, first.Env = d.project, d.env
	if out, err := first.CombinedOutput(); err != nil {
		t.Fatalf("the first conversation: %v\n%s", err, out)
	}
	exit := filepath.Join(d.base, "exit")
	s := startTmux(t, d.project, d.env, exit, bin, "-c", "--port", "0")
	s.waitFor("Message the agent", "stream 2")
	s.press("C-c")
	s.press("C-c")
	if code := s.exitCode(exit); code != "0" {
		t.Fatalf("infer -c exited %s:\n%s", code, s.screen())
	}
	// Without -c the workspace opens on a new conversation.
	if err := os.Remove(exit); err != nil {
		t.Fatal(err)
	}
	s = startTmux(t, d.project, d.env, exit, bin, "--port", "0")
	sc := s.waitFor("Message the agent")
	if strings.Contains(sc, "stream 2") {
		t.Errorf("plain infer opened the old conversation:\n%s", sc)
	}
}
