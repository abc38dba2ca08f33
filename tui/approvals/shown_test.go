package approvals

import (
	"testing"

	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/tui/toolfmt"
)

// TestEveryToolShowsAsBefore: each tool's one-line summary and approval
// box, now drawn from its own description (tools.Show), read as they did
// when the pane and toolfmt switched on tool names. A Write's current
// file holds "# Notes\nOld.\n".
func TestEveryToolShowsAsBefore(t *testing.T) {
	for _, tc := range []struct{ name, args, short, box string }{
		{"Bash", "{\"command\":\"go test ./...\\n  -run X\",\"description\":\"Run the tests\"}", "go test ./... -run X",
			"┏━ ▸ Approvals · 1 waiting ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓ ⚠ Bash · from the agent $ go test ./... -run X about: Run the tests y allow once · n reject ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛"},
		{"Read", "{\"path\":\"README.md\",\"offset\":3}", "README.md",
			"┏━ ▸ Approvals · 1 waiting ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓ ⚠ Read · from the agent { \"offset\": 3, \"path\": \"README.md\" } y allow once · n reject ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛"},
		{"Write", "{\"path\":\"docs/notes.md\",\"content\":\"# Notes\\nFirst.\\n\"}", "docs/notes.md",
			"┏━ ▸ Approvals · 1 waiting ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓ ⚠ Write · from the agent file: docs/notes.md @@ -1,2 +1,2 @@ # Notes -Old. +First. y allow once · n reject ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛"},
		{"Edit", "{\"path\":\"main.go\",\"old_string\":\"a\\nb\",\"new_string\":\"a\\nc\",\"replace_all\":true}", "main.go",
			"┏━ ▸ Approvals · 1 waiting ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓ ⚠ Edit · from the agent file: main.go every occurrence @@ -1,2 +1,2 @@ a -b +c y allow once · n reject ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛"},
		{"Grep", "{\"pattern\":\"TODO|FIXME\",\"path\":\"internal\",\"glob\":\"*.go\"}", "TODO|FIXME in internal",
			"┏━ ▸ Approvals · 1 waiting ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓ ⚠ Grep · from the agent { \"glob\": \"*.go\", \"path\": \"internal\", \"pattern\": \"TODO|FIXME\" } y allow once · n reject ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛"},
		{"Tree", "{\"path\":\"internal\",\"depth\":2}", "internal",
			"┏━ ▸ Approvals · 1 waiting ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓ ⚠ Tree · from the agent { \"depth\": 2, \"path\": \"internal\" } y allow once · n reject ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛"},
		{"BrowserNavigate", "{\"url\":\"https://example.com/\"}", "https://example.com/",
			"┏━ ▸ Approvals · 1 waiting ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓ ⚠ BrowserNavigate · from the agent url: https://example.com/ y allow once · n reject ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛"},
		{"BrowserClick", "{\"selector\":\"button[type=submit]\"}", "button[type=submit]",
			"┏━ ▸ Approvals · 1 waiting ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓ ⚠ BrowserClick · from the agent click: button[type=submit] y allow once · n reject ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛"},
		{"BrowserType", "{\"selector\":\"#q\",\"text\":\"hello world\",\"press_enter\":true}", "\"hello world\" into #q ⏎",
			"┏━ ▸ Approvals · 1 waiting ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓ ⚠ BrowserType · from the agent type: hello world into: #q then press enter y allow once · n reject ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛"},
		{"BrowserRead", "{}", "whole page",
			"┏━ ▸ Approvals · 1 waiting ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓ ⚠ BrowserRead · from the agent read: (whole page) y allow once · n reject ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛"},
		{"BrowserRead", "{\"selector\":\"main\"}", "main",
			"┏━ ▸ Approvals · 1 waiting ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓ ⚠ BrowserRead · from the agent read: main y allow once · n reject ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛"},
		{"BrowserScreenshot", "{}", "",
			"┏━ ▸ Approvals · 1 waiting ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓ ⚠ BrowserScreenshot · from the agent {} y allow once · n reject ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛"},
		{"BrowserTabs", "{}", "",
			"┏━ ▸ Approvals · 1 waiting ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓ ⚠ BrowserTabs · from the agent {} y allow once · n reject ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛"},
		{"WebSearch", "{\"query\":\"go 1.26 release\"}", "query=go 1.26 release",
			"┏━ ▸ Approvals · 1 waiting ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓ ⚠ WebSearch · from the agent { \"query\": \"go 1.26 release\" } y allow once · n reject ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛"},
		{"Network", "{\"host\":\"example.com:443\",\"command\":\"The command `curl x`\",\"loopback\":true}", "example.com:443 for The command `curl x`",
			"┏━ ▸ Approvals · 1 waiting ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓ ⚠ Network · from the agent host: example.com:443 for: The command `curl x` a service on your own machine y allow once · n reject ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛"},
		{"mcp__fs__read", "{\"path\":\"/etc/x\",\"n\":3}", "path=/etc/x",
			"┏━ ▸ Approvals · 1 waiting ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓ ⚠ mcp__fs__read · from the agent { \"n\": 3, \"path\": \"/etc/x\" } y allow once · n reject ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛"},
		{"Bash", "not json", "not json",
			"┏━ ▸ Approvals · 1 waiting ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓ ⚠ Bash · from the agent args: not json y allow once · n reject ┗━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┛"},
	} {
		if got := toolfmt.Short(tc.name, tc.args); got != tc.short {
			t.Errorf("Short(%s, %s) = %q, want %q", tc.name, tc.args, got, tc.short)
		}
		m := pane(t, session.Approval{ID: "a1", Call: tools.Call{ID: "c", Name: tc.name, Args: tc.args, Origin: tools.OriginAgent}})
		m.SetFile("a1", true, "# Notes\nOld.\n", nil)
		if got := screen(m); got != tc.box {
			t.Errorf("%s %s: the box shows\n%s\nwant\n%s", tc.name, tc.args, got, tc.box)
		}
	}
}

// TestWriteAsksForItsFile: the pane asks for the file a call would
// replace whole, wherever the tool says it is.
func TestWriteAsksForItsFile(t *testing.T) {
	m := pane(t, session.Approval{ID: "x", Call: tools.Call{ID: "c0", Name: tools.NameBash, Args: `{"command":"ls"}`}})
	if req := m.Add(session.Approval{ID: "a1", Call: tools.Call{ID: "c1", Name: tools.NameWrite, Args: `{"path":"a.md","content":"x"}`}}); req == nil || *req != (FileRequest{ID: "a1", Path: "a.md"}) {
		t.Errorf("Add(Write) = %+v", req)
	}
	if req := m.Add(session.Approval{ID: "a2", Call: tools.Call{ID: "c2", Name: tools.NameEdit, Args: `{"path":"a.md","old_string":"x","new_string":"y"}`}}); req != nil {
		t.Errorf("Add(Edit) asked for %+v", req)
	}
	reqs := m.Replace([]session.Approval{
		{ID: "a1", Call: tools.Call{ID: "c1", Name: tools.NameWrite, Args: `{"path":"a.md","content":"x"}`}},
		{ID: "a3", Call: tools.Call{ID: "c3", Name: tools.NameWrite, Args: `{"path":"b.md","content":"y"}`}},
	})
	if len(reqs) != 1 || reqs[0] != (FileRequest{ID: "a3", Path: "b.md"}) {
		t.Errorf("Replace asked for %+v, want only b.md", reqs)
	}
}
