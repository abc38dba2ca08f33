// Package seat is an infer's one browser for the life of the process,
// whichever infer of the person holds the bridge's port. The extension
// dials one port, so one infer (the holder) serves the bridge and lends
// the browser to the person's other infers over the relay socket
// (package relay); they are its guests. When the holder stops, a guest
// takes the port over and the extension, which redials by itself, finds
// it there.
//
// A Seat also makes a browser call that finds no extension wait a
// bounded time for one (extension.connect_wait): the extension needs
// seconds to redial after infer starts or after a takeover, and a call
// made in that window should not fail.
package seat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/bridge/relay"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/config"
)

// Options configures a Seat.
type Options struct {
	// Bridge configures the bridge this infer serves while it holds the
	// port. Its Panel and OnStatus are ignored: Serve's Hooks give them.
	Bridge bridge.Options
	// Home is infer's home, where the relay socket lives.
	Home string
	// Root and Command describe this infer to its guests: its project
	// folder and how it was started ("infer", "infer serve", …).
	Root, Command string
	// ConnectWait is how long a browser call waits for an extension when
	// none is connected; 0 fails at once.
	ConnectWait time.Duration
	// Retry is the first pause between attempts to hold the port or reach
	// its holder while neither works (default 250ms); it doubles up to
	// MaxRetry (default 2s).
	Retry, MaxRetry time.Duration
	// DialTimeout bounds one dial of the holder's socket (default 5s).
	DialTimeout time.Duration
	// Logger receives the seat's changes; nil discards them.
	Logger *slog.Logger
}

// Hooks are what a serving seat reports to. Serve takes them, not New,
// because what receives them (the panel sync, the workspace) is built on
// the seat itself.
type Hooks struct {
	// Panel receives the side panel's frames while this infer holds the
	// bridge.
	Panel bridge.Panel
	// OnStatus is told of every change of the browser as this infer sees
	// it, whoever holds the bridge: calls are made one at a time, in order.
	OnStatus func(browser.Status)
	// OnHold is called when this infer starts holding the bridge, at
	// Serve or after a takeover; OnRelease when it stops. Whatever only
	// the holder serves (the MCP socket) starts and stops with them.
	OnHold, OnRelease func()
}

// Seat is a browser.Driver that stays valid whoever holds the bridge.
// Build it with New, run it with Serve, stop it with Close.
type Seat struct {
	opts Options
	log  *slog.Logger
	sock string

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // Serve's loop

	// pub orders OnStatus calls: statuses come from the bridge's
	// notifier, the relay client, the loop and waiting calls.
	pub sync.Mutex

	mu      sync.Mutex
	closed  bool
	serving bool
	token   string
	hooks   Hooks
	srv     *bridge.Server // held bridge, or nil
	held    browser.Status // srv's latest status
	guest   *relay.Client  // holder's relay, or nil
	holder  relay.Holder   // guest's holder, as it said when dialled
	gen     *int           // identifies guest's status callbacks
	guestSt browser.Status
	base    browser.Status // while neither holder nor guest
	// strangeTries counts the attempts in a row that found the port taken
	// and nobody on the relay socket.
	strangeTries int
	waiting      int           // calls waiting for an extension
	changed      chan struct{} // closed and replaced at every change

	misses atomic.Int64
}

var _ browser.Driver = (*Seat)(nil)

// New makes the seat's first attempt: hold the port, else become the
// guest of the infer that holds it. When neither works the seat still
// starts, says why in its status, and Serve keeps trying. The error is
// for what trying again cannot fix (bad options, a port that cannot be
// bound for another reason than being in use).
func New(opts Options) (*Seat, error) {
	if opts.Home == "" {
		return nil, errors.New("seat: no home folder for the browser's relay socket")
	}
	if opts.Bridge.Token == "" {
		return nil, errors.New("seat: no pairing token: set extension.token in browser_use.yaml (`infer init` writes one)")
	}
	if opts.ConnectWait < 0 {
		return nil, fmt.Errorf("seat: connect wait %s is negative", opts.ConnectWait)
	}
	if opts.Retry <= 0 {
		opts.Retry = 250 * time.Millisecond
	}
	if opts.MaxRetry < opts.Retry {
		opts.MaxRetry = max(2*time.Second, opts.Retry)
	}
	if opts.DialTimeout <= 0 {
		opts.DialTimeout = 5 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Bridge.Panel, opts.Bridge.OnStatus = nil, nil
	if opts.Bridge.Logger == nil {
		opts.Bridge.Logger = opts.Logger
	}
	s := &Seat{
		opts: opts, log: opts.Logger, sock: relay.SocketPath(opts.Home),
		token:   opts.Bridge.Token,
		base:    browser.Status{State: browser.Waiting, Since: time.Now()},
		changed: make(chan struct{}),
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if err := s.acquire(s.ctx); err != nil {
		s.cancel()
		return nil, err
	}
	return s, nil
}

// acquire tries once to hold the port, else to reach its holder. Only a
// failure that trying again cannot mend is returned; the others are
// recorded as the status's reason.
func (s *Seat) acquire(ctx context.Context) error {
	bo := s.opts.Bridge
	bo.Token = s.Token()
	srv, err := bridge.Listen(bo)
	if err == nil {
		s.mu.Lock()
		s.srv, s.held, s.strangeTries = srv, srv.Status(), 0
		s.mu.Unlock()
		s.log.Info("browser: this infer holds the bridge", "url", srv.URL())
		s.changedNow()
		return nil
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	defer func() {
		s.mu.Lock()
		if s.guest != nil {
			s.strangeTries = 0
		}
		s.mu.Unlock()
	}()
	gen := new(int)
	s.mu.Lock()
	s.gen = gen
	s.mu.Unlock()
	dctx, cancel := context.WithTimeout(ctx, s.opts.DialTimeout)
	cl, derr := relay.Dial(dctx, s.sock, s.Token(), func(st browser.Status) { s.guestStatus(gen, st) })
	cancel()
	if derr == nil {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			cl.Close()
			return nil
		}
		h := cl.Holder()
		s.guest, s.guestSt, s.holder = cl, cl.Status(), h
		s.mu.Unlock()
		s.log.Info("browser: this infer uses the browser of another infer", "holder_root", h.Root, "holder_pid", h.PID, "holder_command", h.Command)
		s.changedNow()
		return nil
	}
	port := strconv.Itoa(bo.Port)
	var why string
	switch {
	case errors.Is(derr, os.ErrNotExist), errors.Is(derr, syscall.ECONNREFUSED):
		s.mu.Lock()
		s.strangeTries++
		tries := s.strangeTries
		s.mu.Unlock()
		// Right after a takeover the winner holds the port a moment
		// before its socket answers: only a port that stays so is a
		// stranger's.
		why = "port " + port + " on 127.0.0.1 is taken; looking for the infer of yours that holds it…"
		if tries >= strangerAfter {
			why = "port " + port + " on 127.0.0.1 is in use by a program that is not one of your infers (none answers on " + s.sock +
				"); run `infer doctor` to see what holds it, or set another extension.port in browser_use.yaml and in the extension's options"
		}
	case errors.Is(derr, relay.ErrRefused):
		why = "the infer that holds port " + port + " refused this one: " + derr.Error()
	case ctx.Err() != nil:
		return nil
	default:
		why = "port " + port + " is in use and its holder cannot be reached: " + derr.Error()
	}
	s.mu.Lock()
	changed := s.base.Reason != why
	s.base.Reason = why
	s.mu.Unlock()
	if changed {
		s.log.Warn("browser: "+why, "socket", s.sock)
		s.changedNow()
	}
	return nil
}

// strangerAfter is how many attempts in a row must find the port taken
// with nobody on the relay socket before the seat says a stranger holds it.
const strangerAfter = 3

// guestStatus records a status the holder published, unless it comes from
// a connection the seat has since left.
func (s *Seat) guestStatus(gen *int, st browser.Status) {
	s.mu.Lock()
	if s.gen != gen || s.guest == nil {
		s.mu.Unlock()
		return
	}
	s.guestSt = st
	s.mu.Unlock()
	s.changedNow()
}

// Serve keeps the seat filled until ctx ends or Close: it serves the
// bridge while holding it, and while a guest it takes the port over when
// the holder goes. It returns nil then; it is called once.
func (s *Seat) Serve(ctx context.Context, h Hooks) error {
	s.mu.Lock()
	if s.closed || s.serving {
		s.mu.Unlock()
		return nil
	}
	s.serving = true
	s.hooks = h
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()

	s.changedNow() // the front ends hear the state New found
	pause := s.opts.Retry
	for ctx.Err() == nil {
		s.mu.Lock()
		srv, cl := s.srv, s.guest
		s.mu.Unlock()
		switch {
		case srv != nil:
			if err := s.hold(ctx, srv, h); err != nil && ctx.Err() == nil {
				s.log.Warn("browser: the bridge stopped; trying to get it back", "err", err)
				s.sleep(ctx, pause)
			}
		case cl != nil:
			select {
			case <-ctx.Done():
			case <-cl.Done():
				s.mu.Lock()
				holder := s.holder
				s.guest, s.gen = nil, nil
				s.base = browser.Status{State: browser.Disconnected, Since: time.Now(),
					Reason: "the infer in " + holder.Root + " (pid " + strconv.Itoa(holder.PID) + ") that held the browser stopped; taking its place"}
				s.mu.Unlock()
				cl.Close()
				s.log.Info("browser: the infer that held the bridge stopped; taking it over", "holder_root", holder.Root, "holder_pid", holder.PID)
				s.changedNow()
				pause = s.opts.Retry
			}
		default:
			if err := s.acquire(ctx); err != nil {
				s.mu.Lock()
				why := "the bridge cannot listen: " + err.Error()
				changed := s.base.Reason != why
				s.base.Reason = why
				s.mu.Unlock()
				if changed {
					s.log.Warn("browser: " + why)
					s.changedNow()
				}
			}
			s.mu.Lock()
			idle := s.srv == nil && s.guest == nil
			s.mu.Unlock()
			if idle {
				s.sleep(ctx, pause)
				pause = min(2*pause, s.opts.MaxRetry)
			} else {
				pause = s.opts.Retry
			}
		}
	}
	return nil
}

// hold serves the bridge, and the relay for the person's other infers,
// until ctx ends or the bridge fails.
func (s *Seat) hold(ctx context.Context, srv *bridge.Server, h Hooks) error {
	holder := relay.Holder{Root: s.opts.Root, PID: os.Getpid(), Command: s.opts.Command, Port: srv.Port()}
	rl, err := relay.Listen(s.sock, s.Token, srv, holder, s.log)
	if err != nil {
		// The browser still works here; only other infers cannot share it.
		s.log.Warn("browser: other infers cannot use this infer's browser", "socket", s.sock, "err", err)
		rl = nil
	}
	if h.OnHold != nil {
		h.OnHold()
	}
	err = srv.ServeWith(ctx, bridge.Hooks{Panel: h.Panel, OnStatus: func(st browser.Status) {
		if rl != nil {
			rl.Publish(st)
		}
		s.mu.Lock()
		s.held = st
		s.mu.Unlock()
		s.changedNow()
	}})
	srv.Close()
	if rl != nil {
		rl.Close()
	}
	if h.OnRelease != nil {
		h.OnRelease()
	}
	s.mu.Lock()
	s.srv = nil
	s.base = browser.Status{State: browser.Disconnected, Since: time.Now(), Reason: "this infer's bridge stopped"}
	s.mu.Unlock()
	s.changedNow()
	return err
}

// sleep pauses for d or until ctx ends.
func (s *Seat) sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Close stops serving, closes the bridge (letting a guest take the port
// over) or the connection to the holder, and waits for the seat's
// goroutines. Calls waiting for an extension fail. It is safe to call more
// than once.
func (s *Seat) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	srv, cl := s.srv, s.guest
	s.srv, s.guest, s.gen = nil, nil, nil
	s.base = browser.Status{State: browser.Disconnected, Since: time.Now(), Reason: "infer is shutting down"}
	s.mu.Unlock()
	if srv != nil {
		srv.Close() // never served: New held it, Serve never ran
	}
	if cl != nil {
		cl.Close()
	}
	s.changedNow()
	return nil
}

// SetToken makes token the pairing token from now on: the bridge's while
// this infer holds it (connections made with the old one are closed), and
// the one later dials of a holder present.
func (s *Seat) SetToken(token string) error {
	if token == "" {
		return errors.New("seat: the new token is empty: set extension.token in browser_use.yaml (`infer init --rotate-token` makes one)")
	}
	s.mu.Lock()
	s.token = token
	srv := s.srv
	s.mu.Unlock()
	if srv != nil {
		return srv.SetToken(token)
	}
	return nil
}

// Token is the pairing token the seat uses now.
func (s *Seat) Token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token
}

// Holding reports whether this infer holds the bridge now.
func (s *Seat) Holding() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv != nil
}

// Holder describes the infer whose browser this one uses, while it is a
// guest.
func (s *Seat) Holder() (relay.Holder, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.holder, s.guest != nil
}

// Server is the bridge while this infer holds it, else nil.
func (s *Seat) Server() *bridge.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv
}

// Port is the port the extension dials: the held bridge's, the holder's,
// or the configured one while neither is known.
func (s *Seat) Port() int {
	s.mu.Lock()
	srv, cl, h := s.srv, s.guest, s.holder
	s.mu.Unlock()
	switch {
	case srv != nil:
		return srv.Port()
	case cl != nil:
		return h.Port
	}
	return s.opts.Bridge.Port
}

// URL is the WebSocket address the extension dials.
func (s *Seat) URL() string { return "ws://127.0.0.1:" + strconv.Itoa(s.Port()) + "/ws" }

// Misses is how many browser calls failed because no extension was
// connected, waiting included: a run whose browser call found no browser
// did not do what was asked.
func (s *Seat) Misses() int64 { return s.misses.Load() }

// Status is the browser as this infer sees it now.
func (s *Seat) Status() browser.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.statusLocked()
}

// statusLocked is the status of whichever source the seat has, with what
// the seat adds: where a guest's browser comes from, and that calls are
// waiting. s.mu is held.
func (s *Seat) statusLocked() browser.Status {
	var st browser.Status
	switch {
	case s.srv != nil:
		st = s.held
	case s.guest != nil:
		st = s.guestSt
		st.Via = Describe(s.holder)
		if st.State != browser.Connected {
			st.Reason = joinReasons("this infer uses the browser of "+st.Via, st.Reason)
		}
	default:
		st = s.base
	}
	if s.waiting > 0 && st.State != browser.Connected {
		st.Reason = joinReasons(WaitingNotice(s.opts.ConnectWait), st.Reason)
	}
	return st
}

// Describe names a holder for the person to find it: how it was
// started, its project and its pid.
func Describe(h relay.Holder) string {
	cmd := h.Command
	if cmd == "" {
		cmd = "infer"
	}
	return cmd + " in " + config.DisplayPath(h.Root) + " (pid " + strconv.Itoa(h.PID) + ")"
}

// WaitingNotice is what the status says while a browser call waits up to
// wait for an extension.
func WaitingNotice(wait time.Duration) string {
	return "waiting up to " + wait.String() + " for the browser extension to connect…"
}

// Waiting reports whether a status reason says that a browser call
// waits for an extension, for front ends that show only that.
func Waiting(reason string) bool {
	return strings.HasPrefix(reason, "waiting up to ")
}

func joinReasons(first, then string) string {
	if then == "" {
		return first
	}
	return first + " (" + then + ")"
}

// changedNow wakes the calls waiting for a change and tells OnStatus.
func (s *Seat) changedNow() {
	s.pub.Lock()
	defer s.pub.Unlock()
	s.mu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	st := s.statusLocked()
	on := s.hooks.OnStatus
	s.mu.Unlock()
	if on != nil {
		on(st)
	}
}

// current is the driver to try now (nil when there is none) and the
// channel closed at the next change; a guest whose holder has gone counts
// as none, since a call would not reach anyone.
func (s *Seat) current() (browser.Driver, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return nil, nil
	case s.srv != nil:
		return s.srv, s.changed
	case s.guest != nil:
		select {
		case <-s.guest.Done():
			return nil, s.changed
		default:
			return s.guest, s.changed
		}
	}
	return nil, s.changed
}

// Do performs cmd in the person's browser, through whichever infer holds
// it. When no extension is connected it waits up to ConnectWait for one,
// with the status saying so, then fails with an error that matches
// browser.ErrNotConnected and says it waited.
func (s *Seat) Do(ctx context.Context, cmd browser.Command) (browser.Result, error) {
	var (
		deadline <-chan time.Time
		lastErr  error = browser.ErrNotConnected
	)
	for {
		d, changed := s.current()
		if changed == nil {
			return browser.Result{}, fmt.Errorf("infer is shutting down: %w", browser.ErrNotConnected)
		}
		if d != nil {
			res, err := d.Do(ctx, cmd)
			if !errors.Is(err, browser.ErrNotConnected) {
				return res, err
			}
			// Nothing was sent: wait as if no extension had been there.
			lastErr = err
		}
		if s.opts.ConnectWait <= 0 {
			s.misses.Add(1)
			return browser.Result{}, s.notConnected(lastErr, 0)
		}
		if deadline == nil {
			t := time.NewTimer(s.opts.ConnectWait)
			defer t.Stop()
			deadline = t.C
			s.mu.Lock()
			s.waiting++
			s.mu.Unlock()
			s.log.Info("browser: a call waits for the extension to connect", "action", cmd.Action, "up_to", s.opts.ConnectWait)
			s.changedNow()
			defer func() {
				s.mu.Lock()
				s.waiting--
				s.mu.Unlock()
				s.changedNow()
			}()
		}
		select {
		case <-changed:
		case <-deadline:
			s.misses.Add(1)
			return browser.Result{}, s.notConnected(lastErr, s.opts.ConnectWait)
		case <-ctx.Done():
			return browser.Result{}, ctx.Err()
		}
	}
}

// notConnected is Do's error when no extension came: it keeps the
// driver's own (which may say more, such as two browsers flapping), adds
// what the seat knows, and says how long it waited.
func (s *Seat) notConnected(err error, waited time.Duration) error {
	s.mu.Lock()
	var why string
	switch {
	case s.srv != nil:
		why = s.held.Reason
	case s.guest != nil:
		why = joinReasons("through "+Describe(s.holder), s.guestSt.Reason)
	default:
		why = s.base.Reason
	}
	s.mu.Unlock()
	if why != "" {
		why = " (" + why + ")"
	}
	if waited <= 0 {
		if why == "" {
			return err
		}
		return fmt.Errorf("%w%s", err, why)
	}
	return &WaitError{Waited: waited, Why: why, Err: err}
}

// WaitError is a browser call's failure after waiting for an extension
// that did not connect.
type WaitError struct {
	// Waited is how long the call waited.
	Waited time.Duration
	// Why is what the seat knew, in parentheses, or empty.
	Why string
	// Err is the driver's error, matching browser.ErrNotConnected.
	Err error
}

// Error says that it waited, what it knew, and what to do.
func (e *WaitError) Error() string {
	return "waited " + e.Waited.String() + " for the browser extension to connect, but none did" + e.Why +
		": open the browser with infer's extension and check that it shows connected (`infer pair` shows the steps; extension.connect_wait in browser_use.yaml sets the wait)"
}

// Unwrap gives errors.Is the driver's error.
func (e *WaitError) Unwrap() error { return e.Err }
