package bridge

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
)

// resultGrace is how much longer than timeout_ms the driver waits: the
// extension's own timeout error says more than ours, so it gets the chance
// to arrive first.
const resultGrace = 500 * time.Millisecond

// Do sends one command to the live extension and waits for its result. It
// fails at once with browser.ErrNotConnected when no extension is connected
// and with browser.ErrFlapping while two extensions take turns on the
// socket; with browser.ErrDisconnected as soon as the connection drops or is
// replaced, with browser.ErrTimeout when the command's budget (plus a short
// grace) passes, and with ctx's error when ctx ends first. A failure the
// extension reports is a *browser.CommandError. Safe for concurrent use.
func (s *Server) Do(ctx context.Context, cmd browser.Command) (browser.Result, error) {
	return s.do(ctx, cmd)
}

func (s *Server) do(ctx context.Context, cmd browser.Command) (browser.Result, error) {
	if err := cmd.Action.Check(); err != nil {
		return browser.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return browser.Result{}, fmt.Errorf("browser %s: %w", cmd.Action, err)
	}
	// While two browsers take turns on the socket, whichever holds it now
	// would get the command and the other the next: none is sent. That
	// holds between turns too, when neither is connected.
	s.mu.Lock()
	c, flapping := s.live, s.status.Flapping
	s.mu.Unlock()
	if flapping > 0 {
		return browser.Result{}, s.flappingError(cmd.Action, flapping)
	}
	if c == nil {
		return browser.Result{}, fmt.Errorf("browser %s: %w", cmd.Action, browser.ErrNotConnected)
	}
	budget := cmd.Timeout
	if budget <= 0 {
		budget = s.opts.CommandTimeout
	}
	// The extension should give up when the caller would: tell it the
	// smaller budget. The caller's deadline then comes resultGrace before
	// ours would, so ours is not needed.
	needTimer := true
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left < budget {
			budget, needTimer = left, false
		}
	}
	timeoutMS := max(budget.Milliseconds(), 1)

	id := newCommandID()
	cl := getCall()
	if !c.addPending(id, cl) {
		putCall(cl)
		return browser.Result{}, fmt.Errorf("browser %s: %w", cmd.Action, browser.ErrNotConnected)
	}
	answered := false
	defer func() { c.endCall(id, cl, answered) }()

	frame := wire.BrowserCommand{
		ID:         id,
		Action:     cmd.Action,
		URL:        cmd.URL,
		Selector:   cmd.Selector,
		Text:       cmd.Text,
		PressEnter: cmd.PressEnter,
		TimeoutMS:  timeoutMS,
	}
	var expired <-chan time.Time // nil, never ready, when ctx's deadline comes first
	if needTimer {
		timer := getTimer(budget + resultGrace)
		defer putTimer(timer)
		expired = timer.C
	}

	if wrote, err := c.writeDirect(frame); wrote {
		if err != nil {
			c.shutdown(websocket.CloseGoingAway, "write failed: "+err.Error())
			return browser.Result{}, c.disconnected(cmd.Action)
		}
	} else {
		c.queued.Add(1)
		select {
		case c.out <- wire.MustEncode(frame):
		case <-c.done:
			c.queued.Add(-1)
			return browser.Result{}, c.disconnected(cmd.Action)
		case <-ctx.Done():
			c.queued.Add(-1)
			return browser.Result{}, fmt.Errorf("browser %s: %w", cmd.Action, ctx.Err())
		case <-expired:
			c.queued.Add(-1)
			return browser.Result{}, timedOut(cmd.Action, budget)
		}
	}

	select {
	case <-cl.ready:
		answered = true
		return toResult(cmd.Action, &cl.res)
	case <-c.done:
		// A result that arrived just before the close still counts.
		select {
		case <-cl.ready:
			answered = true
			return toResult(cmd.Action, &cl.res)
		default:
		}
		return browser.Result{}, c.disconnected(cmd.Action)
	case <-ctx.Done():
		return browser.Result{}, fmt.Errorf("browser %s: %w", cmd.Action, ctx.Err())
	case <-expired:
		return browser.Result{}, timedOut(cmd.Action, budget)
	}
}

// call is a command waiting for its result. deliver fills in res and then
// signals ready, exactly once per registration. Calls are pooled: a
// command otherwise allocates a channel and its buffer every time.
type call struct {
	ready chan struct{} // buffered, so deliver never blocks
	res   wire.BrowserResult
}

var calls = sync.Pool{New: func() any { return &call{ready: make(chan struct{}, 1)} }}

func getCall() *call { return calls.Get().(*call) }

func putCall(cl *call) {
	cl.res = wire.BrowserResult{} // let the result's strings go
	calls.Put(cl)
}

// endCall unregisters a call and returns it to the pool. A call that
// stopped waiting (timeout, cancellation, closed connection) may already
// have been taken by deliver, whose signal then comes at once: it is
// waited for, so the next user of the call does not see it.
func (c *conn) endCall(id string, cl *call, answered bool) {
	if !answered && !c.removePending(id) {
		<-cl.ready
	}
	putCall(cl)
}

// timers holds stopped command timers for reuse: a timer per command is
// otherwise three allocations on the hot path.
var timers sync.Pool

func getTimer(d time.Duration) *time.Timer {
	if t, ok := timers.Get().(*time.Timer); ok {
		t.Reset(d)
		return t
	}
	return time.NewTimer(d)
}

// putTimer stops t and keeps it for reuse. Since Go 1.23 a stopped timer
// delivers nothing more; the drain covers GODEBUG=asynctimerchan=1, under
// which a timer that fired keeps its value in the channel.
func putTimer(t *time.Timer) {
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
	timers.Put(t)
}

// commandIDs hands out the random bytes of command ids from a buffer
// refilled a few hundred bytes at a time, rather than asking the kernel
// for sixteen bytes per command.
var commandIDs struct {
	sync.Mutex
	buf  [32 * 16]byte
	next int
}

// newCommandID returns a random (version 4) UUID. Ids only match results
// to commands on an authenticated connection; they are not secrets.
func newCommandID() string {
	var u uuid.UUID
	commandIDs.Lock()
	if commandIDs.next == 0 {
		// crypto/rand.Read never fails (it crashes the program instead).
		rand.Read(commandIDs.buf[:])
	}
	copy(u[:], commandIDs.buf[commandIDs.next:])
	commandIDs.next = (commandIDs.next + len(u)) % len(commandIDs.buf)
	commandIDs.Unlock()
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u.String()
}

// disconnected is the error of a command whose connection went away; call
// it only once c.done is closed.
func (c *conn) disconnected(action browser.Action) error {
	return fmt.Errorf("browser %s: %w (%s)", action, browser.ErrDisconnected, c.closeReason)
}

func timedOut(action browser.Action, budget time.Duration) error {
	return fmt.Errorf("browser %s: %w (no result within %v; the command may still complete in the browser)", action, browser.ErrTimeout, budget)
}

// addPending registers a command id; false if the connection is closing.
func (c *conn) addPending(id string, cl *call) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.pending[id] = cl
	return true
}

// removePending unregisters a command id, reporting whether it was still
// registered (no result taken for it).
func (c *conn) removePending(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.pending[id]
	if ok {
		delete(c.pending, id)
	}
	return ok
}

// deliver hands a result to the call waiting for it. Results nobody waits
// for (duplicates, late ones after a timeout, made-up ids) are dropped:
// exactly one outcome per call. So is everything once the connection is
// closing.
func (c *conn) deliver(r *wire.BrowserResult) {
	c.mu.Lock()
	cl, ok := c.pending[r.ID]
	if ok && !c.closing {
		delete(c.pending, r.ID)
	} else {
		ok = false
	}
	c.mu.Unlock()
	if !ok {
		c.log.Debug("bridge: ignored a browser_result nobody waits for (duplicate, late or unknown id)", "id", r.ID)
		return
	}
	cl.res = *r
	cl.ready <- struct{}{} // buffered, and this is its only send
}

// toResult converts a wire result, applying the contract's meaning of each
// field for the action.
func toResult(action browser.Action, r *wire.BrowserResult) (browser.Result, error) {
	if r.Error != "" {
		return browser.Result{}, &browser.CommandError{Action: action, Message: r.Error}
	}
	out := browser.Result{URL: r.URL, Title: r.Title}
	if r.Content != nil {
		out.Content = *r.Content
	} else if action == browser.Read {
		out.Missing = true
	}
	if action == browser.Screenshot || r.Image != "" {
		img, mime, err := decodeImage(r.Image, r.ImageMIMEType)
		if err != nil {
			return browser.Result{}, fmt.Errorf("browser %s: %w", action, err)
		}
		out.Image, out.ImageMIME = img, mime
	}
	if len(r.Tabs) > 0 {
		out.Tabs = make([]browser.Tab, len(r.Tabs))
		for i, t := range r.Tabs {
			out.Tabs[i] = browser.Tab{Index: t.Index, URL: t.URL, Title: t.Title, Active: t.Active, Controlled: t.Controlled}
		}
	}
	if len(r.Events) > 0 {
		out.Events = make([]string, len(r.Events))
		for i, e := range r.Events {
			out.Events[i] = string(e)
		}
	}
	return out, nil
}

// decodeImage decodes a screenshot. chrome.tabs.captureVisibleTab yields a
// data URL, so an extension that forwards it unchanged is accepted too.
func decodeImage(image, mime string) ([]byte, string, error) {
	if image == "" {
		return nil, "", errors.New("the extension returned a screenshot without an image")
	}
	if rest, ok := strings.CutPrefix(image, "data:"); ok {
		meta, data, found := strings.Cut(rest, ",")
		if !found || !strings.HasSuffix(meta, ";base64") {
			return nil, "", errors.New("the screenshot is a data URL without base64 data")
		}
		if mime == "" {
			mime = strings.TrimSuffix(meta, ";base64")
		}
		image = data
	}
	img := make([]byte, base64.StdEncoding.DecodedLen(len(image)))
	n, err := base64.StdEncoding.Decode(img, []byte(image))
	if err != nil {
		return nil, "", fmt.Errorf("the screenshot's image is not valid base64 (%v); the extension must send standard base64", err)
	}
	if mime == "" {
		mime = "image/png"
	}
	return img[:n], mime, nil
}

// Navigate opens url in the controlled tab.
func (s *Server) Navigate(ctx context.Context, url string) (browser.Result, error) {
	return s.Do(ctx, browser.Command{Action: browser.Navigate, URL: url})
}

// Click clicks the first element matching selector.
func (s *Server) Click(ctx context.Context, selector string) (browser.Result, error) {
	return s.Do(ctx, browser.Command{Action: browser.Click, Selector: selector})
}

// Type replaces the value of the element matching selector with text,
// pressing Enter afterwards when pressEnter is set.
func (s *Server) Type(ctx context.Context, selector, text string, pressEnter bool) (browser.Result, error) {
	return s.Do(ctx, browser.Command{Action: browser.Type, Selector: selector, Text: text, PressEnter: pressEnter})
}

// Read returns the text of the element matching selector (the whole body
// when selector is empty); Result.Missing reports a selector that matched
// nothing.
func (s *Server) Read(ctx context.Context, selector string) (browser.Result, error) {
	return s.Do(ctx, browser.Command{Action: browser.Read, Selector: selector})
}

// Screenshot captures the visible part of the controlled tab.
func (s *Server) Screenshot(ctx context.Context) (browser.Result, error) {
	return s.Do(ctx, browser.Command{Action: browser.Screenshot})
}

// Tabs lists the open tabs.
func (s *Server) Tabs(ctx context.Context) ([]browser.Tab, error) {
	res, err := s.Do(ctx, browser.Command{Action: browser.Tabs})
	return res.Tabs, err
}
