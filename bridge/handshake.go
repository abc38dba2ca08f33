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
	select {
	case s.handshakes <- struct{}{}:
	default:
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
		closeSocket(ws, websocket.CloseGoingAway, "infer is shutting down", s.opts.WriteTimeout, 0)
		return
	}
	hello, ref := s.readHello(ws)
	s.untrackHandshake(ws)
	if ref.reason != "" {
		if s.isClosed() {
			ref = refusal{code: websocket.CloseGoingAway, reason: "infer is shutting down"}
		} else {
			// The version is the caller's text: logged, but not at any length.
			s.reject(ref.kind, ref.reason, "remote", r.RemoteAddr, "extension_version", fmt.Sprintf("%.64q", hello.ExtensionVersion))
		}
		if ref.kind == refusedToken {
			// Past a few failures the answer is held back, which slows a
			// guessing loop down. The socket trades its handshake slot for
			// a penalty slot, so that the real extension can still get in
			// meanwhile.
			if d := s.limiter.failure(time.Now()); d > 0 && s.enterPenalty() {
				defer s.leavePenalty()
				releaseSlot()
				s.pause(d)
			}
		}
		closeSocket(ws, ref.code, ref.reason, s.opts.WriteTimeout, s.opts.CloseGrace)
		return
	}
	releaseSlot()
	c, ok := s.activate(ws, hello.ExtensionVersion)
	if !ok {
		closeSocket(ws, websocket.CloseGoingAway, "infer is shutting down", s.opts.WriteTimeout, s.opts.CloseGrace)
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
}

func helloRefusal(code int, reason string) refusal {
	return refusal{code: code, reason: reason, kind: refusedHello}
}

// readHello reads and checks the first frame.
func (s *Server) readHello(ws *websocket.Conn) (wire.BrowserHello, refusal) {
	var hello wire.BrowserHello
	ws.SetReadLimit(s.opts.HandshakeReadLimit)
	ws.SetReadDeadline(time.Now().Add(s.opts.HelloTimeout))
	typ, data, err := ws.ReadMessage()
	if err != nil {
		var ne net.Error
		switch {
		case errors.Is(err, websocket.ErrReadLimit):
			return hello, helloRefusal(websocket.CloseMessageTooBig, fmt.Sprintf("first frame is larger than %d bytes", s.opts.HandshakeReadLimit))
		case errors.As(err, &ne) && ne.Timeout():
			return hello, helloRefusal(websocket.ClosePolicyViolation, fmt.Sprintf("no browser_hello within %v", s.opts.HelloTimeout))
		default:
			return hello, helloRefusal(websocket.ClosePolicyViolation, "connection ended before browser_hello: "+err.Error())
		}
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
		return h, refusal{websocket.ClosePolicyViolation, "browser_hello carries no token: paste the token from browser_use.yaml into the extension's options", refusedToken}
	}
	if !s.tokenMatches(h.Token) {
		return h, refusal{websocket.ClosePolicyViolation, "an extension tried a wrong token: copy extension.token from browser_use.yaml into its options (`infer pair` shows it)", refusedToken}
	}
	ws.SetReadDeadline(time.Time{})
	return h, refusal{}
}

// tokenMatches compares digests in constant time: comparing the tokens
// themselves would leak their length through timing.
func (s *Server) tokenMatches(token string) bool {
	got := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(got[:], s.tokenDigest[:]) == 1
}

func (s *Server) trackHandshake(ws *websocket.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.handshaking[ws] = struct{}{}
	return true
}

func (s *Server) untrackHandshake(ws *websocket.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.handshaking, ws)
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
// code that says why it was refused.
func closeSocket(ws *websocket.Conn, code int, reason string, writeTimeout, grace time.Duration) {
	ws.WriteControl(websocket.CloseMessage, closeMessage(code, reason), time.Now().Add(writeTimeout))
	if grace > 0 {
		nc := ws.NetConn()
		nc.SetReadDeadline(time.Now().Add(grace))
		io.Copy(io.Discard, nc)
	}
	ws.Close()
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
