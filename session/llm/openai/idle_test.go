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
	// -race can stall for longer than the 200ms this once had, so the
	// window is wide; the silence after the text ends the stream whatever
	// the window.
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
	t.Parallel()
	// Each chunk arrives well within the idle timeout although the whole
	// stream takes longer than it: one every fifth of the timeout, six in
	// all, and sleeps only ever run long. That ratio is the point, not the
	// scale. A stall anywhere in the stream that outlasts the slack of a
	// gap fails the test, so the slack must exceed the stalls of a loaded
	// machine under -race: a 1s timeout (800ms of slack) and then 2.5s
	// (2s) each failed once, so the timeout is 5s, leaving 4s. (The
	// tests that need their data within a window from the request are
	// exposed only while the request is under way, milliseconds, and
	// make do with less.)
	const idle = 5 * time.Second
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 6; i++ {
			w.Write([]byte("data: " + chunk(`{"content":"w "}`) + "\n\n"))
			w.(http.Flusher).Flush()
			select {
			case <-time.After(idle / 5):
			case <-r.Context().Done():
				return // the client gave up: do not hold the server's Close
			}
		}
		w.Write([]byte("data: " + finish("stop") + "\n\ndata: [DONE]\n\n"))
	})
	// Not collect: its 10s bound on the whole call is too close to this
	// stream's 6s on a loaded machine. This bound only stops a hang.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := f.stalled(idle).Stream(ctx, simpleReq("q"), func(llm.Delta) {})
	if err != nil || c.Text != strings.Repeat("w ", 6) {
		t.Fatalf("text %q, err %v", c.Text, err)
	}
}
