package bridge

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
)

// maxRetainedReadBuffer is the largest read buffer a connection keeps
// between frames; a bigger one (after a screenshot) is let go so an idle
// connection does not pin megabytes.
const maxRetainedReadBuffer = 4 << 20

// keepaliveFrame is sent as-is every KeepaliveInterval.
var keepaliveFrame = wire.MustEncode(wire.Keepalive{})

// conn is one authenticated extension connection. Its reader is the HTTP
// handler's goroutine (serve). Frames go out through writeLoop, fed
// through out, except that a browser command may be written by the
// goroutine sending it when nothing else is being written or waits to be
// (writeDirect). Everything else talks to it through out and done.
//
// Gorilla allows one writer at a time besides WriteControl and Close; wmu
// provides that: every data frame, from writeLoop or a direct write, is
// written with wmu held, and pings and the close frame use WriteControl.
type conn struct {
	srv        *Server
	ws         *websocket.Conn
	log        *slog.Logger
	version    string
	out        chan []byte
	done       chan struct{} // closed when the connection starts closing
	writerDone chan struct{}

	wmu sync.Mutex // held while a data frame is written
	// scratch is writeDirect's buffer for encoding commands; wmu held.
	scratch []byte
	// queued counts frames handed to out (or about to be) that writeLoop
	// has not written yet. A direct write happens only when it is zero,
	// under wmu, so it never overtakes a frame queued before it: that
	// keeps each sender's frames in order and the ack first.
	queued atomic.Int64

	closeOnce   sync.Once
	closeCode   int
	closeReason string // set before done is closed, read only after
	// drain asks the writer to flush queued frames before the close frame,
	// all before closeBy.
	drain   bool
	closeBy time.Time

	mu      sync.Mutex
	closing bool
	pending map[string]*call
	pingSeq uint64
	pingAt  time.Time

	buf bytes.Buffer // the reader's frame buffer, reused between frames
	// peerClosed is set by the reader when its loop ended on the peer's
	// close frame: after it the peer sends nothing more.
	peerClosed bool
}

// activate makes an authenticated socket the live connection, replacing
// (and closing) the previous one, queues the ack and starts the writer.
// token is the one the hello presented: checked again under s.mu, so that
// a connection authenticated just before SetToken cannot slip past the
// close of the old token's connections. It reports false, having refused
// nothing itself, when the server is closing or the token has changed
// (stale tells which).
func (s *Server) activate(ws *websocket.Conn, version, token string) (c *conn, ok, stale bool) {
	c = &conn{
		srv:        s,
		ws:         ws,
		log:        s.log.With("remote", ws.RemoteAddr().String(), "extension_version", version),
		version:    version,
		out:        make(chan []byte, s.opts.SendQueue),
		done:       make(chan struct{}),
		writerDone: make(chan struct{}),
		pending:    make(map[string]*call),
	}
	// The ack goes first in the queue, before the connection is published
	// as live: a command sent the moment the status says "connected" must
	// not overtake it. The queue is empty, so this never blocks.
	c.queued.Add(1)
	c.out <- wire.MustEncode(wire.BrowserHelloAck{})
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, false, false
	}
	if !s.tokenMatches(token) {
		s.mu.Unlock()
		return nil, false, true
	}
	old := s.live
	s.live = c
	s.conns[c] = struct{}{}
	now := time.Now()
	wasFlapping := s.status.Flapping
	if old != nil {
		s.noteReplacementLocked(now)
	}
	flapping := s.flappingLocked(now)
	s.setStatusLocked(func(st *browser.Status) {
		*st = browser.Status{State: browser.Connected, ExtensionVersion: version, Since: now, Flapping: flapping}
	})
	// The handler calling us holds a wg count, so this Add cannot race
	// Close's Wait.
	s.wg.Add(1)
	s.mu.Unlock()

	switch {
	case flapping > 0 && wasFlapping == 0:
		c.log.Warn("bridge: "+FlapWarning(flapping, s.opts.FlapWindow), "replaced", flapping, "within", s.opts.FlapWindow.String())
	case flapping > 0:
		// Said once when it started; a line per turn would bury the log.
		c.log.Debug("bridge: extension connected")
	default:
		c.log.Info("bridge: extension connected")
	}
	if old != nil {
		old.shutdown(websocket.CloseNormalClosure, "replaced by a newer connection")
	}
	go c.writeLoop()
	return c, true, false
}

// serve is the connection's read loop. It returns once the connection is
// finished and its writer has stopped.
func (c *conn) serve() {
	defer c.finish()
	c.ws.SetReadLimit(c.srv.opts.MaxFrameBytes)
	c.ws.SetPongHandler(c.onPong)
	c.extendReadDeadline()
	if p := c.srv.panel; p != nil {
		c.callPanel("connected", func() { p.Connected(c, c.version) })
	}
	for {
		typ, r, err := c.ws.NextReader()
		if err != nil {
			c.readEnded(err)
			return
		}
		if typ != websocket.TextMessage {
			c.log.Debug("bridge: ignored a binary frame")
			continue
		}
		c.buf.Reset()
		if _, err := c.buf.ReadFrom(r); err != nil {
			c.readEnded(err)
			return
		}
		c.handle(c.buf.Bytes())
		if c.buf.Cap() > maxRetainedReadBuffer {
			c.buf = bytes.Buffer{}
		}
	}
}

// readEnded closes the connection for the error that ended the read
// loop, noting whether it was the peer's close frame.
func (c *conn) readEnded(err error) {
	var ce *websocket.CloseError
	c.peerClosed = errors.As(err, &ce)
	c.shutdown(c.readFailure(err))
}

// finish releases the socket after the read loop ends. The writer is
// waited for first so its close frame goes out. If the peer's close frame
// has been read, the handshake is complete and TCP is closed at once: a
// browser waits for the server to close first (RFC 6455 §7.1.1), so
// waiting for it to hang up would only burn the close grace. Otherwise
// whatever the peer still sends is drained until it hangs up or the
// CloseGrace deadline set by shutdown passes, because closing a socket
// with unread data makes the kernel reset it, and the peer may then never
// see the close code.
func (c *conn) finish() {
	<-c.writerDone
	if !c.peerClosed {
		io.Copy(io.Discard, c.ws.NetConn())
	}
	c.ws.Close()
	c.srv.mu.Lock()
	delete(c.srv.conns, c)
	c.srv.mu.Unlock()
}

// readFailure turns the error that ended the read loop into a close code
// and a reason for the log and the status.
func (c *conn) readFailure(err error) (int, string) {
	var ce *websocket.CloseError
	var ne net.Error
	switch {
	case errors.As(err, &ce):
		reason := fmt.Sprintf("the extension closed the connection (code %d", ce.Code)
		if ce.Text != "" {
			reason += ": " + ce.Text
		}
		return websocket.CloseNormalClosure, reason + ")"
	case errors.Is(err, websocket.ErrReadLimit):
		return websocket.CloseMessageTooBig, fmt.Sprintf("the extension sent a frame larger than %d bytes", c.srv.opts.MaxFrameBytes)
	case errors.As(err, &ne) && ne.Timeout():
		return websocket.CloseGoingAway, fmt.Sprintf("no answer to pings for %v: the connection is half-open", c.srv.opts.PingInterval+c.srv.opts.PongTimeout)
	default:
		return websocket.CloseGoingAway, "connection lost: " + err.Error()
	}
}

// shutdown starts closing the connection: commands waiting on it fail at
// once, the writer sends a close frame, and the reader gets CloseGrace to
// see the peer's reply. It is idempotent; the first reason wins.
func (c *conn) shutdown(code int, reason string) { c.close(code, reason, false) }

// drainAndShutdown closes like shutdown, but first writes the frames
// already queued (within the close grace): when infer itself stops, the
// panel should still get the end of the run it watched.
func (c *conn) drainAndShutdown(code int, reason string) { c.close(code, reason, true) }

func (c *conn) close(code int, reason string, drain bool) {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closing = true
		c.drain = drain
		deadline := time.Now().Add(c.srv.opts.CloseGrace)
		c.closeBy = deadline
		c.closeCode, c.closeReason = code, reason
		nc := c.ws.NetConn()
		nc.SetReadDeadline(deadline)
		// Bounds a write already in progress to a peer that stopped
		// reading, so closing never waits a whole WriteTimeout.
		nc.SetWriteDeadline(deadline)
		c.mu.Unlock()
		close(c.done)
		c.srv.dropLive(c, reason)
	})
}

// dropLive records that c went away, if it was the live connection (a
// replaced connection is no longer news).
func (s *Server) dropLive(c *conn, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live != c {
		level := slog.LevelInfo
		if s.status.Flapping > 0 {
			level = slog.LevelDebug
		}
		c.log.Log(context.Background(), level, "bridge: closed an extension connection", "reason", reason)
		return
	}
	c.log.Info("bridge: extension disconnected", "reason", reason)
	s.live = nil
	// Flapping outlives a disconnection: the other browser is about to
	// dial again.
	flapping := s.flappingLocked(time.Now())
	s.setStatusLocked(func(st *browser.Status) {
		*st = browser.Status{State: browser.Disconnected, ExtensionVersion: c.version, Since: time.Now(), Reason: reason, Flapping: flapping}
	})
}

func (c *conn) isClosing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closing
}

// extendReadDeadline gives the peer until the next ping is due plus
// PongTimeout to show it is alive; without it a half-open socket (a laptop
// that slept, a killed browser) would look connected forever.
func (c *conn) extendReadDeadline() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closing {
		c.ws.SetReadDeadline(time.Now().Add(c.srv.opts.PingInterval + c.srv.opts.PongTimeout))
	}
}

// onPong runs on the reader when a pong arrives.
func (c *conn) onPong(data string) error {
	c.extendReadDeadline()
	if len(data) != 8 {
		return nil
	}
	seq := binary.BigEndian.Uint64([]byte(data))
	c.mu.Lock()
	var rtt time.Duration
	if seq == c.pingSeq && !c.pingAt.IsZero() {
		rtt = time.Since(c.pingAt)
		c.pingAt = time.Time{}
	}
	c.mu.Unlock()
	if rtt > 0 {
		c.srv.setRTT(c, rtt)
	}
	return nil
}

// setRTT publishes a ping round trip of the live connection.
func (s *Server) setRTT(c *conn, rtt time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live == c {
		s.setStatusLocked(func(st *browser.Status) { st.RTT = rtt })
	}
}

// writeLoop is the connection's writer: frames from out, pings and
// keepalives, and finally the close frame.
func (c *conn) writeLoop() {
	defer c.srv.wg.Done()
	defer close(c.writerDone)
	opts := &c.srv.opts
	ping := time.NewTicker(opts.PingInterval)
	defer ping.Stop()
	keepalive := time.NewTicker(opts.KeepaliveInterval)
	defer keepalive.Stop()
	for {
		// Closing wins over queued work: nothing more is owed to a peer
		// that is being dropped.
		select {
		case <-c.done:
			c.endWriting()
			return
		default:
		}
		var err error
		select {
		case <-c.done:
			c.endWriting()
			return
		case b := <-c.out:
			c.wmu.Lock()
			err = c.writeText(b)
			c.queued.Add(-1)
			c.wmu.Unlock()
		case <-keepalive.C:
			c.wmu.Lock()
			err = c.writeText(keepaliveFrame)
			c.wmu.Unlock()
		case <-ping.C:
			err = c.writePing()
		}
		if err != nil {
			c.shutdown(websocket.CloseGoingAway, "write failed: "+err.Error())
		}
	}
}

// endWriting ends the writer: it flushes what is queued when the close
// asked for it (closeBy bounds that), then sends the close frame.
func (c *conn) endWriting() {
	c.mu.Lock()
	drain, by := c.drain, c.closeBy
	c.mu.Unlock()
	for drain {
		select {
		case b := <-c.out:
			c.wmu.Lock()
			c.ws.SetWriteDeadline(by)
			err := c.ws.WriteMessage(websocket.TextMessage, b)
			c.queued.Add(-1)
			c.wmu.Unlock()
			if err != nil {
				drain = false
			}
		default:
			drain = false
		}
	}
	c.writeClose()
}

// writeText writes one data frame; the caller holds wmu. (gorilla's
// SetWriteDeadline only records the time; each frame's write applies it.)
func (c *conn) writeText(b []byte) error {
	c.ws.SetWriteDeadline(time.Now().Add(c.srv.opts.WriteTimeout))
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

// writeDirect encodes and writes a command from the calling goroutine if
// the connection is idle: no frame being written and none waiting in out.
// It reports whether it wrote (or tried to: err is the write's failure);
// when it did not, the caller queues the command as usual. Skipping the
// hand-off to writeLoop saves a goroutine switch per command, and encoding
// into the connection's scratch buffer saves an allocation.
//
// Frames stay in order because a direct write happens only when queued is
// zero, and it is bounded by WriteTimeout like writeLoop's. It does not
// wait for wmu: a busy connection means writeLoop or another direct writer
// is at work, and queueing behind them costs nothing extra. While it
// writes, the caller does not watch its context; a write only blocks when
// the peer has stopped reading and the socket buffers are full, and such a
// peer also stops answering pings, which closes the connection.
func (c *conn) writeDirect(cmd wire.BrowserCommand) (bool, error) {
	if !c.wmu.TryLock() {
		return false, nil
	}
	defer c.wmu.Unlock()
	if c.queued.Load() != 0 {
		return false, nil
	}
	select {
	case <-c.done:
		return false, nil // the queueing path reports the closed connection
	default:
	}
	c.scratch = wire.AppendCommand(c.scratch[:0], cmd)
	err := c.writeText(c.scratch)
	if cap(c.scratch) > maxRetainedScratch {
		c.scratch = nil
	}
	return true, err
}

// maxRetainedScratch is the largest command buffer a connection keeps (a
// type command can carry a lot of text).
const maxRetainedScratch = 64 << 10

// writePing sends a ping carrying a sequence number, so its pong can be
// matched to the time it left.
func (c *conn) writePing() error {
	c.mu.Lock()
	c.pingSeq++
	c.pingAt = time.Now()
	var payload [8]byte
	binary.BigEndian.PutUint64(payload[:], c.pingSeq)
	c.mu.Unlock()
	return c.ws.WriteControl(websocket.PingMessage, payload[:], time.Now().Add(c.srv.opts.WriteTimeout))
}

func (c *conn) writeClose() {
	err := c.ws.WriteControl(websocket.CloseMessage, closeMessage(c.closeCode, c.closeReason), time.Now().Add(c.srv.opts.CloseGrace))
	if err != nil && !errors.Is(err, websocket.ErrCloseSent) {
		c.log.Debug("bridge: could not send the close frame", "err", err)
	}
}

// handle decodes and routes one text frame. A bad frame is logged and
// dropped: one buggy message must not cost the person their connection.
func (c *conn) handle(data []byte) {
	if r, ok := wire.DecodeResult(data); ok {
		// The usual frame, decoded in one pass (which takes no frame with
		// unknown fields); deliver drops it if the connection is closing.
		c.deliver(&r)
		return
	}
	if c.isClosing() {
		return
	}
	f, err := wire.Decode(data)
	if err != nil {
		c.log.Warn("bridge: dropped a malformed frame from the extension", "err", err, "bytes", len(data))
		return
	}
	c.logUnknownFields(data, f.FrameType())
	switch f := f.(type) {
	case wire.BrowserResult:
		c.deliver(&f)
	case wire.Keepalive:
	case wire.BrowserHello:
		c.log.Debug("bridge: ignored a repeated browser_hello")
	case wire.Unknown:
		c.log.Debug("bridge: ignored a frame of unknown type", "type", f.Type)
	default:
		c.toPanel(f)
	}
}

// logUnknownFields notes, at debug level, the fields of a frame of type
// typ that this version does not know.
func (c *conn) logUnknownFields(data []byte, typ string) {
	if c.log.Enabled(context.Background(), slog.LevelDebug) {
		if extra := wire.UnknownFields(data); len(extra) > 0 {
			c.log.Debug("bridge: ignored unknown fields of a frame", "type", typ, "fields", extra)
		}
	}
}
