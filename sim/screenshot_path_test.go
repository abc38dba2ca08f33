package sim

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/internal/infertest"
	"github.com/infer-workspace/infer/session/tools"
)

// markdownLink is a Markdown link or image; what the panel draws of it is
// its label.
var markdownLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)\s]*\)`)

// longestWord is the longest run of text without a space that the panel
// draws for markdown text: what a chat bubble cannot break.
func longestWord(markdown string) string {
	longest := ""
	for _, w := range strings.Fields(markdownLink.ReplaceAllString(markdown, "$1")) {
		if len(w) > len(longest) {
			longest = w
		}
	}
	return longest
}

// TestScreenshotPathFitsThePanel: the answer to a screenshot names the file
// it saved, a path of some 130 characters without a space that ran out of
// opentask's chat bubble. The panel is sent it as a short link to the
// picture, streamed and in the snapshot, while the stored conversation
// keeps the path.
func TestScreenshotPathFitsThePanel(t *testing.T) {
	t.Parallel()
	in := infertest.Start(t, infertest.Options{Mode: tools.Auto})
	c := NewClient(ClientOptions{URL: in.URL, Token: in.Token, Profile: OpenTask, Browser: &Minimal{}, MinBackoff: 10 * time.Millisecond})
	sub := c.Subscribe()
	t.Cleanup(sub.Close)
	runClient(t, c)
	if err := c.WaitConnected(ctxGuard(t)); err != nil {
		t.Fatal(err)
	}
	if err := c.SendUserMessage(ctxGuard(t), "screenshot"); err != nil {
		t.Fatal(err)
	}
	var streamed strings.Builder
	if _, err := WaitFor(ctxGuard(t), sub, func(f wire.ChatEvent) bool {
		var e struct{ Type, Delta string }
		json.Unmarshal(f.Event, &e)
		if e.Type == "TEXT_MESSAGE_CONTENT" {
			streamed.WriteString(e.Delta)
		}
		return e.Type == "RUN_FINISHED" || e.Type == "RUN_ERROR"
	}); err != nil {
		t.Fatal(err)
	}
	base := "http://" + strings.TrimSuffix(strings.TrimPrefix(in.URL, "ws://"), "/ws") + "/artifacts/screenshots/"

	stored := in.Workspace.Snapshot()
	id := stored.ID
	msgs := stored.Transcript.Messages()
	last := msgs[len(msgs)-1].Content
	if !strings.Contains(last, in.Artifacts+"/screenshots/") {
		t.Fatalf("the answer does not name the file (nothing to test): %q", last)
	}
	snap, err := c.Resume(ctxGuard(t), id)
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"streamed": streamed.String(), "snapshot": snap.Messages[len(snap.Messages)-1].Content} {
		if strings.Contains(text, in.Artifacts) {
			t.Errorf("%s text shows the artifacts folder's path: %q", what, text)
		}
		if !strings.Contains(text, "]("+base) {
			t.Errorf("%s text has no link to the screenshot at %s: %q", what, base, text)
		}
		if w := longestWord(text); len(w) > 40 {
			t.Errorf("%s text draws %q (%d bytes) without a place to break", what, w, len(w))
		}
	}
}
