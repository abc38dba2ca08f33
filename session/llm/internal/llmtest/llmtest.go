// Package llmtest is a fake model server for the adapters' tests: an
// httptest server that records every request and answers with scripted
// replies (server-sent events, HTTP errors, cut connections), so each
// adapter is tested against the wire protocol it really speaks.
package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/internal/call"
)

// Recorded is one request the fake server received.
type Recorded struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   map[string]any
}

// Reply writes one response.
type Reply func(w http.ResponseWriter, r *http.Request)

// Server answers request n with replies[n], repeating the last reply.
type Server struct {
	URL    string
	Client *http.Client // a client with its own transport, closed at cleanup

	t       testing.TB
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []Recorded
	replies []Reply
}

// New starts a server; it stops when the test ends.
func New(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	s := &Server{t: t, replies: replies}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	tr := &http.Transport{}
	s.Client = &http.Client{Transport: tr}
	t.Cleanup(s.Close)
	return s
}

// Close stops the server and the client's idle connections. It may be
// called more than once (a goroutine-leak check calls it before the end).
func (s *Server) Close() {
	s.Client.Transport.(*http.Transport).CloseIdleConnections()
	s.srv.Close()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rec := Recorded{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone()}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &rec.Body); err != nil {
			s.t.Errorf("request body is not JSON: %v: %s", err, raw)
		}
	}
	s.mu.Lock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, rec)
	rp := s.replies[min(n, len(s.replies)-1)]
	s.mu.Unlock()
	rp(w, r)
}

// Requests returns what the server received so far.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.reqs...)
}

// Last returns the last request, failing the test if there was none.
func (s *Server) Last() Recorded {
	s.t.Helper()
	r := s.Requests()
	if len(r) == 0 {
		s.t.Fatal("the server received no request")
	}
	return r[len(r)-1]
}

// Policy returns a retry policy that records its waits in waits (which may
// be nil) instead of sleeping, with a 1ms base backoff.
func Policy(waits *[]time.Duration) call.Policy {
	var mu sync.Mutex
	return call.Policy{BaseDelay: time.Millisecond, Sleep: func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		if waits != nil {
			*waits = append(*waits, d)
		}
		mu.Unlock()
		return ctx.Err()
	}}
}

// Event is one server-sent event; an empty Name sends data only.
type Event struct{ Name, Data string }

// SSE replies with events, flushing each.
func SSE(evs ...Event) Reply {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for _, e := range evs {
			writeEvent(w, e)
			fl.Flush()
		}
	}
}

func writeEvent(w io.Writer, e Event) {
	if e.Name != "" {
		fmt.Fprintf(w, "event: %s\n", e.Name)
	}
	fmt.Fprintf(w, "data: %s\n\n", e.Data)
}

// Broken sends events, then cuts the connection mid-stream.
func Broken(evs ...Event) Reply {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range evs {
			writeEvent(w, e)
		}
		w.(http.Flusher).Flush()
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		_ = buf.Flush()
		_ = conn.Close()
	}
}

// Hang sends events, then holds the stream open until the client goes
// away or release is closed.
func Hang(release <-chan struct{}, evs ...Event) Reply {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range evs {
			writeEvent(w, e)
		}
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
}

// Status replies with an HTTP error; headers are name, value pairs.
func Status(code int, body string, headers ...string) Reply {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

// JSON replies 200 with body.
func JSON(body string) Reply { return Status(http.StatusOK, body) }

// Collect streams req and returns the deltas it emitted.
func Collect(t testing.TB, p llm.Provider, req llm.Request) ([]llm.Delta, llm.Completion, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var ds []llm.Delta
	c, err := p.Stream(ctx, req, func(d llm.Delta) { ds = append(ds, d) })
	return ds, c, err
}

// Joined concatenates the text of the deltas of one kind.
func Joined(ds []llm.Delta, kind llm.DeltaKind) string {
	var b strings.Builder
	for _, d := range ds {
		if d.Kind == kind {
			b.WriteString(d.Text)
		}
	}
	return b.String()
}

// At walks decoded JSON by keys and indexes: At(body, "messages", 0, "role").
func At(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			s, ok := v.([]any)
			if !ok || k >= len(s) {
				return nil
			}
			v = s[k]
		}
	}
	return v
}

// Kind fails the test when err is nil and returns its llm.ErrorKind.
func Kind(t testing.TB, err error) llm.ErrorKind {
	t.Helper()
	if err == nil {
		t.Fatal("expected an error, got nil")
	}
	return llm.KindOf(err)
}
