package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
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
	// ExtensionVersion is sent in browser_hello (default "infer-sim").
	ExtensionVersion string
	// Origin is the Origin header of the upgrade request (default
	// "chrome-extension://infer-sim", as a real extension would send).
	Origin string
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
	if o.ExtensionVersion == "" {
		o.ExtensionVersion = "infer-sim"
	}
	if o.Origin == "" {
		o.Origin = "chrome-extension://infer-sim"
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

// Client is a simulated browser extension: it dials infer's bridge, says
// hello, answers browser commands from its Browser, and offers the side
// panel's frames as Go calls. It reconnects with backoff until Run's
// context ends. Its methods are safe for concurrent use.
type Client struct {
	opts    ClientOptions
	optsErr error
	log     *slog.Logger
	running atomic.Bool

	mu       sync.Mutex
	cur      *clientConn
	up       chan struct{} // closed while a connection is authenticated
	subs     map[*Subscription]struct{}
	waiters  []*waiter
	connects int
	lastErr  error
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
		up:      make(chan struct{}),
		subs:    make(map[*Subscription]struct{}),
	}
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
	failures := 0
	for {
		authenticated, err := c.connectOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		c.mu.Lock()
		c.lastErr = err
		c.mu.Unlock()
		if authenticated {
			failures = 0
		}
		delay := backoff(c.opts.MinBackoff, c.opts.MaxBackoff, failures)
		failures++
		var rejected *RejectedError
		if errors.As(err, &rejected) {
			c.log.Error("sim: "+rejected.Error(), "retry_in", delay)
		} else {
			c.log.Info("sim: connection to infer ended; reconnecting", "err", err, "retry_in", delay)
		}
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil
		}
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

// connectOnce dials, authenticates and serves one connection until it
// ends. authenticated reports whether the hello was accepted.
func (c *Client) connectOnce(ctx context.Context) (authenticated bool, err error) {
	dialer := websocket.Dialer{HandshakeTimeout: c.opts.HelloTimeout}
	header := http.Header{}
	header.Set("Origin", c.opts.Origin)
	ws, resp, err := dialer.DialContext(ctx, c.opts.URL, header)
	if err != nil {
		if resp != nil {
			return false, fmt.Errorf("dial %s: HTTP %s: %w", c.opts.URL, resp.Status, err)
		}
		return false, fmt.Errorf("dial %s: %w", c.opts.URL, err)
	}
	if err := c.hello(ctx, ws); err != nil {
		ws.Close()
		return false, err
	}
	cc := newClientConn(c, ws)
	c.attach(cc)
	c.log.Info("sim: connected to infer", "url", c.opts.URL)
	return true, cc.run(ctx)
}

// hello sends browser_hello and waits for the ack.
func (c *Client) hello(ctx context.Context, ws *websocket.Conn) error {
	defer afterFunc(ctx, func() { ws.NetConn().Close() })()
	deadline := time.Now().Add(c.opts.HelloTimeout)
	ws.SetReadLimit(c.opts.MaxFrameBytes)
	ws.SetWriteDeadline(deadline)
	hello := wire.MustEncode(wire.BrowserHello{Token: c.opts.Token, ExtensionVersion: c.opts.ExtensionVersion})
	if err := ws.WriteMessage(websocket.TextMessage, hello); err != nil {
		return fmt.Errorf("send browser_hello: %w", err)
	}
	ws.SetReadDeadline(deadline)
	_, data, err := ws.ReadMessage()
	if err != nil {
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return &RejectedError{Code: ce.Code, Reason: ce.Text}
		}
		return fmt.Errorf("wait for browser_hello_ack: %w", err)
	}
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

// attach makes cc the current connection.
func (c *Client) attach(cc *clientConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur = cc
	c.connects++
	close(c.up)
}

// detach forgets cc as soon as it starts closing, so that new calls fail
// at once with ErrNotConnected; calls already waiting on it fail through
// cc.done.
func (c *Client) detach(cc *clientConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
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
