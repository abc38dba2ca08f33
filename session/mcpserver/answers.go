package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/infer-workspace/infer/session/tools"
)

// answerGrace bounds how long Close waits for a session's cancelled calls
// to answer: a call honours cancellation at once, so this only keeps a
// stuck one from holding infer's shutdown.
const answerGrace = 5 * time.Second

// clientKey finds a connection's client in its calls' contexts.
type clientKey struct{}

// client counts one connection's calls that are running, and those that
// have returned but whose answer is not yet written: the MCP SDK writes a
// call's answer after its handler returns, and a session closed in
// between drops it.
type client struct {
	mu         sync.Mutex
	running    int
	unanswered int
	changed    chan struct{} // closed, and replaced, on every change
}

func newClient() *client { return &client{changed: make(chan struct{})} }

// update changes the counts under the lock and wakes settle.
func (c *client) update(f func()) {
	c.mu.Lock()
	f()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// settle waits until every call has returned and been answered, or grace
// has passed.
func (c *client) settle(grace time.Duration) {
	t := time.NewTimer(grace)
	defer t.Stop()
	for {
		c.mu.Lock()
		idle, changed := c.running == 0 && c.unanswered == 0, c.changed
		c.mu.Unlock()
		if idle {
			return
		}
		select {
		case <-changed:
		case <-t.C:
			return
		}
	}
}

// answerWriter is a connection's writing side. It counts the tool calls'
// answers it writes: the SDK writes one message per Write, and a call's
// answer is the only result with content (other answers, such as the
// one to the client's discovery, can be written while a call runs).
type answerWriter struct {
	io.WriteCloser
	c *client
}

func (w answerWriter) Write(p []byte) (int, error) {
	n, err := w.WriteCloser.Write(p)
	w.c.mu.Lock()
	waiting := w.c.unanswered > 0
	w.c.mu.Unlock()
	if waiting && isCallAnswer(p) {
		w.c.update(func() {
			if w.c.unanswered > 0 {
				w.c.unanswered--
			}
		})
	}
	return n, err
}

// isCallAnswer reports whether msg is the JSON-RPC answer to a tool call:
// a result with content.
func isCallAnswer(msg []byte) bool {
	var m struct {
		Result *struct {
			Content json.RawMessage `json:"content"`
		} `json:"result"`
	}
	return json.Unmarshal(msg, &m) == nil && m.Result != nil && m.Result.Content != nil
}

// tracked wraps run so that Close can cancel its calls (l.calls) and wait
// for their answers.
func (l *Listener) tracked(run Backend) Backend {
	return func(ctx context.Context, id, name, args string) tools.Outcome {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(l.calls, cancel)()
		c, _ := ctx.Value(clientKey{}).(*client)
		if c == nil {
			return run(ctx, id, name, args)
		}
		c.update(func() { c.running++ })
		defer c.update(func() { c.running--; c.unanswered++ })
		return run(ctx, id, name, args)
	}
}
