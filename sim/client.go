package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/bridge/wire"
)

// ClientOptions configures a Client. URL and Token are required.
type ClientOptions struct {
	// URL is the bridge's WebSocket address, e.g. ws://127.0.0.1:52789/ws.
	URL string
	// Token is sent in browser_hello.
	Token string
	// ReloadToken, if set, is asked for the token before every connection
	// attempt, so that a token rotated where it came from
	// (`infer init --rotate-token` rewriting browser_use.yaml) is followed
	// as a person would paste it into the real extension. An error or an
	// empty answer keeps the token in use.
	ReloadToken func() (string, error)
	// ExtensionVersion is sent in browser_hello (default: the profile's,
	// "infer-sim" for Contract).
	ExtensionVersion string
	// Origin is the Origin header of the upgrade request (default: the
	// profile's, "chrome-extension://infer-sim" for Contract, as a real
	// extension would send).
	Origin string
	// Profile is the extension to impersonate (nil: Contract).
	Profile *Profile
	// Faults makes the client misbehave on purpose (nil: none). The
	// client applies the result-level faults; wrap Browser with
	// Faults.Browser for the latency.
	Faults *Faults
	// Tap sees every frame on the wire (nil: none), for recording and
	// tracing. The token never reaches it.
	Tap Tap
	// Browser answers browser_command frames; nil answers each with an
	// error result.
	Browser Browser
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
	// MinBackoff and MaxBackoff bound the delay between reconnection
	// attempts (defaults 250ms and 10s); it doubles after each failure,
	// with jitter, and resets after a successful hello.
	MinBackoff, MaxBackoff time.Duration
	// HelloTimeout bounds dialling and waiting for browser_hello_ack
	// (default 10s).
	HelloTimeout time.Duration
	// CommandTimeout is a command's budget when it has no timeout_ms
	// (default 30s).
	CommandTimeout time.Duration
	// MaxFrameBytes caps frames from infer (default 64 MiB).
	MaxFrameBytes int64
	// OnFrame, if set, sees every frame from infer except keepalives and
	// unknown types, on the reader goroutine and in order; it must not
	// block.
	OnFrame func(wire.Frame)
}

func (o ClientOptions) withDefaults() (ClientOptions, error) {
	if o.URL == "" {
		return o, errors.New("sim: no bridge URL (e.g. ws://127.0.0.1:52789/ws)")
	}
	if o.Token == "" {
		return o, errors.New("sim: no token: pass --token, set INFER_TOKEN, or set extension.token in browser_use.yaml")
	}
	if o.Profile == nil {
		o.Profile = Contract
	}
	if o.ExtensionVersion == "" {
		o.ExtensionVersion = o.Profile.ExtensionVersion
	}
	if o.Origin == "" {
		o.Origin = o.Profile.Origin
	}
	if o.Faults != nil {
		if err := o.Faults.Validate(); err != nil {
			return o, err
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 250 * time.Millisecond
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(10*time.Second, o.MinBackoff)
	}
	if o.HelloTimeout <= 0 {
		o.HelloTimeout = 10 * time.Second
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = 30 * time.Second
	}
	if o.MaxFrameBytes <= 0 {
		o.MaxFrameBytes = 64 << 20
	}
	return o, nil
}

// ErrNotConnected is returned by panel calls made while the client has no
// authenticated connection.
var ErrNotConnected = errors.New("sim: not connected to infer")

// ErrDisconnected is returned by panel calls whose connection dropped
// before the answer arrived.
var ErrDisconnected = errors.New("sim: the connection to infer dropped before the answer arrived")

// RejectedError is infer refusing the simulated extension's hello, most
// often for a wrong token. The client keeps retrying, like the real
// extension, but says so clearly.
type RejectedError struct {
	Code   int
	Reason string
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("infer refused the connection (close code %d: %s); check the token (--token, INFER_TOKEN or extension.token in browser_use.yaml)", e.Code, e.Reason)
}

// UnreachableError is a connection attempt that never reached an infer
// bridge: nothing listens at the address (most often infer is not
// running, or runs on another port), or the server there is not infer and
// refused the WebSocket upgrade. The client keeps retrying, like the real
// extension, and says so once.
type UnreachableError struct {
	// URL is the address dialled.
	URL string
	// Status is the HTTP status of a server that answered but is not
	// infer's bridge; empty when no server answered at all.
	Status string
	// Err is the dialler's error.
	Err error
}

func (e *UnreachableError) Error() string {
	if e.Status != "" {
		return fmt.Sprintf("the server at %s is not infer's bridge (it answered HTTP %s to the WebSocket upgrade): is infer running on this port?", e.URL, e.Status)
	}
	return fmt.Sprintf("nothing answers at %s (%s): is infer running on this port?", e.URL, dialCause(e.Err))
}

// Unwrap gives errors.Is the dialler's error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// ConnectAdvice explains a client's LastError after it never connected:
// the error itself when it already says what to check, else the error and
// the settings to check.
func ConnectAdvice(err error) string {
	var unreachable *UnreachableError
	var rejected *RejectedError
	switch {
	case err == nil:
		return "no answer yet (is infer running? check --url/--port and --token)"
	case errors.As(err, &unreachable), errors.As(err, &rejected):
		return err.Error()
	}
	return err.Error() + " (is infer running? check --url/--port and --token)"
}

// dialCause is the short reason a TCP dial failed ("connection refused"),
// without the "dial tcp 127.0.0.1:1: connect:" that repeats the address.
func dialCause(err error) string {
	var se syscall.Errno
	if errors.As(err, &se) {
		return se.Error()
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	return err.Error()
}

// Client is a simulated browser extension: it dials infer's bridge, says
// hello, answers browser commands from its Browser, and offers the side
// panel's frames as Go calls. It reconnects with backoff until Run's
// context ends. Its methods are safe for concurrent use.
type Client struct {
	opts    ClientOptions
	optsErr error
	log     *slog.Logger
	running atomic.Bool
	kick    chan struct{} // wakes Run from a backoff wait or an offline spell

	mu          sync.Mutex
	token       string // the token the next hello sends
	reloadErr   string // the last ReloadToken error logged, said once
	cur         *clientConn
	up          chan struct{} // closed while a connection is authenticated
	subs        map[*Subscription]struct{}
	waiters     []*waiter
	connects    int
	lastErr     error
	offline     bool
	lastResumed string
	approvals   []wire.ApprovalRequest
}

// NewClient prepares a client; Run starts it. Invalid options are reported
// by Run.
func NewClient(opts ClientOptions) *Client {
	opts, err := opts.withDefaults()
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{
		opts:    opts,
		optsErr: err,
		log:     log,
		token:   opts.Token,
		kick:    make(chan struct{}, 1),
		up:      make(chan struct{}),
		subs:    make(map[*Subscription]struct{}),
	}
}

// Profile is the extension the client impersonates.
func (c *Client) Profile() *Profile {
	if c.opts.Profile == nil {
		return Contract
	}
	return c.opts.Profile
}

// Run connects and serves until ctx ends, reconnecting with exponential
// backoff and jitter whenever the connection fails or drops. It returns nil
// once ctx is done and every goroutine it started has stopped, or an error
// at once for invalid options or a second concurrent Run.
func (c *Client) Run(ctx context.Context) error {
	if c.optsErr != nil {
		return c.optsErr
	}
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("sim: client is already running")
	}
	defer c.running.Store(false)
	if f := c.opts.Faults; f != nil && f.ReconnectStorm > 0 {
		c.storm(ctx, f.ReconnectStorm)
	}
	failures := 0
	// reported is the last unreachable address's message already logged:
	// the retries behind it go to the debug log, so a sim started before
	// infer says so once, not every few seconds.
	reported := ""
	for {
		if !c.waitOnline(ctx) {
			return nil
		}
		authenticated, err := c.connectOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		c.mu.Lock()
		c.lastErr = err
		offline := c.offline
		c.mu.Unlock()
		if authenticated || offline {
			failures = 0
			reported = ""
		}
		if offline {
			continue // Disconnect: wait for Reconnect, then dial at once
		}
		delay := backoff(c.opts.MinBackoff, c.opts.MaxBackoff, failures)
		failures++
		var rejected *RejectedError
		var unreachable *UnreachableError
		switch {
		case errors.As(err, &rejected):
			c.log.Error("sim: "+rejected.Error(), "retry_in", delay)
		case errors.As(err, &unreachable) && unreachable.Error() == reported:
			c.log.Debug("sim: still nothing infer at this address; retrying", "retry_in", delay)
		case errors.As(err, &unreachable):
			reported = unreachable.Error()
			c.log.Warn("sim: "+reported+" Retrying in the background until it does.", "retry_in", delay)
		default:
			c.log.Info("sim: connection to infer ended; reconnecting", "err", err, "retry_in", delay)
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-c.kick:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			return nil
		}
	}
}

// waitOnline blocks while the client is held offline by Disconnect. It
// reports false when ctx ends first.
func (c *Client) waitOnline(ctx context.Context) bool {
	for {
		c.mu.Lock()
		offline := c.offline
		c.mu.Unlock()
		if !offline {
			return ctx.Err() == nil
		}
		select {
		case <-c.kick:
		case <-ctx.Done():
			return false
		}
	}
}

// Disconnect drops the connection at once, the way a browser drops a
// suspended service worker's socket, and keeps the client offline until
// Reconnect. Commands in flight are abandoned without results.
func (c *Client) Disconnect() {
	c.mu.Lock()
	c.offline = true
	cc := c.cur
	c.mu.Unlock()
	if cc != nil {
		cc.abort(errors.New("disconnected on purpose"))
	}
}

// Reconnect ends an offline spell begun by Disconnect: the client dials
// again at once. Use WaitConnected to wait for the new connection.
func (c *Client) Reconnect() {
	c.mu.Lock()
	c.offline = false
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// backoff is the delay before reconnection attempt n+1: min doubled n
// times, capped at max, then drawn from its upper half so that many
// clients restarted together do not reconnect in lockstep.
func backoff(minD, maxD time.Duration, n int) time.Duration {
	d := minD
	for i := 0; i < n && d < maxD; i++ {
		d *= 2
	}
	d = min(d, maxD)
	half := d / 2
	return half + rand.N(half+1)
}

// WaitConnected blocks until the client has an authenticated connection,
// or ctx ends.
func (c *Client) WaitConnected(ctx context.Context) error {
	c.mu.Lock()
	up := c.up
	c.mu.Unlock()
	select {
	case <-up:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Connected reports whether the client has an authenticated connection
// now.
func (c *Client) Connected() bool {
	return c.current() != nil
}

// Connects is how many times the client has authenticated so far.
func (c *Client) Connects() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.connects
}

// LastError is why the latest connection attempt failed or ended (nil
// before the first one ends). A *RejectedError means a refused hello.
func (c *Client) LastError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

// PendingApprovals are the approval requests the panel shows now, oldest
// first: a request leaves the list when infer resolves it or the panel
// answers it. Under a SingleApproval profile there is at most one.
func (c *Client) PendingApprovals() []wire.ApprovalRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]wire.ApprovalRequest(nil), c.approvals...)
}

// dial opens a socket and authenticates it.
func (c *Client) dial(ctx context.Context) (*websocket.Conn, error) {
	dialer := websocket.Dialer{HandshakeTimeout: c.opts.HelloTimeout}
	header := http.Header{}
	header.Set("Origin", c.opts.Origin)
	if t := c.opts.Tap; t != nil {
		shown := header.Clone()
		if u, err := url.Parse(c.opts.URL); err == nil {
			shown.Set("Host", u.Host)
		}
		t.Handshake(shown)
	}
	ws, resp, err := dialer.DialContext(ctx, c.opts.URL, header)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("dial %s: %w", c.opts.URL, err)
		}
		u := &UnreachableError{URL: c.opts.URL, Err: err}
		if resp != nil {
			resp.Body.Close()
			u.Status = resp.Status
		}
		return nil, u
	}
	if err := c.hello(ctx, ws); err != nil {
		ws.Close()
		return nil, err
	}
	return ws, nil
}

// connectOnce dials, authenticates and serves one connection until it
// ends. authenticated reports whether the hello was accepted.
func (c *Client) connectOnce(ctx context.Context) (authenticated bool, err error) {
	c.reloadToken()
	ws, err := c.dial(ctx)
	if err != nil {
		var rejected *RejectedError
		if errors.As(err, &rejected) {
			c.tapEvent("rejected")
		}
		return false, err
	}
	cc := newClientConn(c, ws)
	c.greet(ctx, cc)
	if !c.attach(cc) {
		// It failed while greeting; run only collects why.
		return true, cc.run(ctx)
	}
	c.tapEvent("connected")
	c.log.Info("sim: connected to infer", "url", c.opts.URL, "profile", c.Profile().String())
	err = cc.run(ctx)
	c.tapEvent("disconnected")
	return true, err
}

// reloadToken asks ReloadToken for the token, if there is one, and uses
// what it gives from this attempt on. A broken file is said once, not at
// every retry, and the token in use stays.
func (c *Client) reloadToken() {
	if c.opts.ReloadToken == nil {
		return
	}
	token, err := c.opts.ReloadToken()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		if msg := err.Error(); msg != c.reloadErr {
			c.reloadErr = msg
			c.log.Warn("sim: cannot read the token again; keeping the one in use", "err", err)
		}
		return
	}
	c.reloadErr = ""
	if token != "" && token != c.token {
		c.token = token
		c.log.Info("sim: the token changed where it came from; using the new one")
	}
}

// currentToken is the token the next hello sends.
func (c *Client) currentToken() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token
}

// greet sends what the profile's panel sends on its own right after the
// hello: before attach, so it precedes anything a caller sends once
// WaitConnected returns.
func (c *Client) greet(ctx context.Context, cc *clientConn) {
	p := c.Profile()
	for _, f := range p.AfterHello {
		if err := cc.write(ctx, wire.MustEncode(f)); err != nil {
			return
		}
	}
	c.mu.Lock()
	id := c.lastResumed
	again := c.connects > 0
	c.mu.Unlock()
	if p.ResumeOnReconnect && again && id != "" {
		cc.write(ctx, wire.MustEncode(wire.ResumeConversation{ID: id}))
	}
}

// storm connects and disconnects n times in quick succession before the
// client settles into its normal life (the --reconnect-storm fault).
func (c *Client) storm(ctx context.Context, n int) {
	for i := range n {
		ws, err := c.dial(ctx)
		if err != nil {
			c.log.Warn("sim: reconnect storm: a connection failed", "attempt", i+1, "err", err)
			if ctx.Err() != nil {
				return
			}
			continue
		}
		c.tapEvent("connected")
		ws.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseGoingAway, "infer-sim reconnect storm"),
			time.Now().Add(closeGrace))
		ws.Close()
		c.tapEvent("disconnected")
	}
	c.log.Info("sim: reconnect storm done", "connections", n)
}

// wrongToken is what --wrong-token presents instead of the real token.
const wrongToken = "infer-sim-wrong-token"

// hello sends browser_hello and waits for the ack.
func (c *Client) hello(ctx context.Context, ws *websocket.Conn) error {
	defer afterFunc(ctx, func() { ws.NetConn().Close() })()
	deadline := time.Now().Add(c.opts.HelloTimeout)
	ws.SetReadLimit(c.opts.MaxFrameBytes)
	ws.SetWriteDeadline(deadline)
	token := c.currentToken()
	if f := c.opts.Faults; f != nil && f.WrongToken {
		token = wrongToken
	}
	hello := wire.MustEncode(wire.BrowserHello{Token: token, ExtensionVersion: c.opts.ExtensionVersion})
	if err := ws.WriteMessage(websocket.TextMessage, hello); err != nil {
		return fmt.Errorf("send browser_hello: %w", err)
	}
	c.tapFrame(ExtToSrv, wire.MustEncode(wire.BrowserHello{Token: RedactedToken, ExtensionVersion: c.opts.ExtensionVersion}))
	ws.SetReadDeadline(deadline)
	_, data, err := ws.ReadMessage()
	if err != nil {
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return &RejectedError{Code: ce.Code, Reason: ce.Text}
		}
		return fmt.Errorf("wait for browser_hello_ack: %w", err)
	}
	c.tapFrame(SrvToExt, data)
	f, err := wire.Decode(data)
	if err != nil {
		return fmt.Errorf("wait for browser_hello_ack: %w", err)
	}
	if _, ok := f.(wire.BrowserHelloAck); !ok {
		return fmt.Errorf("wait for browser_hello_ack: got %q first", f.FrameType())
	}
	ws.SetReadDeadline(time.Time{})
	ws.SetWriteDeadline(time.Time{})
	return nil
}

// attach makes cc the current connection, unless it has started closing
// already (a write failed while greeting): then it reports false and
// nothing changes, since detach has run for it. The panel's approvals
// start afresh: infer re-sends what is still pending after a reconnection.
func (c *Client) attach(cc *clientConn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cc.detached {
		return false
	}
	c.cur = cc
	c.connects++
	c.approvals = nil
	close(c.up)
	return true
}

// detach forgets cc as soon as it starts closing, so that new calls fail
// at once with ErrNotConnected; calls already waiting on it fail through
// cc.done.
func (c *Client) detach(cc *clientConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cc.detached = true
	if c.cur == cc {
		c.cur = nil
		c.up = make(chan struct{})
	}
}

func (c *Client) current() *clientConn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur
}

// outgoing checks a frame against the profile and notes what the panel
// state needs from it, before it is sent.
func (c *Client) outgoing(f wire.Frame) error {
	p := c.Profile()
	if !p.Sends(f.FrameType()) {
		return &RefusedError{Profile: p.String(), Type: f.FrameType()}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch f := f.(type) {
	case wire.ResumeConversation:
		if f.ID != "" {
			c.lastResumed = f.ID
		}
	case wire.ApprovalResponse:
		c.dropApprovalLocked(f.RequestID)
	}
	return nil
}

// trackLocked keeps the panel's view of pending approvals up to date. Lock held.
func (c *Client) trackLocked(f wire.Frame) {
	switch f := f.(type) {
	case wire.ApprovalRequest:
		if c.Profile().SingleApproval {
			c.approvals = []wire.ApprovalRequest{f}
			return
		}
		for _, a := range c.approvals {
			if a.RequestID == f.RequestID {
				return
			}
		}
		c.approvals = append(c.approvals, f)
	case wire.ApprovalResolved:
		c.dropApprovalLocked(f.RequestID)
	}
}

func (c *Client) dropApprovalLocked(id string) {
	c.approvals = slices.DeleteFunc(c.approvals, func(a wire.ApprovalRequest) bool { return a.RequestID == id })
}

// listening reports whether publish has anyone to give a frame to: a
// waiting panel call, a subscription or OnFrame. Commands skip publish
// otherwise, which saves boxing one per command.
func (c *Client) listening() bool {
	if c.opts.OnFrame != nil {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters) > 0 || len(c.subs) > 0
}

func (c *Client) tapFrame(dir Direction, data []byte) {
	if t := c.opts.Tap; t != nil {
		t.Frame(dir, data)
	}
}

func (c *Client) tapEvent(name string) {
	if t := c.opts.Tap; t != nil {
		t.Event(name)
	}
}
