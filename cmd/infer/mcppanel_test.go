package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/sim"
)

// panelOnBridge connects a simulated opentask 1.12.1 to the bridge on
// port, subscribed before its first frame, so the answers to what it sends
// after the hello are seen too.
func panelOnBridge(t *testing.T, port int, token string) (*sim.Client, *sim.Subscription) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := sim.NewClient(sim.ClientOptions{URL: "ws://127.0.0.1:" + strconv.Itoa(port) + "/ws", Token: token, Profile: sim.OpenTask,
		Browser: &sim.Minimal{}, MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
	sub := c.Subscribe()
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() { sub.Close(); cancel(); <-done })
	wctx, wcancel := context.WithTimeout(ctx, mcpGuard)
	defer wcancel()
	if err := c.WaitConnected(wctx); err != nil {
		t.Fatalf("the extension did not connect: %v", err)
	}
	return c, sub
}

// runText reads chat events until a run ends and returns the text its
// messages held; it fails unless a text message ended in the run, which
// is what takes opentask out of "Working…".
func runText(t *testing.T, ctx context.Context, sub *sim.Subscription) string {
	t.Helper()
	var text strings.Builder
	ended := false
	for {
		f, err := sim.WaitFor[wire.ChatEvent](ctx, sub, nil)
		if err != nil {
			t.Fatalf("the run never ended: %v (text so far %q)", err, text.String())
		}
		ev := decodeChat(t, f)
		switch ev.Type {
		case "TEXT_MESSAGE_CONTENT":
			text.WriteString(ev.Delta)
		case "TEXT_MESSAGE_END":
			ended = true
		case "RUN_FINISHED", "RUN_ERROR":
			if !ended {
				t.Fatalf("the run ended with no TEXT_MESSAGE_END: opentask would show Working… forever (text %q)", text.String())
			}
			return text.String()
		}
	}
}

// Standalone infer mcp holds the bridge, so the panel talks to it: what
// opentask asks after the hello is answered, and a message typed in the
// panel gets a run saying this infer only serves MCP clients and how to
// chat, instead of "Working…" forever.
func TestMCPStandaloneAnswersThePanel(t *testing.T) {
	t.Parallel()
	port := freePort(t)
	_, token := mcpHome(t, port, "")
	cs := mcpClient(t, "", "", port)
	c, sub := panelOnBridge(t, port, token)
	ctx, cancel := context.WithTimeout(context.Background(), mcpGuard)
	defer cancel()

	// opentask sends list_conversations and list_skills on its own.
	convs, err := sim.WaitFor[wire.Conversations](ctx, sub, nil)
	if err != nil {
		t.Fatalf("list_conversations got no answer: %v", err)
	}
	if len(convs.Conversations) != 0 {
		t.Fatalf("conversations: %+v", convs.Conversations)
	}
	if _, err := sim.WaitFor[wire.Skills](ctx, sub, nil); err != nil {
		t.Fatalf("list_skills got no answer: %v", err)
	}

	if err := c.SendUserMessage(ctx, "hello, are you there?"); err != nil {
		t.Fatal(err)
	}
	text := runText(t, ctx, sub)
	if !strings.Contains(text, "only serves MCP clients") || !strings.Contains(text, "run `infer`") {
		t.Fatalf("the reply does not say what this infer is or how to chat: %q", text)
	}

	// New chat (opentask sends /clear) is an empty conversation.
	if err := c.SendUserMessage(ctx, "/clear"); err != nil {
		t.Fatal(err)
	}
	snap, err := sim.WaitFor[wire.ConversationSnapshot](ctx, sub, func(s wire.ConversationSnapshot) bool { return true })
	if err != nil || len(snap.Messages) != 0 {
		t.Fatalf("/clear: %+v %v", snap, err)
	}

	// The MCP client is served all the while, and its calls show in the
	// panel's chat, the refused ones with why.
	if res, text := callMCP(t, cs, "browser_tabs", nil); res.IsError {
		t.Fatalf("tabs: %q", text)
	}
	if text := runText(t, ctx, sub); !strings.HasPrefix(text, "MCP client · BrowserTabs — ✓") {
		t.Fatalf("the panel shows %q for the MCP client's tabs call", text)
	}
	if res, _ := callMCP(t, cs, "browser_navigate", map[string]any{"url": "https://example.com/"}); !res.IsError {
		t.Fatal("a navigation ran in standard mode with nobody to ask")
	}
	if text := runText(t, ctx, sub); !strings.HasPrefix(text, "MCP client · BrowserNavigate https://example.com/ — ✗ not run: ") ||
		!strings.Contains(text, "no one is available to approve it") {
		t.Fatalf("the panel shows %q for the refused navigation", text)
	}
}

// An MCP client going through infer serve acts in the person's browser in
// the person's name: the panel's approval says an MCP client asks, and
// each call shows in the panel's chat once it ended, saying it was an MCP
// client's, what it did and how it went.
func TestMCPCallsThroughServeShowInThePanel(t *testing.T) {
	t.Parallel()
	s := serveInProcess(t, "", "")
	s.client.Disconnect() // the fixture's contract client makes way for opentask
	c, sub := panelOnBridge(t, s.app.Seat.Port(), s.app.BrowserUse.Extension.Token)
	ws := s.app.Workspace.Subscribe()
	defer ws.Close()
	cs := mcpClient(t, s.home, s.project, 0)
	ctx, cancel := context.WithTimeout(context.Background(), mcpGuard)
	defer cancel()

	if res, text := callMCP(t, cs, "browser_tabs", nil); res.IsError {
		t.Fatalf("tabs: %q", text)
	}
	if text := runText(t, ctx, sub); !strings.HasPrefix(text, "MCP client · BrowserTabs — ✓") {
		t.Fatalf("the panel shows %q for the MCP client's tabs call", text)
	}
	// The terminal's chat is told the same, as the call starts and ends.
	waitEvent(t, ws, func(e session.Event) bool {
		o, ok := e.(session.OutsideCall)
		return ok && o.Done && o.OK && o.Name == "BrowserTabs" && o.Origin == tools.OriginMCP
	})

	got := make(chan string, 1)
	go func() {
		res, text := callMCP(t, cs, "browser_navigate", map[string]any{"url": "https://example.com/"})
		if res.IsError {
			text = "error: " + text
		}
		got <- text
	}()
	req, err := sim.WaitFor[wire.ApprovalRequest](ctx, sub, nil)
	if err != nil {
		t.Fatal(err)
	}
	if req.ToolName != "BrowserNavigate for an MCP client" {
		t.Fatalf("the panel's approval does not say who asks: %+v", req)
	}
	if err := c.Approve(ctx, req.RequestID); err != nil {
		t.Fatal(err)
	}
	if text := <-got; !strings.Contains(text, "example.com") {
		t.Fatalf("navigate: %q", text)
	}
	if text := runText(t, ctx, sub); !strings.HasPrefix(text, "MCP client · BrowserNavigate https://example.com/ — ✓") {
		t.Fatalf("the panel shows %q for the MCP client's navigation", text)
	}
}
