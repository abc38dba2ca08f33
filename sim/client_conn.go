package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/bridge/wire"
)

// closeGrace is how long a closing connection waits for infer's close
// reply before dropping the socket.
const closeGrace = time.Second

// writeTimeout bounds each write to infer.
const writeTimeout = 10 * time.Second

// clientConn is one authenticated connection of a Client: one reader
// (run), writes serialized by a mutex (gorilla allows one writer at a
// time), and a goroutine per browser command in flight. Writing from the
// command's goroutine rather than through a writer goroutine saves a
// hand-off per result; a simulator has no keepalive schedule that would
// need a writer of its own.
type clientConn struct {
	client     *Client
	ws         *websocket.Conn
	log        *slog.Logger
	done       chan struct{}   // closed when the connection starts closing
	cmdCtx     context.Context // cancelled when the connection ends
	cancelCmds context.CancelFunc
	cmds       sync.WaitGroup

	closeOnce sync.Once
	closeErr  error // why it ended; set before done is closed

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
		seen:       newRecentIDs(4096),
	}
}

// run serves the connection until it ends or ctx does, and returns why it
// ended once all of its goroutines have stopped.
func (cc *clientConn) run(ctx context.Context) error {
	defer afterFunc(ctx, func() {
		cc.shutdown(fmt.Errorf("stopped: %w", ctx.Err()))
	})()
	for {
		typ, data, err := cc.ws.ReadMessage()
		if err != nil {
			cc.shutdown(err)
			break
		}
		if typ == websocket.TextMessage {
			cc.handle(data)
		}
	}
	cc.ws.Close()
	cc.cmds.Wait()
	return cc.closeErr
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
	cc.cancelCmds()
	close(cc.done)
	cc.client.detach(cc)
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
		cc.shutdown(fmt.Errorf("write: %w", err))
		return ErrDisconnected
	}
	cc.client.tapFrame(ExtToSrv, b)
	return nil
}

// handle routes one frame from infer. Malformed frames are dropped, like
// the real extension does, so tests can inject them without losing the
// connection.
func (cc *clientConn) handle(data []byte) {
	f, err := wire.Decode(data)
	if _, keepalive := f.(wire.Keepalive); !keepalive {
		cc.client.tapFrame(SrvToExt, data)
	}
	if err != nil {
		cc.log.Warn("sim: dropped a malformed frame from infer", "err", err)
		return
	}
	if p := cc.client.Profile(); p.Ignored(f.FrameType()) {
		cc.log.Debug("sim: the profile ignores this frame", "type", f.FrameType(), "profile", p.String())
		return
	}
	switch f := f.(type) {
	case wire.Keepalive:
		return
	case wire.Unknown:
		cc.log.Debug("sim: ignored a frame of unknown type", "type", f.Type)
		return
	case wire.BrowserCommand:
		cc.startCommand(f)
	}
	cc.client.publish(cc, f)
}

// startCommand runs a browser command on its own goroutine: the real
// extension runs commands concurrently and answers in any order.
func (cc *clientConn) startCommand(cmd wire.BrowserCommand) {
	cc.mu.Lock()
	dup := !cc.seen.add(cmd.ID)
	cc.mu.Unlock()
	if dup {
		cc.log.Warn("sim: ignored a repeated browser_command id", "id", cmd.ID)
		return
	}
	faults := cc.client.opts.Faults
	if faults.disconnectNow() {
		cc.log.Warn("sim: fault: dropping the connection instead of answering", "id", cmd.ID, "action", cmd.Action)
		cc.abort(fmt.Errorf("fault: disconnected after %d commands", faults.DisconnectAfter))
		return
	}
	received := time.Now()
	cc.cmds.Add(1)
	go func() {
		defer cc.cmds.Done()
		res := cc.runCommand(cmd)
		b, err := wire.Encode(res)
		if err != nil {
			b = wire.MustEncode(wire.BrowserResult{ID: cmd.ID, Error: "infer-sim could not encode the result: " + err.Error()})
		}
		cc.deliver(cmd, received, b, faults)
	}()
}

// deliver sends a command's encoded result, applying the result-level
// faults: late, dropped, preceded by a malformed frame, or sent twice.
func (cc *clientConn) deliver(cmd wire.BrowserCommand, received time.Time, b []byte, faults *Faults) {
	if faults != nil && faults.Late > 0 {
		t := time.NewTimer(time.Until(received.Add(faults.Late)))
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
func (cc *clientConn) runCommand(cmd wire.BrowserCommand) (res wire.BrowserResult) {
	timeout := cc.client.opts.CommandTimeout
	if fixed := cc.client.Profile().FixedCommandTimeout; fixed > 0 {
		timeout = fixed // the extension ignores timeout_ms
	} else if cmd.TimeoutMS > 0 {
		timeout = time.Duration(cmd.TimeoutMS) * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(cc.cmdCtx, timeout)
	defer cancel()
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
	return b.Do(ctx, cmd)
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
