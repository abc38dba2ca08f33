package main

import (
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/store"
)

// TestHeadlessSessionIDHeldElsewhere resumes, with --session-id, a
// conversation another infer holds: the prompt is not lost, it runs in a
// new conversation, stderr says why, and the held one is left alone.
func TestHeadlessSessionIDHeldElsewhere(t *testing.T) {
	t.Parallel()
	home, project := hlProject(t)
	out, _, code := runHL(t, "", "-o", "json", "stream 2")
	if code != 0 {
		t.Fatalf("first run: exit %d", code)
	}
	id := jsonLines(t, out)[0]["conversation_id"].(string)

	// A second store excludes this process's own as another process would.
	st, err := store.Open(config.ConversationsDir(home, project), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hold, err := st.Hold(id)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Release()
	before, _ := st.Load(id)

	out, errOut, code := runHL(t, "", "-o", "json", "--session-id", id, "stream 3")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "conversation "+id+" is open in") || !strings.Contains(errOut, "continues in a new conversation") {
		t.Fatalf("stderr does not say why:\n%s", errOut)
	}
	first := jsonLines(t, out)[0]
	moved, _ := first["conversation_id"].(string)
	if first["resumed"] != false || moved == id || moved == "" {
		t.Fatalf("first line %v", first)
	}
	if c, err := st.Load(moved); err != nil || len(c.Messages) == 0 || c.Messages[0].Content != "stream 3" {
		t.Fatalf("the prompt's conversation: %+v, %v", c.Messages, err)
	}
	if after, _ := st.Load(id); len(after.Messages) != len(before.Messages) {
		t.Fatalf("the held conversation grew from %d to %d messages", len(before.Messages), len(after.Messages))
	}
}
