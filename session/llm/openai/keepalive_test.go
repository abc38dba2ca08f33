package openai

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/infer-workspace/infer/session/llm"
)

// TestStreamsReuseTheConnection runs answers one after another, as an agent
// loop does, against a server that ends each stream with [DONE] and then
// the response: every one of them is to travel over the first connection.
func TestStreamsReuseTheConnection(t *testing.T) {
	t.Parallel()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for _, p := range []string{chunk(`{"content":"hi"}`), finish("stop")} {
			fmt.Fprintf(w, "data: %s\n\n", p)
			fl.Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
		fl.Flush()
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	p := New(Config{Name: "testprov", Flavor: FlavorCompatible, BaseURL: srv.URL + "/v1", APIKey: testKey, HTTPClient: srv.Client()})
	const answers = 100
	for i := range answers {
		c, err := p.Stream(context.Background(), simpleReq(fmt.Sprint("q", i)), func(llm.Delta) {})
		if err != nil || c.Text != "hi" {
			t.Fatalf("answer %d: %q, %v", i, c.Text, err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("%d answers took %d connections, want 1", answers, n)
	}
}

// TestAStreamHeldOpenAfterDoneStillEnds: a server that sends [DONE] and
// then keeps the response open does not hold the answer up; only its
// connection is lost.
func TestAStreamHeldOpenAfterDoneStillEnds(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", chunk(`{"content":"hi"}`))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	p := New(Config{Name: "testprov", Flavor: FlavorCompatible, BaseURL: srv.URL + "/v1", APIKey: testKey, HTTPClient: srv.Client()})
	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		c, err := p.Stream(context.Background(), simpleReq("q"), func(llm.Delta) {})
		done <- result{c.Text, err}
	}()
	select {
	case r := <-done:
		if r.err != nil || r.text != "hi" {
			t.Fatalf("answer %q, %v", r.text, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the answer waited for the server to end the response")
	}
}
