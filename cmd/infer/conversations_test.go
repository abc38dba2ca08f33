package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools/grants"
)

// seedConversations stores two conversations in a fresh project and returns
// their ids, older first.
func seedConversations(t *testing.T) (p project, older, newer string) {
	t.Helper()
	home := freshHome(t)
	root := t.TempDir()
	useDirs(t, home, root)
	p = project{home: home, root: root}
	st, err := p.store()
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{"first chat about tabs", "second chat about forms"} {
		m, err := st.Create()
		if err != nil {
			t.Fatal(err)
		}
		st.Append(m.ID, store.Message{Role: "user", Content: text}, store.Message{Role: "assistant", Content: "answer " + text})
		if i == 0 {
			older = m.ID
		} else {
			newer = m.ID
		}
	}
	return p, older, newer
}

func TestConversationsCommands(t *testing.T) {
	t.Parallel()
	p, older, newer := seedConversations(t)

	out, _, code := infer(t, "conversations", "list")
	if code != 0 || strings.Index(out, "second chat") > strings.Index(out, "first chat") || !strings.Contains(out, older[:8]) {
		t.Fatalf("list (%d):\n%s", code, out)
	}
	if _, _, code := infer(t, "conversations", "pin", older[:6]); code != 0 {
		t.Fatal("pin by prefix failed")
	}
	out, _, _ = infer(t, "conversations", "list")
	if strings.Index(out, "first chat") > strings.Index(out, "second chat") {
		t.Fatalf("pinned conversation not first:\n%s", out)
	}
	out, _, code = infer(t, "conversations", "show", newer)
	if code != 0 || !strings.Contains(out, "## User") || !strings.Contains(out, "second chat about forms") {
		t.Fatalf("show:\n%s", out)
	}
	out, _, code = infer(t, "conversations", "export", newer, "--format", "json")
	var exported map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &exported) != nil {
		t.Fatalf("export json (%d): %s", code, out)
	}
	file := t.TempDir() + "/c.md"
	if _, _, code := infer(t, "conversations", "export", newer, "-o", file); code != 0 {
		t.Fatal("export to file failed")
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), "# ") {
		t.Fatalf("exported markdown %q", b)
	}
	if _, _, code := infer(t, "conversations", "rename", newer, "Forms", "deep", "dive"); code != 0 {
		t.Fatal("rename failed")
	}
	out, _, _ = infer(t, "conversations", "list", "--json")
	if !strings.Contains(out, `"Forms deep dive"`) {
		t.Fatalf("renamed title missing: %s", out)
	}
	if _, errOut, code := infer(t, "conversations", "delete", newer); code == 0 || !strings.Contains(errOut, "not deleted") {
		t.Fatalf("delete without confirmation: %d %s", code, errOut)
	}
	if _, _, code := infer(t, "conversations", "delete", "--yes", newer); code != 0 {
		t.Fatal("delete --yes failed")
	}
	st, _ := p.store()
	if list, _ := st.List(); len(list) != 1 || list[0].ID != older {
		t.Fatalf("after delete: %+v", list)
	}
	if _, errOut, code := infer(t, "conversations", "show", "zzzzzzzz"); code != 1 || !strings.Contains(errOut, "no conversation") {
		t.Fatalf("unknown id: %d %s", code, errOut)
	}
	if _, _, code := infer(t, "conversations", "show", "ab"); code != 2 {
		t.Fatal("a too-short id is a usage error")
	}
}

func TestPermissionsCommands(t *testing.T) {
	t.Parallel()
	home := freshHome(t)
	root := t.TempDir()
	useDirs(t, home, root)
	out, _, code := infer(t, "permissions", "list")
	if code != 0 || !strings.Contains(out, "No saved grants") {
		t.Fatalf("empty list: %d %s", code, out)
	}
	config.EnsureDir(config.ProjectDir(home, root))
	gs, err := project{home: home, root: root}.grants()
	if err != nil {
		t.Fatal(err)
	}
	g1, _ := gs.Add(grants.Grant{Kind: grants.KindBash, Tool: "Bash", Prefix: "git commit"})
	gs.Add(grants.Grant{Kind: grants.KindSite, Tool: "BrowserClick", Site: "https://github.com"})
	out, _, _ = infer(t, "permissions", "list")
	if !strings.Contains(out, "git commit") || !strings.Contains(out, "BrowserClick on https://github.com") {
		t.Fatalf("list:\n%s", out)
	}
	if _, _, code := infer(t, "permissions", "revoke"); code != 2 {
		t.Fatal("revoke with nothing is a usage error")
	}
	if _, _, code := infer(t, "permissions", "revoke", g1.ID); code != 0 {
		t.Fatal("revoke failed")
	}
	if list, _ := gs.List(); len(list) != 1 {
		t.Fatalf("after revoke: %+v", list)
	}
	if _, errOut, code := infer(t, "permissions", "revoke", "nope"); code != 1 || !strings.Contains(errOut, "nope") {
		t.Fatalf("unknown grant: %d %s", code, errOut)
	}
	if _, _, code := infer(t, "permissions", "revoke", "--all"); code != 0 {
		t.Fatal("revoke --all failed")
	}
	if list, _ := gs.List(); len(list) != 0 {
		t.Fatalf("after revoke --all: %+v", list)
	}
}

// TestConversationsEscapeControlCharacters stores a conversation whose title
// and tool output hold terminal escapes, BEL, a newline, C1 controls and
// bytes that are not UTF-8, and checks `list` and `show` print them escaped
// while ordinary Unicode and the machine-readable export stay as they were.
func TestConversationsEscapeControlCharacters(t *testing.T) {
	t.Parallel()
	p, older, newer := seedConversations(t)
	st, err := p.store()
	if err != nil {
		t.Fatal(err)
	}
	toolOutput := "A\x1b[2JB\x1b[31mRED\x07\u009b\u0085\rZ\xff!"
	if err := st.AppendToolResult(newer, store.Message{Role: "tool", ToolCallID: "call_1", Content: toolOutput + "\n" + ordinaryText}, true); err != nil {
		t.Fatal(err)
	}
	hostile := "T\x1b]0;pwned\x07\x1b[2J\nsecond\tline\u009b\xff"
	if out, _, code := infer(t, "conversations", "rename", newer, hostile); code != 0 || !strings.Contains(out, `T\x1b]0;pwned\a\x1b[2J\nsecond\tline\u009b`) {
		t.Fatalf("rename (%d): %q", code, out)
	}
	if _, _, code := infer(t, "conversations", "rename", older, ordinaryText); code != 0 {
		t.Fatal("rename to ordinary text failed")
	}

	out, _, code := infer(t, "conversations", "list")
	assertTerminalSafe(t, "list", out)
	rows := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(rows) != 3 {
		t.Fatalf("list (%d): want a header and two rows:\n%s", code, out)
	}
	// The same escapes as the rename confirmation, on the title's one row;
	// the invalid byte is escaped, or was already replaced when stored.
	if !strings.Contains(rows[1], `T\x1b]0;pwned\a\x1b[2J\nsecond\tline\u009b`) || !strings.HasPrefix(rows[1], newer[:8]) {
		t.Errorf("hostile title row: %q", rows[1])
	}
	if !strings.HasSuffix(rows[2], ordinaryText) {
		t.Errorf("ordinary title changed: %q", rows[2])
	}

	out, _, code = infer(t, "conversations", "show", newer[:8])
	assertTerminalSafe(t, "show", out)
	for _, want := range []string{`A\x1b[2JB\x1b[31mRED\a\u009b\u0085\rZ`, ordinaryText, "# T\\x1b]0;pwned\\a\\x1b[2J second line\\u009b"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("show (%d) lacks %q:\n%s", code, want, out)
		}
	}
	out, _, _ = infer(t, "conversations", "show", older[:8])
	if !strings.Contains(out, "# "+ordinaryText+"\n") {
		t.Errorf("show changed an ordinary title:\n%s", out)
	}

	// Exports are files for programs: byte for byte what the store
	// writes, JSON with its own escapes and Markdown with the stored text.
	c, err := st.Load(newer)
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, err := store.ExportJSON(c)
	if err != nil {
		t.Fatal(err)
	}
	if out, _, code := infer(t, "conversations", "export", newer, "--format", "json"); code != 0 || out != string(wantJSON) || !strings.Contains(out, `\u001b[2J`) {
		t.Errorf("export json (%d) differs from the store's:\n%s", code, out)
	}
	if out, _, code := infer(t, "conversations", "export", newer, "--format", "markdown"); code != 0 || out != string(store.ExportMarkdown(c)) {
		t.Errorf("export markdown (%d) differs from the store's:\n%q", code, out)
	}
}
