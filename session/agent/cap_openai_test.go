package agent

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/openai"
)

// TestEndlessProviderStreamIsCutOff streams a Chat Completions answer that
// never ends from a loopback server: the agent cuts it at the cap and the
// connection is dropped, so the server stops sending long before its own
// bound, and what is stored is the capped text.
func TestEndlessProviderStreamIsCutOff(t *testing.T) {
	const limit = 64 << 20 // the server gives up here: the test's hang guard
	var sent atomic.Int64
	piece := strings.Repeat("y", 32<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for sent.Load() < limit {
			n, err := fmt.Fprintf(w, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", piece)
			sent.Add(int64(n))
			if err != nil {
				return
			}
			fl.Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	p := openai.New(openai.Config{Name: "capprov", Flavor: openai.FlavorOpenAI, BaseURL: srv.URL + "/v1", APIKey: "k", HTTPClient: srv.Client()})
	var r recorder
	out := Run(context.Background(), Config{Provider: p, Request: llm.Request{Model: "m"}}, userHistory("hi"), r.hooks(noExec))
	if out.Status != Finished || len(r.msgs) != 1 {
		t.Fatalf("status %v (%v), %d messages", out.Status, out.Err, len(r.msgs))
	}
	if got := len(r.msgs[0].Content); got > DefaultMaxAnswerBytes+200 || !strings.Contains(r.msgs[0].Content, "the answer was cut here") {
		t.Errorf("stored %d bytes", got)
	}
	srv.CloseClientConnections()
	if n := sent.Load(); n >= limit {
		t.Errorf("the server sent all of its %d bytes: the stream was read to the end", n)
	}
}
