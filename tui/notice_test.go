package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
)

// TestLivePanelModeRaiseAndToolRequestAreDrawnInTheChat: what the browser
// panel does behind the person's back is in the chat as it happens, the
// raise as a warning, and still there after the conversation is resumed.
func TestLivePanelModeRaiseAndToolRequestAreDrawnInTheChat(t *testing.T) {
	t.Parallel()
	h := newLiveHarness(t)
	h.real.SetMode("auto", tools.OriginPanel)
	h.waitFor("⚠ The browser panel switched the mode from standard to auto")
	mustContain(t, h.screen(), "mode: auto")

	out := h.real.RunTool(context.Background(), "req-1", "Bash", `{"command":"echo hi"}`, tools.OriginPanel)
	if !out.Success {
		t.Fatalf("tool request: %+v", out)
	}
	h.waitFor(`⚠ The browser panel asked to run Bash in auto mode: {"command":"echo hi"}`)

	id := h.real.ActiveConversation()
	h.real.NewSession()
	h.waitFor("No messages yet") // the empty chat
	mustNotContain(t, h.screen(), "The browser panel")
	if _, err := h.real.Resume(id); err != nil {
		t.Fatal(err)
	}
	h.waitFor("⚠ The browser panel switched the mode from standard to auto")
	mustContain(t, h.screen(), `asked to run Bash in auto mode: {"command":"echo hi"}`)
}

// TestSnapshotNoticesAreDrawnInPlace: a resumed conversation's notices sit
// between the messages they came between.
func TestSnapshotNoticesAreDrawnInPlace(t *testing.T) {
	t.Parallel()
	ws := newFakeWS()
	ws.snap = session.Snapshot{
		ID: "c1", Title: "t",
		Transcript: transcript.Transcript{Items: []transcript.Item{
			{Kind: transcript.User, Text: "first question", Done: true},
			{Kind: transcript.Notice, Text: "The browser panel switched the mode from standard to auto: commands will run without asking", Origin: "panel", Level: transcript.Warn, Done: true},
			{Kind: transcript.Text, Text: "first answer", Done: true},
			{Kind: transcript.Notice, Text: "The browser panel switched the mode from auto to plan.", Origin: "panel", Done: true},
		}},
	}
	h := newHarness(t, ws, 160, 48)
	s := h.screen()
	q, raise, a, lower := strings.Index(s, "first question"), strings.Index(s, "⚠ The browser panel switched the mode from standard to auto"),
		strings.Index(s, "first answer"), strings.Index(s, "ⓘ The browser panel switched the mode from auto to plan")
	if q < 0 || raise < 0 || a < 0 || lower < 0 || !(q < raise && raise < a && a < lower) {
		t.Fatalf("order %d %d %d %d in:\n%s", q, raise, a, lower, s)
	}
}

// TestLiveMCPClientCallIsDrawnInTheChat: an MCP client's call through this
// infer is a row saying who made it, with its outcome, and a resumed
// conversation keeps its line.
func TestLiveMCPClientCallIsDrawnInTheChat(t *testing.T) {
	t.Parallel()
	h := newLiveHarness(t)
	out := h.real.RunTool(context.Background(), "mcp_1", "Bash", `{"command":"echo from-mcp"}`, tools.OriginMCP)
	if !out.Success {
		t.Fatalf("an allowlisted command from an MCP client: %+v", out)
	}
	h.waitFor("✓ MCP client · Bash echo from-mcp")
	mustNotContain(t, h.screen(), "asked to run")

	id := h.real.ActiveConversation()
	h.real.NewSession()
	h.waitFor("No messages yet")
	if _, err := h.real.Resume(id); err != nil {
		t.Fatal(err)
	}
	h.waitFor(`MCP client · Bash {"command":"echo from-mcp"} — ✓ from-mcp`)
}
