package perf

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// scriptedModel is an OpenAI-compatible Chat Completions server that
// streams, as server-sent events, one BrowserRead tool call per answer
// until the conversation holds calls tool results, then a short final
// text. It timestamps each exchange so the benchmark can tell the time
// infer spends between two model requests.
//
// Its first answer waits until release is closed, so the loop starts only
// once the simulated extension is connected to infer's bridge.
type scriptedModel struct {
	calls   int
	release chan struct{}
	// expect is text every tool result must contain (what the simulated
	// browser returns for a read), so a call that never reached the
	// browser cannot pass for a fast one.
	expect string

	// mu guards everything below.
	mu sync.Mutex
	// pid is the process whose memory is read when the request carrying
	// every result has arrived, before it is answered: the moment infer
	// holds the whole turn in memory. anon and file are what was read.
	pid        int
	anon, file int64
	memErr     error

	// arrived[i] is when the request carrying i tool results had been
	// read in full, answered[i] when its answer had been flushed.
	arrived, answered []time.Time
	problems          []string
}

func newScriptedModel(calls int, expect string) *scriptedModel {
	return &scriptedModel{
		calls: calls, release: make(chan struct{}), expect: expect,
		arrived: make([]time.Time, calls+1), answered: make([]time.Time, calls+1),
	}
}

// chatRequest is the part of a Chat Completions request the script reads.
type chatRequest struct {
	Stream   bool `json:"stream"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
	} `json:"messages"`
	Tools []json.RawMessage `json:"tools"`
}

func (m *scriptedModel) problem(format string, args ...any) {
	m.mu.Lock()
	m.problems = append(m.problems, fmt.Sprintf(format, args...))
	m.mu.Unlock()
}

func (m *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		m.problem("unexpected request %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	arrived := time.Now()
	if err != nil {
		// The client gave up on it: headless cancels the background title
		// request when it exits. A loop request lost this way shows up in
		// gaps as a call that never completed.
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil || !req.Stream {
		m.problem("a request that is not a streamed chat completion (%v): %.200s", err, body)
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	if len(req.Tools) == 0 {
		// Only the conversation's title is asked for without tools.
		streamText(w, "Scripted browsing run", nil)
		return
	}
	results := 0
	for _, msg := range req.Messages {
		if msg.Role != "tool" {
			continue
		}
		results++
		var text string
		if json.Unmarshal(msg.Content, &text) != nil || !strings.Contains(text, m.expect) {
			m.problem("tool result %d is not the simulated browser's page: %.200s", results, msg.Content)
		}
	}
	if results > m.calls {
		m.problem("a request with %d tool results; the script asks for %d calls", results, m.calls)
		http.Error(w, "too many calls", http.StatusBadRequest)
		return
	}
	if results == 0 {
		select {
		case <-m.release:
		case <-r.Context().Done():
			return
		}
	}
	// Both times are recorded before the answer's [DONE] goes out, so a
	// client that has read it finds them: it may ask for gaps, or send the
	// next request, before this handler returns.
	m.mu.Lock()
	if !m.arrived[results].IsZero() {
		m.problems = append(m.problems, fmt.Sprintf("the request with %d tool results came twice", results))
	}
	m.arrived[results] = arrived
	m.mu.Unlock()
	answered := func() {
		now := time.Now()
		m.mu.Lock()
		m.answered[results] = now
		m.mu.Unlock()
	}
	if results < m.calls {
		streamToolCall(w, results, answered)
	} else {
		m.readMemory()
		streamText(w, fmt.Sprintf("Read the page %d times.", m.calls), answered)
	}
}

// watch names the process whose memory readMemory reads.
func (m *scriptedModel) watch(pid int) {
	m.mu.Lock()
	m.pid = pid
	m.mu.Unlock()
}

func (m *scriptedModel) readMemory() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pid == 0 {
		return
	}
	if m.anon, m.memErr = procStatus(m.pid, "RssAnon"); m.memErr == nil {
		m.file, m.memErr = procStatus(m.pid, "RssFile")
	}
}

// memory returns the anonymous and file-backed resident memory read at
// the last request.
func (m *scriptedModel) memory() (anon, file int64, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.memErr == nil && m.anon == 0 {
		return 0, 0, errors.New("the memory of infer was not read at the last request")
	}
	return m.anon, m.file, m.memErr
}

// gaps returns, for each tool call, the time from the end of the answer
// that asked for it to the arrival of the request carrying its result:
// everything infer does for one call, the browser's round trip included.
func (m *scriptedModel) gaps() ([]time.Duration, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.problems) > 0 {
		return nil, fmt.Errorf("the scripted model saw problems:\n%s", strings.Join(m.problems, "\n"))
	}
	out := make([]time.Duration, m.calls)
	for i := range out {
		if m.answered[i].IsZero() || m.arrived[i+1].IsZero() {
			return nil, fmt.Errorf("call %d of %d never completed", i+1, m.calls)
		}
		out[i] = m.arrived[i+1].Sub(m.answered[i])
	}
	return out, nil
}

// chunk is one chat.completion.chunk with the given choices JSON.
func chunk(choices string) string {
	return `{"id":"chatcmpl-perf","object":"chat.completion.chunk","created":1,"model":"scripted","choices":` + choices + `}`
}

// usage is the closing chunk of a stream that reports token counts.
var usage = `{"id":"chatcmpl-perf","object":"chat.completion.chunk","created":1,"model":"scripted","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":10,"total_tokens":60}}`

// streamToolCall answers with one BrowserRead call of the whole page, its
// arguments streamed in a chunk of their own as real servers do.
func streamToolCall(w http.ResponseWriter, n int, beforeDone func()) {
	id := fmt.Sprintf("call_%04d", n)
	writeSSE(w, beforeDone,
		chunk(`[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"`+id+`","type":"function","function":{"name":"BrowserRead","arguments":""}}]},"finish_reason":null}]`),
		chunk(`[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]},"finish_reason":null}]`),
		chunk(`[{"index":0,"delta":{},"finish_reason":"tool_calls"}]`),
		usage,
	)
}

// streamText answers with text in two deltas.
func streamText(w http.ResponseWriter, text string, beforeDone func()) {
	half := len(text) / 2
	first, _ := json.Marshal(text[:half])
	second, _ := json.Marshal(text[half:])
	writeSSE(w, beforeDone,
		chunk(`[{"index":0,"delta":{"role":"assistant","content":`+string(first)+`},"finish_reason":null}]`),
		chunk(`[{"index":0,"delta":{"content":`+string(second)+`},"finish_reason":null}]`),
		chunk(`[{"index":0,"delta":{},"finish_reason":"stop"}]`),
		usage,
	)
}

// writeSSE writes each payload as one event, flushed as it goes, then the
// [DONE] sentinel that ends an OpenAI stream. beforeDone (if set) runs just
// before the sentinel goes out: the client may act as soon as it reads it,
// before this handler returns.
func writeSSE(w http.ResponseWriter, beforeDone func(), payloads ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	for _, p := range append(payloads, "[DONE]") {
		if p == "[DONE]" && beforeDone != nil {
			beforeDone()
		}
		io.WriteString(w, "data: "+p+"\n\n")
		if f != nil {
			f.Flush()
		}
	}
}
