package call

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// DefaultIdleTimeout is how long a provider may send nothing before a
// request is given up (config.yaml agent.stream_idle_timeout).
const DefaultIdleTimeout = 2 * time.Minute

// IdleError reports a request the server stopped answering: no response
// headers, or no byte of the body, for After. A stalled stream otherwise
// holds the turn until the person interrupts it, because streams have no
// overall deadline (a long answer is legitimate; silence is not).
type IdleError struct {
	After time.Duration
}

// Error says what happened and what the person can change.
func (e *IdleError) Error() string {
	return fmt.Sprintf("the provider sent nothing for %s, so infer stopped waiting (raise agent.stream_idle_timeout in config.yaml for servers that pause longer, e.g. while loading a model)", e.After)
}

// Idle returns SDK middleware (the OpenAI and Anthropic SDKs share its
// signature) that ends a request once the server has been silent for d:
// while waiting for the response headers, and between any two reads of the
// body that return data. Read errors after that are the *IdleError. d <= 0
// returns middleware that does nothing.
func Idle(d time.Duration) func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if d <= 0 {
			return next(req)
		}
		ctx, cancel := context.WithCancel(req.Context())
		w := &watchdog{after: d, cancel: cancel}
		w.timer = time.AfterFunc(d, w.fire)
		res, err := next(req.WithContext(ctx))
		if err != nil {
			w.stop()
			if w.hasFired() {
				return nil, &IdleError{After: d}
			}
			return nil, err
		}
		w.alive()
		res.Body = &idleBody{ReadCloser: res.Body, w: w}
		return res, nil
	}
}

// watchdog cancels a request's context when its timer runs out; every
// sign of life restarts the timer.
type watchdog struct {
	after  time.Duration
	cancel context.CancelFunc
	timer  *time.Timer

	mu    sync.Mutex
	fired bool
}

func (w *watchdog) fire() {
	w.mu.Lock()
	w.fired = true
	w.mu.Unlock()
	w.cancel()
}

func (w *watchdog) hasFired() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fired
}

// alive restarts the timer unless it already fired.
func (w *watchdog) alive() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.fired {
		w.timer.Reset(w.after)
	}
}

// stop ends the watch and releases the request's context.
func (w *watchdog) stop() {
	w.timer.Stop()
	w.cancel()
}

// idleBody restarts the watchdog on every read that returns data and turns
// the read error the cancellation causes into an *IdleError.
type idleBody struct {
	io.ReadCloser
	w *watchdog
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.w.alive()
	}
	if err != nil && err != io.EOF && b.w.hasFired() {
		return n, &IdleError{After: b.w.after}
	}
	return n, err
}

// Close closes the body before it releases the request's context: the
// body may still read the end of the response while it closes (the OpenAI
// adapter does, to keep the connection), which a cancelled context would
// cut off.
func (b *idleBody) Close() error {
	err := b.ReadCloser.Close()
	b.w.stop()
	return err
}
