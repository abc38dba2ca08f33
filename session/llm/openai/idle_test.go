package openai

import (
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
	ds, c, err := collect(t, f.stalled(200*time.Millisecond), simpleReq("q"))
	if kindOf(t, err) != llm.ErrStream || !strings.Contains(err.Error(), "sent nothing for 200ms") || !strings.Contains(err.Error(), "agent.stream_idle_timeout") {
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
	// stream takes longer than it.
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 8; i++ {
			w.Write([]byte("data: " + chunk(`{"content":"w "}`) + "\n\n"))
			w.(http.Flusher).Flush()
			time.Sleep(200 * time.Millisecond)
		}
		w.Write([]byte("data: " + finish("stop") + "\n\ndata: [DONE]\n\n"))
	})
	_, c, err := collect(t, f.stalled(time.Second), simpleReq("q"))
	if err != nil || c.Text != strings.Repeat("w ", 8) {
		t.Fatalf("text %q, err %v", c.Text, err)
	}
}
