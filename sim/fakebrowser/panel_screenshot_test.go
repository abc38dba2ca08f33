package fakebrowser_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/internal/infertest"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/sim"
	"github.com/infer-workspace/infer/sim/fakebrowser"
)

// The offline model's answer to a screenshot shows the picture, and the
// panel gets its link in a form a web page can load: the bridge's own
// http://127.0.0.1:<port>/artifacts/ address, which then serves the PNG.
func TestPanelGetsScreenshotsAsLoadableLinks(t *testing.T) {
	t.Parallel()
	in := infertest.Start(t, infertest.Options{Mode: tools.Auto})
	fb, err := fakebrowser.New(fakebrowser.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := sim.NewClient(sim.ClientOptions{URL: in.URL, Token: in.Token, Browser: fb, MinBackoff: 10 * time.Millisecond})
	sub := c.Subscribe()
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := c.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.SendUserMessage(ctx, "open demo.infer.localhost; screenshot"); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for {
		f, err := sim.WaitFor[wire.ChatEvent](ctx, sub, nil)
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
		if ev.Type == "TEXT_MESSAGE_CONTENT" {
			text.WriteString(ev.Delta)
		}
		if ev.Type == "RUN_FINISHED" || ev.Type == "RUN_ERROR" {
			break
		}
	}
	base := strings.TrimSuffix(strings.Replace(in.URL, "ws://", "http://", 1), "/ws")
	link := regexp.MustCompile(`!\[screenshot\]\((\S+)\)`).FindStringSubmatch(text.String())
	if link == nil {
		t.Fatalf("the answer shows no screenshot: %q", text.String())
	}
	if !strings.HasPrefix(link[1], base+"/artifacts/screenshots/") {
		t.Fatalf("the panel got %q, want a link under %s/artifacts/", link[1], base)
	}
	resp, err := http.Get(link[1])
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 8))
	if resp.StatusCode != http.StatusOK || string(head) != "\x89PNG\r\n\x1a\n" {
		t.Fatalf("GET %s: %s, starts %q", link[1], resp.Status, head)
	}

	// What is stored (and shown in the TUI) keeps the root-relative form:
	// the port is this run's.
	msgs := in.Workspace.Snapshot().Transcript.Messages()
	last := msgs[len(msgs)-1].Content
	if !strings.Contains(last, "](/artifacts/screenshots/") || strings.Contains(last, base) {
		t.Fatalf("stored answer %q", last)
	}
}
