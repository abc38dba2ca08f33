package bridge

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/infer-workspace/infer/session/browser"
)

// DefaultPort is the contract's default extension port (browser_use.yaml
// extension.port).
const DefaultPort = 52789

// Options configures a Server. Only Token is required; every tunable has a
// default suited to a real extension, and is exported so tests can shrink it.
type Options struct {
	// Port to listen on at 127.0.0.1; 0 picks a free port.
	Port int
	// Token is the shared secret the extension must present in its
	// browser_hello. It is never logged.
	Token string
	// CommandTimeout is a browser command's budget when its own Timeout is
	// zero (default 30s, the real extension's fixed budget).
	CommandTimeout time.Duration
	// ArtifactsDir is served read-only under /artifacts/; empty means the
	// route answers 404.
	ArtifactsDir string
	// Project is the folder the infer holding the bridge works in. /status
	// reports it, so that `infer doctor` run in another folder can tell
	// whose infer holds the port instead of taking it for its own. Empty:
	// not reported.
	Project string
	// Panel receives the side panel's frames; nil ignores them.
	Panel Panel
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
	// OnStatus is told of every connection event: connected (with the
	// extension's version), disconnected (with the reason), a new ping RTT,
	// and refused connection attempts (State unchanged, Reason set). Calls
	// are made in order from one goroutine; they may call Status but must
	// not block for long, nor call Close (which waits for them).
	OnStatus func(browser.Status)

	// HelloTimeout is how long a new socket may take to send browser_hello
	// (default 5s, the contract's figure). It also bounds how long any
	// HTTP request may take to send its headers and how long an idle
	// keep-alive connection is kept, so that sockets that say nothing
	// cannot pile up.
	HelloTimeout time.Duration
	// PingInterval is how often a WebSocket ping goes out (default 20s).
	PingInterval time.Duration
	// PongTimeout is how long after a ping was due its pong may be missing
	// before the socket counts as half-open and is closed (default 10s).
	PongTimeout time.Duration
	// WriteTimeout bounds every write to a socket (default 10s).
	WriteTimeout time.Duration
	// KeepaliveInterval is how often the application-level infer_keepalive
	// frame goes out (default 20s): an MV3 service worker is kept alive by
	// messages its code sees, and WebSocket pings never reach its code.
	KeepaliveInterval time.Duration
	// CloseGrace is how long a closing socket waits for the peer's close
	// frame before the TCP connection is dropped (default 1s).
	CloseGrace time.Duration
	// MaxPendingHandshakes caps sockets waiting for their hello (default
	// 16). A further upgrade request evicts the one that has waited
	// longest, so that silent sockets cannot keep the extension out; it
	// gets 503 only when every slot is already being freed for others. As
	// many again may be held back after a failed authentication (see
	// AuthBackoff), and as many again may wait for a refused peer's close
	// reply (see CloseGrace).
	MaxPendingHandshakes int
	// AuthFailureBurst is how many failed authentications (a wrong or
	// missing token in browser_hello, a wrong bearer token on /status) are
	// answered at once before the bridge starts holding its answers back
	// (default 5).
	AuthFailureBurst int
	// AuthBackoff is how long the answer to the first failure past the
	// burst is held back; each further failure doubles it, up to
	// AuthBackoffMax (defaults 250ms and 4s). A correct token is always
	// answered at once.
	AuthBackoff, AuthBackoffMax time.Duration
	// AuthFailureWindow is the quiet time after which past failures are
	// forgotten (default 1m).
	AuthFailureWindow time.Duration
	// HandshakeReadLimit caps the hello frame (default 64 KiB).
	HandshakeReadLimit int64
	// MaxFrameBytes caps frames from an authenticated extension (default
	// 64 MiB, room for a full-page screenshot).
	MaxFrameBytes int64
	// SendQueue is how many outbound frames may wait for the writer
	// (default 64); senders block while it is full.
	SendQueue int
	// FlapReplacements and FlapWindow detect two browsers taking turns:
	// that many replacements of the live connection within the window
	// (defaults 3 and 30s) set Status.Flapping, until a window passes
	// without one. One extension closes its old socket before it dials
	// again, so replacements come from a second extension (the real one
	// ignores close codes and redials after a second, so two of them
	// replace each other every two seconds, forever).
	FlapReplacements int
	FlapWindow       time.Duration
}

// Defaults for Options; see the field docs.
const (
	defaultCommandTimeout    = 30 * time.Second
	defaultHelloTimeout      = 5 * time.Second
	defaultPingInterval      = 20 * time.Second
	defaultPongTimeout       = 10 * time.Second
	defaultWriteTimeout      = 10 * time.Second
	defaultKeepaliveInterval = 20 * time.Second
	defaultCloseGrace        = time.Second
	defaultMaxPending        = 16
	defaultAuthFailureBurst  = 5
	defaultAuthBackoff       = 250 * time.Millisecond
	defaultAuthBackoffMax    = MaxAuthDelay
	defaultAuthFailureWindow = time.Minute
	defaultHandshakeLimit    = 64 << 10
	defaultMaxFrameBytes     = 64 << 20
	defaultSendQueue         = 64
	defaultFlapReplacements  = 3
	defaultFlapWindow        = 30 * time.Second
)

// MaxAuthDelay is the longest a server with the default AuthBackoffMax
// holds back its answer to a failed authentication. A client that probes
// /status (infer pair) waits longer than this before it calls the server
// stuck: a token that changed while infer ran is answered that late once
// an extension retrying with it has run up the failure count.
const MaxAuthDelay = 4 * time.Second

// withDefaults validates o and fills in its zero tunables.
func (o Options) withDefaults() (Options, error) {
	if o.Token == "" {
		return o, errors.New("bridge: no token configured: set extension.token in browser_use.yaml (`infer init` creates one)")
	}
	if o.Port < 0 || o.Port > 65535 {
		return o, fmt.Errorf("bridge: port %d is out of range: use 1-65535, or 0 for a free port", o.Port)
	}
	setDur := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	setDur(&o.CommandTimeout, defaultCommandTimeout)
	setDur(&o.HelloTimeout, defaultHelloTimeout)
	setDur(&o.PingInterval, defaultPingInterval)
	setDur(&o.PongTimeout, defaultPongTimeout)
	setDur(&o.WriteTimeout, defaultWriteTimeout)
	setDur(&o.KeepaliveInterval, defaultKeepaliveInterval)
	setDur(&o.CloseGrace, defaultCloseGrace)
	setDur(&o.AuthBackoff, defaultAuthBackoff)
	setDur(&o.AuthBackoffMax, defaultAuthBackoffMax)
	setDur(&o.AuthFailureWindow, defaultAuthFailureWindow)
	setDur(&o.FlapWindow, defaultFlapWindow)
	if o.FlapReplacements <= 0 {
		o.FlapReplacements = defaultFlapReplacements
	}
	o.AuthBackoffMax = max(o.AuthBackoffMax, o.AuthBackoff)
	if o.MaxPendingHandshakes <= 0 {
		o.MaxPendingHandshakes = defaultMaxPending
	}
	if o.AuthFailureBurst <= 0 {
		o.AuthFailureBurst = defaultAuthFailureBurst
	}
	if o.HandshakeReadLimit <= 0 {
		o.HandshakeReadLimit = defaultHandshakeLimit
	}
	if o.MaxFrameBytes <= 0 {
		o.MaxFrameBytes = defaultMaxFrameBytes
	}
	if o.SendQueue <= 0 {
		o.SendQueue = defaultSendQueue
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o, nil
}
