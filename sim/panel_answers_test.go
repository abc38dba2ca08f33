package sim

import (
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/tools"
)

// The panel's requests are answered by the events the workspace publishes
// for every front end, exactly once each: set_mode and select_model by the
// settings, resume and new_session by the conversation. A snapshot the
// panel asked for is no unasked one: reconnecting to it sends none.
func TestPanelRequestsAreAnsweredOnceByTheWorkspacesEvents(t *testing.T) {
	t.Parallel()
	in, c, sub := startPanel(t, nil)
	ctx := ctxGuard(t)
	if _, err := WaitFor[wire.ConversationSnapshot](ctx, sub, nil); err != nil {
		t.Fatal(err) // the fresh infer's conversation, sent on connect
	}
	if err := c.SendUserMessage(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	if _, err := WaitFor(ctx, sub, func(f wire.ChatEvent) bool { return hasEventType(f, "RUN_FINISHED") }); err != nil {
		t.Fatal(err)
	}
	id := in.Workspace.ActiveConversation()
	in.Workspace.NewSession() // the terminal moves on; the panel follows
	if _, err := WaitFor[wire.ConversationSnapshot](ctx, sub, nil); err != nil {
		t.Fatal(err)
	}

	if m, err := c.SetMode(ctx, "plan"); err != nil || m.Mode != "plan" {
		t.Fatalf("set_mode: %+v %v", m, err)
	}
	if m, err := c.SetMode(ctx, "reckless"); err != nil || m.Mode != "plan" {
		t.Fatalf("an unknown mode is answered with the current one: %+v %v", m, err)
	}
	if in.Workspace.Mode() != tools.Plan {
		t.Fatalf("mode %s", in.Workspace.Mode())
	}
	snap, err := c.Resume(ctx, id)
	if err != nil || len(snap.Messages) != 2 {
		t.Fatalf("resume: %+v %v", snap, err)
	}

	// Count what followed: one mode frame per set_mode, one snapshot for
	// the resume, and nothing more once the history answer comes.
	if _, err := c.ListHistory(ctx); err != nil {
		t.Fatal(err)
	}
	modes, snaps := 0, 0
	for {
		f, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		switch f.(type) {
		case wire.Mode:
			modes++
		case wire.ConversationSnapshot:
			snaps++
		}
		if _, done := f.(wire.History); done {
			break
		}
	}
	if modes != 2 || snaps != 1 {
		t.Fatalf("%d mode frames and %d snapshots after two set_mode and a resume, want 2 and 1", modes, snaps)
	}

	// Reconnected, the panel still shows what it asked for: no snapshot.
	c.Disconnect()
	c.Reconnect()
	for c.Connects() < 2 {
		select {
		case <-ctx.Done():
			t.Fatal("no second connection")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if _, err := c.ListConversations(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := sub.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := f.(wire.ConversationSnapshot); ok {
			t.Fatal("a snapshot the panel asked for was sent again unasked on reconnect")
		}
		if _, done := f.(wire.Conversations); done {
			return
		}
	}
}
