package openai

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/internal/llmtest"
)

// stalled is the fake server's provider with a short idle timeout.
func (f *fake) stalled(idle time.Duration) *Provider {
	return New(Config{Name: "testprov", BaseURL: f.URL + "/v1", APIKey: testKey, HTTPClient: f.Client,
		Policy: llmtest.Policy(nil), IdleTimeout: idle})
}

func TestChatStalledStreamGivesUpKeepingThePartialText(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	release := make(chan struct{})
	f := newFake(t, llmtest.Hang(release, llmtest.Event{Data: chunk(`{"content":"partial "}`)}))
	defer close(release)
	// The partial text must arrive within the idle timeout, counted from
	// the request. That takes milliseconds, but a loaded machine under
	// -race can stall for most of a second, so the window is wide; the
	// silence after the text ends the stream whatever the window.
	ds, c, err := collect(t, f.stalled(2*time.Second), simpleReq("q"))
	if kindOf(t, err) != llm.ErrStream || !strings.Contains(err.Error(), "sent nothing for 2s") || !strings.Contains(err.Error(), "agent.stream_idle_timeout") {
		t.Fatalf("err = %v", err)
	}
	if c.Text != "partial " || joined(ds, llm.TextDelta) != "partial " {
		t.Fatalf("partial text %q", c.Text)
	}
	f.Close()
}

func TestChatServerSilentBeforeHeadersGivesUp(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	release := make(chan struct{})
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	_, _, err := collect(t, f.stalled(200*time.Millisecond), simpleReq("q"))
	if kindOf(t, err) != llm.ErrStream || !strings.Contains(err.Error(), "sent nothing for 200ms") {
		t.Fatalf("err = %v", err)
	}
	f.Close()
}

func TestChatSlowButSteadyStreamIsNotIdle(t *testing.T) {
	// Each chunk arrives well within the idle timeout although the whole
	// stream takes longer than it: one every fifth of the timeout, eight
	// in all. That ratio is the point, not the scale: with a 1s timeout a
	// loaded machine under -race once stretched a 200ms gap past it, so
	// the timeout is 2.5s, leaving each gap 2s of slack.
	const idle = 2500 * time.Millisecond
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 8; i++ {
			w.Write([]byte("data: " + chunk(`{"content":"w "}`) + "\n\n"))
			w.(http.Flusher).Flush()
			time.Sleep(idle / 5)
		}
		w.Write([]byte("data: " + finish("stop") + "\n\ndata: [DONE]\n\n"))
	})
	// Not collect: its 10s bound on the whole call is too close to this
	// stream's 4s on a loaded machine. This bound only stops a hang.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := f.stalled(idle).Stream(ctx, simpleReq("q"), func(llm.Delta) {})
	if err != nil || c.Text != strings.Repeat("w ", 8) {
		t.Fatalf("text %q, err %v", c.Text, err)
	}
}
