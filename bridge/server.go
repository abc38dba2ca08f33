// Package bridge is infer's end of the browser-extension bridge
// (docs/protocol.md): a loopback WebSocket server that
// authenticates the extension, keeps one live connection, drives the
// person's browser through it (the browser.Driver the agent's tools call) and
// routes the side panel's frames to a Panel. It also serves the artifacts
// directory and a token-protected /status for `infer pair`.
//
// The bridge decides no policy: what a panel frame means is the Panel's
// business, and what a browser result means is the caller's.
package bridge

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/session/browser"
)

// Server is a running bridge. Create it with Listen, run it with Serve, and
// stop it with Close (or by cancelling Serve's context). It implements
// browser.Driver.
type Server struct {
	opts Options
	// panel is Options.Panel, or the Hooks' one given to ServeWith; set
	// before the first connection is accepted and never after.
	panel    Panel
	log      *slog.Logger
	ln       net.Listener
	port     int
	http     *http.Server
	upgrader websocket.Upgrader
	// tokenDigest is the token's SHA-256; SetToken swaps it while the
	// server runs.
	tokenDigest atomic.Pointer[[sha256.Size]byte]
	// handshakes is a semaphore: one slot per socket still waiting for its
	// browser_hello.
	handshakes chan struct{}
	// penalty is a semaphore of its own for failed authentications whose
	// answer is being held back (see enterPenalty).
	penalty chan struct{}
	// closing is a semaphore for refused sockets waiting for their peer's
	// close reply (see enterClosing).
	closing  chan struct{}
	limiter  *authLimiter
	refusals *refusalLog
	stopping chan struct{} // closed when Close starts
	notify   *notifier

	mu          sync.Mutex
	closed      bool
	live        *conn
	conns       map[*conn]struct{}
	handshaking map[*websocket.Conn]*pendingHello
	status      browser.Status
	rejection   *rejection
	// replaced are the times the live connection was replaced by a newer
	// one within the last FlapWindow, oldest first; flapTimer clears
	// Status.Flapping once a window passes without one. flapPending
	// counts the flapTimer callbacks that are scheduled or running.
	replaced    []time.Time
	flapTimer   *time.Timer
	flapPending sync.WaitGroup

	// wg counts every request handler and connection goroutine, so Close
	// can wait for all of them.
	wg        sync.WaitGroup
	closeOnce sync.Once
	finished  chan struct{} // closed when Close has finished
}

// rejection is the latest refused connection attempt.
type rejection struct {
	at     time.Time
	reason string
	kind   string
}

var _ browser.Driver = (*Server)(nil)

// Listen validates opts and binds 127.0.0.1:<opts.Port>. Nothing is served
// until Serve is called. The bridge never listens on other interfaces: the
// extension is always on the same machine, and the token is the only other
// thing standing between a web page and the person's browser.
func Listen(opts Options) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp4", net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.Port)))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("bridge: port %d on 127.0.0.1 is already in use (is another infer running?); "+
				"pick another port with extension.port in browser_use.yaml or --port, and the same port in the extension's options: %w",
				opts.Port, err)
		}
		return nil, fmt.Errorf("bridge: listen on 127.0.0.1:%d: %w", opts.Port, err)
	}
	s := &Server{
		opts:        opts,
		log:         opts.Logger,
		ln:          ln,
		port:        ln.Addr().(*net.TCPAddr).Port,
		handshakes:  make(chan struct{}, opts.MaxPendingHandshakes),
		penalty:     make(chan struct{}, opts.MaxPendingHandshakes),
		closing:     make(chan struct{}, opts.MaxPendingHandshakes),
		limiter:     newAuthLimiter(opts),
		refusals:    newRefusalLog(opts.Logger, defaultRefusalInterval),
		stopping:    make(chan struct{}),
		conns:       make(map[*conn]struct{}),
		handshaking: make(map[*websocket.Conn]*pendingHello),
		status:      browser.Status{State: browser.Waiting, Since: time.Now()},
		finished:    make(chan struct{}),
	}
	s.ln = newOwnerListener(ln, s)
	digest := sha256.Sum256([]byte(opts.Token))
	s.tokenDigest.Store(&digest)
	s.upgrader = websocket.Upgrader{
		HandshakeTimeout: opts.HelloTimeout,
		// Origin is checked before the upgrade, with the contract's rules;
		// gorilla's default (same origin) would refuse every extension.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	s.http = &http.Server{
		Handler: s,
		// A socket that dribbles its request, announces a body it never
		// sends (net/http waits for an unread body before answering), or
		// keeps a keep-alive connection open without a next request holds
		// a goroutine and a file descriptor; these bound all three. A
		// hijacked WebSocket is not affected: gorilla clears the
		// deadlines, and the connection sets its own.
		ReadHeaderTimeout: opts.HelloTimeout,
		ReadTimeout:       opts.HelloTimeout,
		IdleTimeout:       opts.HelloTimeout,
		WriteTimeout:      opts.WriteTimeout,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	if opts.OnStatus != nil {
		s.notify = newNotifier(opts.OnStatus)
	}
	return s, nil
}

// Hooks are what a server reports to. ServeWith takes them, rather than
// Listen, because what receives them (the panel sync and the workspace)
// is built on the server's own browser driver: the server must exist
// first, and nothing is changed after it is built.
type Hooks struct {
	// Panel and OnStatus are as in Options, which they replace (give
	// OnStatus in one place only).
	Panel    Panel
	OnStatus func(browser.Status)
}

// Port is the TCP port the server listens on.
func (s *Server) Port() int { return s.port }

// URL is the WebSocket address the extension dials.
func (s *Server) URL() string { return "ws://127.0.0.1:" + strconv.Itoa(s.port) + "/ws" }

// Serve answers requests until ctx is cancelled or Close is called, then
// shuts everything down and returns nil once no goroutine of the server is
// left. Any other return is the listener's failure. Call it once.
func (s *Server) Serve(ctx context.Context) error {
	return s.ServeWith(ctx, Hooks{Panel: s.opts.Panel})
}

// ServeWith is Serve reporting to h instead of Options' Panel and
// OnStatus. Call it (or Serve) once.
func (s *Server) ServeWith(ctx context.Context, h Hooks) error {
	s.mu.Lock()
	s.panel = h.Panel
	if h.OnStatus != nil && s.notify == nil && !s.closed {
		s.notify = newNotifier(h.OnStatus)
	}
	s.mu.Unlock()
	closedByCtx := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(closedByCtx)
		s.Close()
	})
	defer func() {
		if !stop() {
			<-closedByCtx
		}
	}()
	err := s.http.Serve(s.ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-s.finished
		return nil
	}
	s.Close()
	return fmt.Errorf("bridge: serve: %w", err)
}

// Close stops listening, closes every connection (pending browser commands
// fail with browser.ErrDisconnected) and waits for all of the server's
// goroutines. It is safe to call more than once and from several goroutines.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		close(s.stopping)
		s.mu.Lock()
		s.closed = true
		conns := make([]*conn, 0, len(s.conns))
		for c := range s.conns {
			conns = append(conns, c)
		}
		for ws := range s.handshaking {
			// Unblocks the hello read; the handler sees the server closing.
			ws.SetReadDeadline(time.Now())
		}
		if s.flapTimer != nil && s.flapTimer.Stop() {
			s.flapPending.Done()
		}
		s.mu.Unlock()

		s.http.Close()
		s.ln.Close() // Serve may never have run, leaving the listener to us
		for _, c := range conns {
			c.drainAndShutdown(websocket.CloseGoingAway, "infer is shutting down")
		}
		s.wg.Wait()
		s.flapPending.Wait()
		s.refusals.close()
		s.mu.Lock()
		notify := s.notify
		s.mu.Unlock()
		if notify != nil {
			notify.close()
		}
		close(s.finished)
	})
	<-s.finished
	return nil
}

// ServeHTTP routes the server's three endpoints. Every request must name
// the server by its loopback address: a page on an attacker's domain that
// resolves to 127.0.0.1 (DNS rebinding) still sends its own Host.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.enter() {
		http.Error(w, "infer is shutting down", http.StatusServiceUnavailable)
		return
	}
	defer s.wg.Done()
	if !s.hostAllowed(r.Host) {
		// The Host is the caller's text: logged, but not at any length.
		s.refusals.refused(refusedHost, "bridge: refused a request with a foreign Host header", fmt.Sprintf("Host %.100q is not this server", r.Host),
			"host", clip(r.Host, 100), "path", clip(r.URL.Path, 100), "remote", r.RemoteAddr)
		http.Error(w, "forbidden: Host must be 127.0.0.1:"+strconv.Itoa(s.port)+" or localhost:"+strconv.Itoa(s.port), http.StatusForbidden)
		return
	}
	switch path := r.URL.Path; {
	case path == "/ws":
		s.handleWS(w, r)
	case path == "/status":
		s.handleStatus(w, r)
	case len(path) > len(artifactsPrefix) && path[:len(artifactsPrefix)] == artifactsPrefix:
		s.handleArtifact(w, r)
	default:
		http.NotFound(w, r)
	}
}

// enter registers a request handler with wg unless the server is closing.
// Registering under mu, where Close sets closed, guarantees no Add races the
// final Wait.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	return true
}

// hostAllowed accepts exactly the two names of the loopback listener.
func (s *Server) hostAllowed(host string) bool {
	p := strconv.Itoa(s.port)
	return host == "127.0.0.1:"+p || host == "localhost:"+p
}

// Status describes the extension connection now.
func (s *Server) Status() browser.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// liveConn is the authenticated connection, or nil.
func (s *Server) liveConn() *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live
}

// setStatusLocked changes the status and queues it for OnStatus; s.mu must
// be held, which keeps notifications in the order the changes happened.
func (s *Server) setStatusLocked(change func(*browser.Status)) {
	change(&s.status)
	if s.notify != nil {
		s.notify.push(s.status)
	}
}

// reject records a refused connection attempt, so that `infer pair` and
// the status bar can say what went wrong (the real extension shows a wrong
// token only as a failed connection, retrying forever). kind groups
// refusals for the log, which sums up a flood instead of writing a line
// per attempt; OnStatus hears of a refusal only when its reason differs
// from the one the status already shows.
func (s *Server) reject(kind, reason string, attrs ...any) {
	s.refusals.refused(kind, "bridge: refused an extension connection: "+reason, reason, attrs...)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejection = &rejection{at: time.Now(), reason: reason, kind: kind}
	if s.status.Reason != reason {
		s.setStatusLocked(func(st *browser.Status) { st.Reason = reason })
	}
}

// clip cuts a caller's text to at most n runes for a log attribute. It is
// not quoted: the log handler quotes and escapes what it must, and quoting
// here too would show the quotes escaped ("\"1.12.1\"").
func clip(text string, n int) string {
	i := 0
	for at := range text {
		if i == n {
			return text[:at] + "…"
		}
		i++
	}
	return text
}

// SetToken makes token the one an extension must present from now on, and
// closes every connection authenticated with the previous one: after
// `infer init --rotate-token`, the old token must stop working at once,
// not when infer restarts. The same token again changes nothing.
func (s *Server) SetToken(token string) error {
	if token == "" {
		return errors.New("bridge: the new token is empty: set extension.token in browser_use.yaml (`infer init --rotate-token` makes one)")
	}
	digest := sha256.Sum256([]byte(token))
	if old := s.tokenDigest.Swap(&digest); *old == digest {
		return nil
	}
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	s.log.Info("bridge: the pairing token changed; connections that used the old one are closed", "connections", len(conns))
	for _, c := range conns {
		c.shutdown(websocket.ClosePolicyViolation, TokenChangedReason)
	}
	return nil
}

// TokenChangedReason is why SetToken closed a connection.
const TokenChangedReason = "the pairing token changed (infer init --rotate-token): paste the new token into the extension's options"

// noteReplacementLocked records that the live connection was replaced at
// now; s.mu must be held.
func (s *Server) noteReplacementLocked(now time.Time) {
	s.replaced = append(s.replaced, now)
	if s.flapTimer != nil && s.flapTimer.Stop() {
		s.flapTimer.Reset(s.opts.FlapWindow)
		return
	}
	// No timer, or its callback has started (it counts itself down).
	s.flapPending.Add(1)
	s.flapTimer = time.AfterFunc(s.opts.FlapWindow, s.endFlapping)
}

// flappingLocked is how many replacements fall within the flap window
// before now, if that is enough to call it flapping, else 0; s.mu must be
// held.
func (s *Server) flappingLocked(now time.Time) int {
	keep := 0
	for keep < len(s.replaced) && now.Sub(s.replaced[keep]) >= s.opts.FlapWindow {
		keep++
	}
	s.replaced = s.replaced[keep:]
	if len(s.replaced) < s.opts.FlapReplacements {
		return 0
	}
	return len(s.replaced)
}

// endFlapping runs a window after the latest replacement and clears
// Status.Flapping when the replacements have stopped.
func (s *Server) endFlapping() {
	defer s.flapPending.Done()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.status.Flapping == 0 || s.flappingLocked(time.Now()) > 0 {
		return
	}
	s.log.Info("bridge: connections stopped replacing each other; browser commands flow again", "quiet_for", s.opts.FlapWindow.String())
	s.setStatusLocked(func(st *browser.Status) { st.Flapping = 0 })
}

// FlapWarning says in a sentence what n replacements within window mean,
// that browser commands are paused meanwhile, and what to do about it, for
// the log, the browser pane, `infer pair` and `infer doctor` (which cuts it
// at the first ": " into the problem and the fix).
func FlapWarning(n int, window time.Duration) string {
	return fmt.Sprintf("two browsers with the extension and this token keep replacing each other (%d connections replaced in %s); "+
		"browser commands are paused until one of them is closed: %s", n, windowText(window), flapFix)
}

// flapFix is what the person can do about flapping.
const flapFix = "disconnect the extension in one of them, or give it another infer's port and token"

// flappingError is Do's error while the status reports flapping.
func (s *Server) flappingError(action browser.Action, n int) error {
	within := windowText(s.opts.FlapWindow)
	return fmt.Errorf("browser %s: %w (%d connections replaced in %s; commands resume once %s pass without a replacement): %s",
		action, browser.ErrFlapping, n, within, within, flapFix)
}

// windowText is the flap window as people write it: 30s, 2m, 1h.
func windowText(window time.Duration) string {
	switch {
	case window >= time.Hour && window%time.Hour == 0:
		return fmt.Sprintf("%dh", window/time.Hour)
	case window >= time.Minute && window%time.Minute == 0:
		return fmt.Sprintf("%dm", window/time.Minute)
	}
	return window.String()
}
