package sim

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
)

// A panel that picked no conversation keeps showing what it showed before
// it reconnected. When that is not infer's active conversation (infer
// restarted, or started a new one while the panel was away) infer sends the
// active one's snapshot at once; when nothing changed it sends none, as
// the contract has it.
func TestPanelNeverKeepsATranscriptTheModelNoLongerHas(t *testing.T) {
	t.Parallel()
	in, c, sub := startPanel(t, nil)
	ctx := ctxGuard(t)

	// A fresh infer: whatever the panel shows, it is not this process's
	// new conversation.
	first, err := WaitFor[wire.ConversationSnapshot](ctx, sub, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Messages) != 0 {
		t.Fatalf("a new infer's conversation is empty; snapshot has %d messages", len(first.Messages))
	}
	if err := c.SendUserMessage(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	if _, err := WaitFor(ctx, sub, func(f wire.ChatEvent) bool { return hasEventType(f, "RUN_FINISHED") }); err != nil {
		t.Fatal(err)
	}

	// reconnected waits for the client's next connection and reports
	// whether a snapshot came before the answer to list_conversations.
	reconnected := func(want int) (wire.ConversationSnapshot, bool) {
		t.Helper()
		c.Reconnect()
		for c.Connects() < want {
			select {
			case <-ctx.Done():
				t.Fatalf("connection %d never came", want)
			case <-time.After(5 * time.Millisecond):
			}
		}
		if _, err := c.ListConversations(ctx); err != nil {
			t.Fatal(err)
		}
		var snap wire.ConversationSnapshot
		seen := false
		for {
			f, err := sub.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			switch f := f.(type) {
			case wire.ConversationSnapshot:
				snap, seen = f, true
			case wire.Conversations:
				return snap, seen
			}
		}
	}

	c.Disconnect()
	if _, seen := reconnected(2); seen {
		t.Fatal("a panel that reconnected to the conversation it shows was sent a snapshot unasked")
	}

	c.Disconnect()
	in.Workspace.NewSession()
	snap, seen := reconnected(3)
	if !seen || len(snap.Messages) != 0 {
		t.Fatalf("after a new conversation began while the panel was away: snapshot %v with %d messages, want the empty one", seen, len(snap.Messages))
	}
}

// hasEventType reports whether a chat_event frame carries an AG-UI event of
// type typ.
func hasEventType(f wire.ChatEvent, typ string) bool {
	var head struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(f.Event, &head) == nil && head.Type == typ
}
