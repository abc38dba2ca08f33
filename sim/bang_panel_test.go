package sim

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/bridge/wire"
)

// A "!command" sent from opentask's panel ends with a text message holding
// its output: opentask ignores TOOL_CALL_RESULT and leaves "Working…" only
// on TEXT_MESSAGE_END.
func TestPanelBangCommandEndsWithItsOutputAsText(t *testing.T) {
	t.Parallel()
	in, c, sub := startPanel(t, OpenTask)
	ctx := ctxGuard(t)
	if err := c.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.SendUserMessage(ctx, "!echo from-the-panel; exit 3"); err != nil {
		t.Fatal(err)
	}
	req, err := WaitFor[wire.ApprovalRequest](ctx, sub, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Approve(ctx, req.RequestID); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	textEnded := false
	for {
		f, err := WaitFor[wire.ChatEvent](ctx, sub, nil)
		if err != nil {
			t.Fatal(err)
		}
		var ev struct {
			Type  string `json:"type"`
			Delta string `json:"delta"`
		}
		if err := json.Unmarshal(f.Event, &ev); err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case "TEXT_MESSAGE_START":
			text.Reset()
			textEnded = false
		case "TEXT_MESSAGE_CONTENT":
			text.WriteString(ev.Delta)
		case "TEXT_MESSAGE_END":
			textEnded = true
		case "RUN_ERROR":
			t.Fatalf("the run failed: %s", f.Event)
		}
		if ev.Type == "RUN_FINISHED" {
			break
		}
	}
	if !textEnded {
		t.Fatal("the run finished with no TEXT_MESSAGE_END: opentask would show Working… forever")
	}
	if got := text.String(); !strings.Contains(got, "from-the-panel") || !strings.Contains(got, "Exit code: 3") {
		t.Fatalf("closing text %q lacks the output or the exit code", got)
	}
	// The closing text is for the panel: the conversation keeps the call
	// and its result only.
	for _, m := range in.Workspace.Snapshot().Transcript.Messages() {
		if m.Role == "assistant" && strings.Contains(m.Content, "from-the-panel") {
			t.Fatalf("the closing text was stored: %q", m.Content)
		}
	}
}
