package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/session/tools"
)

func isOutsideDone(e Event) bool { c, ok := e.(OutsideCall); return ok && c.Done }

// An MCP client's call is shown as it runs (an OutsideCall when it starts
// and one when it ends, with its outcome), not as a notice that it asked;
// one line saying who called what and how it ended is recorded beside the
// messages, and no message is added for the model.
func TestMCPClientCallsAreShownAsTheyRunAndRecordedAsALine(t *testing.T) {
	f := newFixture(t, "")
	if err := os.WriteFile(filepath.Join(f.dir, "X"), []byte("hello from the file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := f.w.Subscribe()
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	o := f.w.RunTool(ctx, "mcp_1", "Read", `{"path":"X"}`, tools.OriginMCP)
	if !o.Success {
		t.Fatalf("outcome %+v", o)
	}
	evs := collect(t, sub, isOutsideDone)
	var started *OutsideCall
	for _, e := range evs {
		if n, ok := asNotice(e); ok {
			t.Errorf("a notice was shown besides the call: %q", n.Text)
		}
		switch e := e.(type) {
		case OutsideCall:
			if !e.Done {
				started = &e
			}
		}
	}
	if started == nil || started.ID != "mcp_1" || started.Name != "Read" || started.Origin != tools.OriginMCP {
		t.Fatalf("no start event before the end: %+v", evs)
	}
	done := evs[len(evs)-1].(OutsideCall)
	if !done.OK || done.ID != "mcp_1" || !strings.Contains(done.Result, "hello from the file") {
		t.Fatalf("end %+v", done)
	}
	line := done.Line()
	if !strings.HasPrefix(line, `MCP client · Read {"path":"X"} — ✓`) || !strings.Contains(line, "hello from the file") {
		t.Fatalf("line %q", line)
	}
	c, err := f.st.Load(f.w.ActiveConversation())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 0 || len(c.Notices) != 1 || c.Notices[0].Text != line {
		t.Fatalf("stored %+v", c)
	}

	// A call that asks says in the approval who asks; rejected, it ends
	// as not run, with the reason.
	got := make(chan tools.Outcome, 1)
	go func() {
		got <- f.w.RunTool(ctx, "mcp_2", "BrowserNavigate", `{"url":"https://example.com/"}`, tools.OriginMCP)
	}()
	ev := collect(t, sub, opened)
	a := ev[len(ev)-1].(ApprovalOpened).Approval
	if a.Call.Origin != tools.OriginMCP || a.Call.ID != "mcp_2" {
		t.Fatalf("approval %+v", a)
	}
	f.w.Answer(a.ID, tools.Decision{Kind: tools.Deny, Reason: "not now"}, tools.OriginTerminal)
	<-got
	evs = collect(t, sub, isOutsideDone)
	done = evs[len(evs)-1].(OutsideCall)
	if done.OK || !done.Denied {
		t.Fatalf("end %+v", done)
	}
	if line := done.Line(); !strings.HasPrefix(line, "MCP client · BrowserNavigate https://example.com/ — ✗ not run: ") || !strings.Contains(line, "not now") {
		t.Fatalf("line %q", line)
	}
}

// A line quotes what the caller and the page sent made safe: one line, no
// escapes, secret-looking words redacted, cut short.
func TestOutsideCallLineIsSafeToShow(t *testing.T) {
	const secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	c := OutsideCall{Origin: tools.OriginMCP, Name: "BrowserType", Args: `{"selector":"#q\u001b[2J","text":"` + secret + `","press_enter":true}`,
		Done: true, OK: false, Result: "\n  boom " + secret + strings.Repeat(" long", 200) + "\nsecond line"}
	line := c.Line()
	if strings.Contains(line, secret) || strings.Contains(line, "\x1b") || strings.Contains(line, "\n") || strings.Contains(line, "second line") {
		t.Fatalf("line %q", line)
	}
	if !strings.HasPrefix(line, "MCP client · BrowserType text into #q[2J ⏎ — ✗ failed: boom") || !strings.HasSuffix(line, "…") {
		t.Fatalf("line %q", line)
	}
}
