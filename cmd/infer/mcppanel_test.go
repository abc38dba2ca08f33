package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/sim"
	"github.com/infer-workspace/infer/sim/fakebrowser"
)

// panelOnBridge connects a simulated opentask 1.12.1 to the bridge on
// port, subscribed before its first frame, so the answers to what it sends
// after the hello are seen too.
func panelOnBridge(t *testing.T, port int, token string) (*sim.Client, *sim.Subscription) {
	t.Helper()
	fb, err := fakebrowser.New(fakebrowser.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fb.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	c := sim.NewClient(sim.ClientOptions{URL: "ws://127.0.0.1:" + strconv.Itoa(port) + "/ws", Token: token, Profile: sim.OpenTask,
		Browser: fb, MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
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
	port := freePort(t)
	_, token := mcpHome(t, port, "")
	cs := mcpClient(t, port)
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

	// The MCP client is served all the while.
	if res, text := callMCP(t, cs, "browser_tabs", nil); res.IsError {
		t.Fatalf("tabs: %q", text)
	}
}
