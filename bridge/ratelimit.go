package bridge

import (
	"log/slog"
	"sync"
	"time"
)

// authLimiter slows down repeated failed authentications: a wrong or
// missing token in browser_hello, a wrong bearer token on /status.
//
// It counts failures for the whole server rather than per remote address.
// Every peer of a loopback listener is the same machine, and any local
// process can pick its source address anywhere in 127.0.0.0/8, so a count
// per address would be one an attacker chooses to reset.
//
// The limiter only ever delays the answer to a failure. A correct token is
// checked and answered at once whatever the count, so a flood of wrong
// tokens can never lock out the real extension.
type authLimiter struct {
	burst  int           // failures answered without delay
	first  time.Duration // delay of the first failure past the burst
	max    time.Duration // longest delay
	window time.Duration // quiet time after which the count starts over

	mu    sync.Mutex
	fails int
	last  time.Time
}

func newAuthLimiter(o Options) *authLimiter {
	return &authLimiter{burst: o.AuthFailureBurst, first: o.AuthBackoff, max: o.AuthBackoffMax, window: o.AuthFailureWindow}
}

// failure records one failed authentication at now and returns how long
// its answer should be held back: nothing for the first burst failures,
// then first, doubling with each further failure, capped at max.
func (l *authLimiter) failure(now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) > l.window {
		l.fails = 0
	}
	l.last = now
	l.fails++
	over := l.fails - l.burst
	if over <= 0 {
		return 0
	}
	d := l.first
	for i := 1; i < over && d < l.max; i++ {
		d *= 2
	}
	return min(d, l.max)
}

// enterPenalty takes a slot for a socket whose answer is held back after a
// failed authentication, if one is free. Held-back sockets take slots of
// their own (as many as MaxPendingHandshakes), not the handshake slots a
// new connection needs; when none is free the answer goes out at once, so
// that holding back never makes the server keep an unbounded number of
// sockets open. leavePenalty gives the slot back.
func (s *Server) enterPenalty() bool {
	select {
	case s.penalty <- struct{}{}:
		return true
	default:
		return false
	}
}

func (s *Server) leavePenalty() { <-s.penalty }

// HeldBack is how many answers to failed authentications the server is
// holding back right now, each on a socket of its own.
func (s *Server) HeldBack() int { return len(s.penalty) }

// pause waits d, or less if the server starts closing.
func (s *Server) pause(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.stopping:
	}
}

// Kinds of refusal, for aggregating the log.
const (
	refusedOrigin = "origin"
	refusedBusy   = "busy"
	refusedHello  = "hello"
	refusedToken  = "token"
	refusedHost   = "host"
	refusedBearer = "bearer"
	// refusedUser is a socket opened by another local user (peers.go).
	refusedUser = "user"
)

// defaultRefusalInterval is how often a flood of refusals of one kind is
// summed up in the log.
const defaultRefusalInterval = 10 * time.Second

// refusalLog writes refused attempts to the log without letting a flood
// write a line for each. The first refusal of a kind is logged at once,
// in full; those that follow within the interval are counted, and one
// line sums them up when the interval ends (or when the server closes).
type refusalLog struct {
	log      *slog.Logger
	interval time.Duration

	mu      sync.Mutex
	kinds   map[string]*refusalCount
	timer   *time.Timer
	pending sync.WaitGroup // a scheduled or running summary
	closed  bool
}

// refusalCount is one kind's refusals since its last log line.
type refusalCount struct {
	quietUntil time.Time // refusals before this are counted, not logged
	suppressed int
	lastReason string
}

func newRefusalLog(log *slog.Logger, interval time.Duration) *refusalLog {
	return &refusalLog{log: log, interval: interval, kinds: map[string]*refusalCount{}}
}

// refused logs (or counts) one refusal of kind; msg and attrs make the
// full line, reason the summary's.
func (r *refusalLog) refused(kind, msg, reason string, attrs ...any) {
	now := time.Now()
	r.mu.Lock()
	c := r.kinds[kind]
	if c == nil {
		c = &refusalCount{}
		r.kinds[kind] = c
	}
	if r.closed || now.After(c.quietUntil) {
		c.quietUntil = now.Add(r.interval)
		r.mu.Unlock()
		r.log.Warn(msg, attrs...)
		return
	}
	c.suppressed++
	c.lastReason = reason
	if r.timer == nil {
		r.pending.Add(1)
		r.timer = time.AfterFunc(r.interval, r.summarise)
	}
	r.mu.Unlock()
}

// summarise logs one line per kind with refusals counted but not logged.
func (r *refusalLog) summarise() {
	defer r.pending.Done()
	r.mu.Lock()
	r.timer = nil
	r.mu.Unlock()
	r.flush()
}

func (r *refusalLog) flush() {
	type line struct {
		kind, reason string
		n            int
	}
	var lines []line
	r.mu.Lock()
	for kind, c := range r.kinds {
		if c.suppressed > 0 {
			lines = append(lines, line{kind, c.lastReason, c.suppressed})
			c.suppressed = 0
		}
	}
	r.mu.Unlock()
	for _, l := range lines {
		r.log.Warn("bridge: refused more attempts of the same kind (not logged one by one)",
			"count", l.n, "kind", l.kind, "last_reason", l.reason, "within", r.interval.String())
	}
}

// close stops the summary timer and logs what is still counted.
func (r *refusalLog) close() {
	r.mu.Lock()
	r.closed = true
	if r.timer != nil && r.timer.Stop() {
		r.timer = nil
		r.pending.Done()
	}
	r.mu.Unlock()
	r.pending.Wait()
	r.flush()
}
