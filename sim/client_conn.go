package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/bridge/wire"
)

// closeGrace is how long a closing connection waits for infer's close
// reply before dropping the socket.
const closeGrace = time.Second

// writeTimeout bounds each write to infer.
const writeTimeout = 10 * time.Second

// maxIdleWorkers is how many of a connection's command goroutines may
// wait for work at once; the rest end when their command is done, so a
// burst of slow commands does not leave goroutines behind for the life of
// the connection.
const maxIdleWorkers = 8

// maxKeptResultBuffer is the largest result buffer a worker keeps for its
// next command; a bigger one (after a screenshot) is let go so idle
// workers do not pin megabytes.
const maxKeptResultBuffer = 64 << 10

// maxKeptReadBuffer is the largest frame buffer a connection keeps
// between frames.
const maxKeptReadBuffer = 64 << 10

// clientConn is one authenticated connection of a Client.
//
// Its goroutines take turns at reading (gorilla allows one reader at a
// time): the one reading when a browser command arrives passes the read
// role on, to an idle worker or to a new goroutine, and runs the command
// itself. Commands therefore run concurrently and answer in any order, as
// the real extension's do, while the command that just arrived starts
// without waiting for another goroutine to be scheduled. A worker whose
// command is done waits for the read role again. Writes are serialized by
// a mutex (gorilla allows one writer at a time) and made by whoever has
// something to send; a simulator has no keepalive schedule that would need
// a writer goroutine of its own.
type clientConn struct {
	client     *Client
	ws         *websocket.Conn
	log        *slog.Logger
	done       chan struct{}   // closed when the connection starts closing
	cmdCtx     context.Context // cancelled when the connection ends
	cancelCmds context.CancelFunc

	// rbuf holds the frame being handled; only the reader uses it.
	rbuf bytes.Buffer
	// readRole passes the read role to an idle worker waiting on it.
	readRole chan struct{}
	// readEnded is closed by the reader that sees the socket fail.
	readEnded chan struct{}
	idle      atomic.Int32   // workers waiting on readRole
	workers   sync.WaitGroup // goroutines started by passReading

	closeOnce sync.Once
	closeErr  error // why it ended; set before done is closed
	// detached is set, under the Client's mu, once the connection starts
	// closing; attach then refuses it.
	detached bool
	// greeted is set, under the Client's mu, by the connection's first
	// mode frame. infer sends a stale panel the active conversation's
	// snapshot before that frame, unasked; until it, a snapshot is never
	// taken for the answer to a resume or new_session.
	greeted bool

	wmu sync.Mutex // serializes data frames

	mu   sync.Mutex
	seen recentIDs // command ids already taken on
}

func newClientConn(c *Client, ws *websocket.Conn) *clientConn {
	ctx, cancel := context.WithCancel(context.Background())
	return &clientConn{
		client:     c,
		ws:         ws,
		log:        c.log,
		done:       make(chan struct{}),
		cmdCtx:     ctx,
		cancelCmds: cancel,
		readRole:   make(chan struct{}),
		readEnded:  make(chan struct{}),
		seen:       newRecentIDs(4096),
	}
}

// run serves the connection until it ends or ctx does, and returns why it
// ended once all of its goroutines have stopped. Its goroutine is the
// first reader.
func (cc *clientConn) run(ctx context.Context) error {
	defer afterFunc(ctx, func() {
		cc.shutdown(fmt.Errorf("stopped: %w", ctx.Err()))
	})()
	cc.work(nil)
	<-cc.readEnded
	cc.ws.Close()
	cc.workers.Wait()
	return cc.closeErr
}

// work is the life of one of the connection's goroutines, which starts
// out holding the read role: it reads frames until one is a browser
// command, hands the read role on and runs the command, then waits to
// read again. It returns when the socket fails (if it is the reader
// then), when the connection closes, or when enough workers are idle
// already. buf is a result buffer to reuse (nil: none yet).
func (cc *clientConn) work(buf []byte) {
	for {
		cmd, ok := cc.readUntilCommand()
		if !ok {
			return
		}
		cc.passReading()
		buf = cc.execute(cmd, buf)
		if !cc.awaitReading() {
			return
		}
	}
}

// readUntilCommand reads and handles frames until a browser command needs
// running; ok is false once the socket has failed.
func (cc *clientConn) readUntilCommand() (job pendingCommand, ok bool) {
	for {
		typ, r, err := cc.ws.NextReader()
		if err == nil && typ == websocket.TextMessage {
			cc.rbuf.Reset()
			_, err = cc.rbuf.ReadFrom(r)
		}
		if err != nil {
			cc.shutdown(err)
			close(cc.readEnded)
			return pendingCommand{}, false
		}
		if typ != websocket.TextMessage {
			continue
		}
		job, ok := cc.handle(cc.rbuf.Bytes())
		if cc.rbuf.Cap() > maxKeptReadBuffer {
			cc.rbuf = bytes.Buffer{}
		}
		if ok {
			return job, true
		}
	}
}

// passReading gives the read role to an idle worker, or to a new
// goroutine when none is waiting. The caller holds the role.
func (cc *clientConn) passReading() {
	select {
	case cc.readRole <- struct{}{}:
	default:
		cc.workers.Add(1)
		go func() {
			defer cc.workers.Done()
			cc.work(nil)
		}()
	}
}

// awaitReading waits until the worker is given the read role (true), or
// the connection closes or enough workers wait already (false).
func (cc *clientConn) awaitReading() bool {
	if cc.idle.Add(1) > maxIdleWorkers {
		cc.idle.Add(-1)
		return false
	}
	defer cc.idle.Add(-1)
	select {
	case <-cc.readRole:
		return true
	case <-cc.done:
		return false
	}
}

// afterFunc is context.AfterFunc whose stop function also waits for f to
// finish if it already started, so no goroutine outlives its owner.
func afterFunc(ctx context.Context, f func()) (stop func()) {
	finished := make(chan struct{})
	stopAfter := context.AfterFunc(ctx, func() {
		defer close(finished)
		f()
	})
	return func() {
		if !stopAfter() {
			<-finished
		}
	}
}

// shutdown starts closing: browser commands are cancelled, waiting panel
// calls fail, and a close frame says goodbye; the reader then has
// closeGrace to see infer's reply. The first cause wins.
func (cc *clientConn) shutdown(cause error) {
	cc.closeOnce.Do(func() {
		cc.stop(cause)
		cc.ws.NetConn().SetReadDeadline(time.Now().Add(closeGrace))
		// WriteControl may run alongside a data write; gorilla
		// serializes the two.
		cc.ws.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseGoingAway, "infer-sim going away"),
			time.Now().Add(closeGrace))
	})
}

// abort drops the socket without a close frame, as when the browser kills
// a service worker: infer sees the TCP connection end.
func (cc *clientConn) abort(cause error) {
	cc.closeOnce.Do(func() {
		cc.stop(cause)
		cc.ws.NetConn().Close()
	})
}

// stop is the common part of shutdown and abort. closeOnce held.
func (cc *clientConn) stop(cause error) {
	cc.closeErr = cause
	// Detached before done is closed: a call that fails through done may
	// be followed at once by another, which must then see no connection
	// (ErrNotConnected) rather than this closing one.
	cc.client.detach(cc)
	cc.cancelCmds()
	close(cc.done)
}

// write sends one text frame. ctx is checked before writing; the write
// itself is bounded by writeTimeout.
func (cc *clientConn) write(ctx context.Context, b []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cc.wmu.Lock()
	defer cc.wmu.Unlock()
	select {
	case <-cc.done:
		return ErrDisconnected
	default:
	}
	cc.ws.SetWriteDeadline(time.Now().Add(writeTimeout))
	if err := cc.ws.WriteMessage(websocket.TextMessage, b); err != nil {
		// Close already sent means the reader met infer's close frame
		// and answered it: the reader ends the connection with infer's
		// code (1009 for a frame too large), which is the real cause.
		if !errors.Is(err, websocket.ErrCloseSent) {
			cc.shutdown(fmt.Errorf("write: %w", err))
		}
		return ErrDisconnected
	}
	cc.client.tapFrame(ExtToSrv, b)
	return nil
}

// pendingCommand is a browser command waiting to run, with when it arrived.
type pendingCommand struct {
	wire.BrowserCommand
	received time.Time
}

// handle routes one frame from infer, and returns a browser command that
// needs running. Malformed frames are dropped, like the real extension
// does, so tests can inject them without losing the connection.
// data is only valid during the call: decoding copies what it keeps.
func (cc *clientConn) handle(data []byte) (pendingCommand, bool) {
	f, err := wire.Decode(data)
	if _, keepalive := f.(wire.Keepalive); !keepalive {
		cc.tapReceived(data)
	}
	if err != nil {
		cc.log.Warn("sim: dropped a malformed frame from infer", "err", err)
		return pendingCommand{}, false
	}
	switch f := f.(type) {
	case wire.Keepalive:
		return pendingCommand{}, false
	case wire.BrowserCommand:
		return cc.takeCommand(f)
	}
	if _, ok := f.(wire.Mode); ok {
		// Even a profile that ignores mode frames learns from the first
		// one that the greeting is over (see clientConn.greeted).
		cc.client.mu.Lock()
		cc.greeted = true
		cc.client.mu.Unlock()
	}
	if p := cc.client.Profile(); p.Ignored(f.FrameType()) {
		cc.log.Debug("sim: the profile ignores this frame", "type", f.FrameType(), "profile", p.String())
		return pendingCommand{}, false
	}
	if u, ok := f.(wire.Unknown); ok {
		cc.log.Debug("sim: ignored a frame of unknown type", "type", u.Type)
		return pendingCommand{}, false
	}
	cc.client.publish(cc, f)
	return pendingCommand{}, false
}

// tapReceived shows a received frame to the Tap, in a copy of its own
// since data is reused for the next frame.
func (cc *clientConn) tapReceived(data []byte) {
	if t := cc.client.opts.Tap; t != nil {
		t.Frame(SrvToExt, bytes.Clone(data))
	}
}

// takeCommand publishes a browser command and decides whether it runs:
// not when the profile ignores commands, not when its id was seen
// before, and not when a fault drops the connection instead.
func (cc *clientConn) takeCommand(cmd wire.BrowserCommand) (pendingCommand, bool) {
	if p := cc.client.Profile(); p.Ignored(wire.BrowserCommand{}.FrameType()) {
		cc.log.Debug("sim: the profile ignores this frame", "type", wire.BrowserCommand{}.FrameType(), "profile", p.String())
		return pendingCommand{}, false
	}
	job := pendingCommand{BrowserCommand: cmd, received: time.Now()}
	cc.mu.Lock()
	dup := !cc.seen.add(cmd.ID)
	cc.mu.Unlock()
	run := true
	if dup {
		cc.log.Warn("sim: ignored a repeated browser_command id", "id", cmd.ID)
		run = false
	} else if faults := cc.client.opts.Faults; faults.disconnectNow() {
		cc.log.Warn("sim: fault: dropping the connection instead of answering", "id", cmd.ID, "action", cmd.Action)
		cc.abort(fmt.Errorf("fault: disconnected after %d commands", faults.DisconnectAfter))
		run = false
	}
	if cc.client.listening() {
		cc.client.publish(cc, cmd)
	}
	return job, run
}

// execute runs a command and sends its result, encoded into buf when buf
// may be reused; it returns the buffer to reuse next time.
func (cc *clientConn) execute(cmd pendingCommand, buf []byte) []byte {
	res := cc.runCommand(cmd)
	reuse := cc.client.opts.Tap == nil // a Tap may keep the bytes it is shown
	if !reuse {
		buf = nil
	}
	b, err := wire.AppendResult(buf[:0], res)
	if err != nil {
		b = wire.MustEncode(wire.BrowserResult{ID: cmd.ID, Error: "infer-sim could not encode the result: " + err.Error()})
	}
	cc.deliver(cmd, b)
	if !reuse || cap(b) > maxKeptResultBuffer {
		return nil
	}
	return b
}

// deliver sends a command's encoded result, applying the result-level
// faults: late, dropped, preceded by a malformed frame, or sent twice.
func (cc *clientConn) deliver(cmd pendingCommand, b []byte) {
	faults := cc.client.opts.Faults
	if faults != nil && faults.Late > 0 {
		t := time.NewTimer(time.Until(cmd.received.Add(faults.Late)))
		select {
		case <-t.C:
		case <-cc.cmdCtx.Done():
			t.Stop()
			return
		}
	}
	if faults.roll(faults.dropP()) {
		cc.log.Warn("sim: fault: dropped a browser_result", "id", cmd.ID, "action", cmd.Action)
		return
	}
	if faults.roll(faults.malformedP()) {
		cc.log.Warn("sim: fault: sending a malformed frame before the result", "id", cmd.ID)
		if err := cc.write(cc.cmdCtx, malformedResult(cmd.ID)); err != nil {
			return
		}
	}
	if err := cc.write(cc.cmdCtx, b); err != nil {
		cc.log.Debug("sim: dropped a browser_result: connection closed", "id", cmd.ID)
		return
	}
	if faults.roll(faults.duplicateP()) {
		cc.log.Warn("sim: fault: sending the browser_result twice", "id", cmd.ID)
		cc.write(cc.cmdCtx, b)
	}
}

// runCommand asks the Browser, always producing exactly one result with
// the command's id, even when the Browser panics.
func (cc *clientConn) runCommand(cmd pendingCommand) (res wire.BrowserResult) {
	timeout := cc.client.opts.CommandTimeout
	if fixed := cc.client.Profile().FixedCommandTimeout; fixed > 0 {
		timeout = fixed // the extension ignores timeout_ms
	} else if cmd.TimeoutMS > 0 {
		timeout = time.Duration(cmd.TimeoutMS) * time.Millisecond
	}
	ctx := newCommandContext(cc.cmdCtx, cmd.received.Add(timeout))
	defer ctx.release()
	defer func() {
		if r := recover(); r != nil {
			cc.log.Error("sim: the browser panicked", "action", cmd.Action, "panic", r)
			res = wire.BrowserResult{Error: fmt.Sprintf("infer-sim browser failed: %v", r)}
		}
		res.ID = cmd.ID
	}()
	b := cc.client.opts.Browser
	if b == nil {
		return wire.BrowserResult{Error: "infer-sim has no browser attached"}
	}
	return b.Do(ctx, cmd.BrowserCommand)
}

// errOf maps a closed connection to the panel call's error.
func (cc *clientConn) errOf() error {
	if cc.closeErr != nil && !errors.Is(cc.closeErr, context.Canceled) {
		return fmt.Errorf("%w: %v", ErrDisconnected, cc.closeErr)
	}
	return ErrDisconnected
}

// recentIDs remembers the last n ids seen, so a repeated command id is
// caught without the memory growing for as long as the connection lives.
type recentIDs struct {
	set  map[string]struct{}
	ring []string
	next int
}

func newRecentIDs(n int) recentIDs {
	return recentIDs{set: make(map[string]struct{}, n), ring: make([]string, n)}
}

// add records id and reports whether it was new.
func (r *recentIDs) add(id string) bool {
	if _, ok := r.set[id]; ok {
		return false
	}
	if old := r.ring[r.next]; old != "" {
		delete(r.set, old)
	}
	r.ring[r.next] = id
	r.next = (r.next + 1) % len(r.ring)
	r.set[id] = struct{}{}
	return true
}

// commandContext is the context a Browser gets for one command: done when
// the command's deadline passes or the connection ends. Most browsers
// answer without ever waiting on Done, so the timer and the link to the
// connection's context behind Done are set up only when first needed;
// until then Err reads the clock and the parent. That saves a timer and a
// registration with the parent on every command.
type commandContext struct {
	parent   context.Context
	deadline time.Time

	mu     sync.Mutex
	ctx    context.Context // the real context, once something needs it
	cancel context.CancelFunc
}

func newCommandContext(parent context.Context, deadline time.Time) *commandContext {
	return &commandContext{parent: parent, deadline: deadline}
}

// real returns the context.WithDeadline this one stands for, making it on
// first use.
func (c *commandContext) real() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		c.ctx, c.cancel = context.WithDeadline(c.parent, c.deadline)
	}
	return c.ctx
}

// release ends the command, like the cancel function of WithDeadline: a
// browser that kept the context sees it cancelled.
func (c *commandContext) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx == nil {
		c.ctx = spent
		return
	}
	c.cancel()
}

// spent is the context of a command that ended before anything asked for
// its Done: cancelled, and owning no timer.
var spent = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// Deadline implements context.Context.
func (c *commandContext) Deadline() (time.Time, bool) { return c.deadline, true }

// Done implements context.Context.
func (c *commandContext) Done() <-chan struct{} { return c.real().Done() }

// Value implements context.Context. It goes through the real context so
// that context.Cause and derived contexts see the deadline.
func (c *commandContext) Value(key any) any { return c.real().Value(key) }

// Err implements context.Context. Before Done exists nobody can see it
// close, so the clock and the parent answer consistently with the Done
// that would be made now. Once either says the command is over, the real
// context is made (already done, for the same reason), so that Err keeps
// giving that answer, as the context contract requires.
func (c *commandContext) Err() error {
	c.mu.Lock()
	ctx := c.ctx
	c.mu.Unlock()
	if ctx != nil {
		return ctx.Err()
	}
	if c.parent.Err() == nil && time.Now().Before(c.deadline) {
		return nil
	}
	return c.real().Err()
}
