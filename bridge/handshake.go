package bridge

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/bridge/wire"
)

// extensionSchemes are the Origin schemes of browser extensions. Web pages
// can open WebSockets to 127.0.0.1 too, but always send their own Origin.
var extensionSchemes = map[string]bool{
	"chrome-extension":     true,
	"moz-extension":        true,
	"safari-web-extension": true,
}

// originAllowed accepts no Origin (a non-browser client such as infer-sim)
// or an extension origin; "null", web origins and anything unparsable are
// refused.
func originAllowed(r *http.Request) bool {
	values := r.Header.Values("Origin")
	switch len(values) {
	case 0:
		return true
	case 1:
	default:
		return false
	}
	u, err := url.Parse(values[0])
	if err != nil {
		return false
	}
	return extensionSchemes[u.Scheme] && u.Host != "" && u.User == nil
}

// handleWS authenticates one socket and, on success, serves it until it
// closes. It runs on the request's goroutine, which becomes the
// connection's reader.
func (s *Server) handleWS(w http.ResponseWriter, r *http.Request) {
	if !originAllowed(r) {
		origin := r.Header.Get("Origin")
		// The origin is the caller's text: shown, but not at any length.
		s.reject(refusedOrigin, fmt.Sprintf("origin %.100q is not a browser extension", origin), "remote", r.RemoteAddr)
		http.Error(w, "forbidden: only browser extensions may connect", http.StatusForbidden)
		return
	}
	if !s.takeHandshakeSlot(r) {
		s.reject(refusedBusy, fmt.Sprintf("more than %d connections waiting to authenticate", s.opts.MaxPendingHandshakes), "remote", r.RemoteAddr)
		w.Header().Set("Retry-After", "1")
		http.Error(w, "too many unauthenticated connections; retry later", http.StatusServiceUnavailable)
		return
	}
	slotHeld := true
	releaseSlot := func() {
		if slotHeld {
			slotHeld = false
			<-s.handshakes
		}
	}
	defer releaseSlot()

	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		// Upgrade has already answered with an HTTP error.
		s.log.Debug("bridge: websocket upgrade failed", "remote", r.RemoteAddr, "err", err)
		return
	}
	if !s.trackHandshake(ws) {
		closeSocket(ws, websocket.CloseGoingAway, "infer is shutting down", s.opts.WriteTimeout, 0, drainRaw)
		return
	}
	hello, ref := s.readHello(ws)
	evicted := s.untrackHandshake(ws)
	// The socket no longer waits for its hello, so its slot goes back now
	// rather than after the close below: a peer that never answers the
	// close frame must not keep a newcomer out for the close grace.
	releaseSlot()
	if ref.reason != "" {
		grace := s.opts.CloseGrace
		switch {
		case s.isClosed():
			ref = refusal{code: websocket.CloseGoingAway, reason: "infer is shutting down", after: ref.after}
		case evicted:
			// A socket that said nothing while others waited: no
			// failed authentication, and no grace, since it is not
			// listening.
			ref = refusal{code: websocket.CloseTryAgainLater, reason: fmt.Sprintf("no browser_hello before a newer connection needed the slot (%d connections were waiting to authenticate)", s.opts.MaxPendingHandshakes), kind: refusedBusy, after: ref.after}
			s.reject(ref.kind, ref.reason, "remote", r.RemoteAddr)
			grace = 0
		default:
			// The version is the caller's text: logged, but not at any length.
			s.reject(ref.kind, ref.reason, "remote", r.RemoteAddr, "extension_version", clip(hello.ExtensionVersion, 64))
		}
		if ref.kind == refusedToken {
			// Past a few failures the answer is held back, which slows a
			// guessing loop down. The socket waits in a penalty slot, not
			// a handshake slot, so that the real extension can still get
			// in meanwhile.
			if d := s.limiter.failure(time.Now()); d > 0 && s.enterPenalty() {
				defer s.leavePenalty()
				s.pause(d)
			}
		}
		// Closing sockets no longer hold handshake slots, so they are
		// bounded by slots of their own: past that many, a refused socket
		// is dropped without waiting for its peer.
		if grace > 0 && s.enterClosing() {
			defer s.leaveClosing()
		} else {
			grace = 0
		}
		closeSocket(ws, ref.code, ref.reason, s.opts.WriteTimeout, grace, ref.after)
		return
	}
	c, ok, stale := s.activate(ws, hello.ExtensionVersion, hello.Token)
	if stale {
		// The token changed between the hello's check and now.
		s.reject(refusedToken, TokenChangedReason, "remote", r.RemoteAddr)
		grace := time.Duration(0)
		if s.enterClosing() {
			defer s.leaveClosing()
			grace = s.opts.CloseGrace
		}
		closeSocket(ws, websocket.ClosePolicyViolation, TokenChangedReason, s.opts.WriteTimeout, grace, awaitCloseFrame)
		return
	}
	if !ok {
		closeSocket(ws, websocket.CloseGoingAway, "infer is shutting down", s.opts.WriteTimeout, s.opts.CloseGrace, awaitCloseFrame)
		return
	}
	c.serve()
}

// refusal says why a hello was refused: the close code, a reason for the
// log, the status and the peer (never containing the presented token), and
// the kind of refusal. The zero value means the hello was accepted.
type refusal struct {
	code   int
	reason string
	kind   string
	// after says how to wait for the peer once the close frame is sent.
	after closeWait
}

// closeWait is how a closing socket waits for its peer before TCP is
// closed.
type closeWait int

const (
	// awaitCloseFrame reads frames until the peer's close frame (or its
	// connection end); the peer's data is read through gorilla, which
	// can still read.
	awaitCloseFrame closeWait = iota
	// drainRaw discards raw bytes until the peer hangs up: gorilla's
	// reader has failed, so it cannot tell where a close frame is.
	drainRaw
	// peerHasClosed means the peer's close frame was read already.
	peerHasClosed
)

func helloRefusal(code int, reason string) refusal {
	return refusal{code: code, reason: reason, kind: refusedHello}
}

// readHello reads and checks the first frame, by the deadline
// trackHandshake set.
func (s *Server) readHello(ws *websocket.Conn) (wire.BrowserHello, refusal) {
	var hello wire.BrowserHello
	ws.SetReadLimit(s.opts.HandshakeReadLimit)
	typ, data, err := ws.ReadMessage()
	if err != nil {
		var ne net.Error
		var ce *websocket.CloseError
		var ref refusal
		switch {
		case errors.Is(err, websocket.ErrReadLimit):
			ref = helloRefusal(websocket.CloseMessageTooBig, fmt.Sprintf("first frame is larger than %d bytes", s.opts.HandshakeReadLimit))
		case errors.As(err, &ne) && ne.Timeout():
			ref = helloRefusal(websocket.ClosePolicyViolation, fmt.Sprintf("no browser_hello within %v", s.opts.HelloTimeout))
		default:
			ref = helloRefusal(websocket.ClosePolicyViolation, "connection ended before browser_hello: "+err.Error())
		}
		// After a read error gorilla reads nothing more: what is left
		// is drained raw, unless the error was the peer's close frame,
		// after which nothing more comes.
		ref.after = drainRaw
		if errors.As(err, &ce) {
			ref.after = peerHasClosed
		}
		return hello, ref
	}
	if typ != websocket.TextMessage {
		return hello, helloRefusal(websocket.ClosePolicyViolation, "first frame is binary, not a browser_hello")
	}
	f, err := wire.Decode(data)
	if err != nil {
		return hello, helloRefusal(websocket.ClosePolicyViolation, "malformed browser_hello: "+err.Error())
	}
	h, ok := f.(wire.BrowserHello)
	if !ok {
		return hello, helloRefusal(websocket.ClosePolicyViolation, fmt.Sprintf("first frame is %.64q, not browser_hello", f.FrameType()))
	}
	if h.Token == "" {
		return h, refusal{code: websocket.ClosePolicyViolation, reason: "browser_hello carries no token: paste the token from browser_use.yaml into the extension's options", kind: refusedToken}
	}
	if !s.tokenMatches(h.Token) {
		return h, refusal{code: websocket.ClosePolicyViolation, reason: "an extension tried a wrong token: copy extension.token from browser_use.yaml into its options (`infer pair` shows it)", kind: refusedToken}
	}
	ws.SetReadDeadline(time.Time{})
	return h, refusal{}
}

// tokenMatches compares digests in constant time: comparing the tokens
// themselves would leak their length through timing.
func (s *Server) tokenMatches(token string) bool {
	got := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(got[:], s.tokenDigest.Load()[:]) == 1
}

// pendingHello is a socket waiting for its browser_hello.
type pendingHello struct {
	since   time.Time
	evicted bool // a newer connection took its slot; its read is cut short
}

// evictWait bounds how long a new connection waits for the slot of the
// socket it evicted. The evicted socket's handler gives the slot back as
// soon as its read is cut, so this is only a backstop against another
// newcomer taking the slot first.
const evictWait = time.Second

// takeHandshakeSlot takes a handshake slot for a new upgrade request. When
// none is free, the socket that has waited longest for its hello is
// evicted and its slot handed on. Without eviction, any local process
// holding MaxPendingHandshakes silent sockets open would keep the real
// extension out (503) until the hello timeout, and could do so forever by
// opening new ones as the old ones time out. The real extension sends its
// hello as soon as the upgrade completes, so it is never the oldest for
// long. It reports false (answer 503) when nothing can be evicted: every
// slot belongs to a socket still being upgraded or already evicted for
// another newcomer.
func (s *Server) takeHandshakeSlot(r *http.Request) bool {
	select {
	case s.handshakes <- struct{}{}:
		return true
	default:
	}
	if !s.evictOldestHandshake() {
		return false
	}
	t := time.NewTimer(evictWait)
	defer t.Stop()
	select {
	case s.handshakes <- struct{}{}:
		return true
	case <-t.C:
	case <-s.stopping:
	case <-r.Context().Done():
	}
	return false
}

// evictOldestHandshake cuts short the hello read of the socket that has
// waited longest and reports whether there was one to evict.
func (s *Server) evictOldestHandshake() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	var oldest *websocket.Conn
	var p *pendingHello
	for ws, q := range s.handshaking {
		if !q.evicted && (p == nil || q.since.Before(p.since)) {
			oldest, p = ws, q
		}
	}
	if oldest == nil {
		return false
	}
	p.evicted = true
	oldest.SetReadDeadline(time.Now())
	return true
}

func (s *Server) trackHandshake(ws *websocket.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	// The hello deadline is set here, under mu, so that an eviction or
	// Close, which cut it short under mu, can never be undone by it.
	ws.SetReadDeadline(time.Now().Add(s.opts.HelloTimeout))
	s.handshaking[ws] = &pendingHello{since: time.Now()}
	return true
}

// enterClosing takes a slot for a refused socket that waits up to
// CloseGrace for its peer's close reply, if one is free; leaveClosing
// gives it back.
func (s *Server) enterClosing() bool {
	select {
	case s.closing <- struct{}{}:
		return true
	default:
		return false
	}
}

func (s *Server) leaveClosing() { <-s.closing }

// untrackHandshake forgets ws and reports whether it was evicted.
func (s *Server) untrackHandshake(ws *websocket.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.handshaking[ws]
	delete(s.handshaking, ws)
	return p != nil && p.evicted
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// closeSocket sends a close frame and then waits up to grace for the peer
// to finish (its close reply, or its connection end) before dropping the
// TCP connection. Dropping it at once while the peer's data is still unread
// makes the kernel send a reset, and the peer may then never see the close
// code that says why it was refused. The close reply ends the wait: a
// browser keeps TCP open until the server closes it (RFC 6455 §7.1.1).
func closeSocket(ws *websocket.Conn, code int, reason string, writeTimeout, grace time.Duration, wait closeWait) {
	ws.WriteControl(websocket.CloseMessage, closeMessage(code, reason), time.Now().Add(writeTimeout))
	if grace > 0 && wait != peerHasClosed {
		nc := ws.NetConn()
		nc.SetReadDeadline(time.Now().Add(grace))
		if wait == drainRaw || !readUntilClose(ws) {
			io.Copy(io.Discard, nc)
		}
	}
	ws.Close()
}

// readUntilClose discards the peer's frames until its close frame, and
// reports whether that is what ended the reading (false: the read failed,
// and whatever is left must be drained raw).
func readUntilClose(ws *websocket.Conn) bool {
	for {
		if _, _, err := ws.NextReader(); err != nil {
			var ce *websocket.CloseError
			return errors.As(err, &ce)
		}
	}
}

// closeMessage formats a close frame, cutting the reason to the 123 bytes a
// control frame leaves for it, between words and never inside a rune.
func closeMessage(code int, reason string) []byte {
	const maxReason = 123
	if len(reason) > maxReason {
		// Cut at a space, with an ellipsis, so the extension shows a
		// sentence that visibly goes on rather than a word cut in half.
		const more = "…"
		cut := reason[:maxReason-len(more)+1]
		if i := strings.LastIndexByte(cut, ' '); i > 0 {
			cut = cut[:i]
		} else {
			cut = cut[:len(cut)-1]
		}
		for !utf8.ValidString(cut) {
			cut = cut[:len(cut)-1]
		}
		reason = cut + more
	}
	return websocket.FormatCloseMessage(code, reason)
}
