package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
)

// Faults make the simulated extension misbehave on purpose, so infer's
// reliability can be tested against the failures a real browser produces:
// slow and lost answers, duplicates, garbage on the wire, dropped sockets,
// reconnection storms and a wrong token. Probabilities are drawn from one
// generator seeded with Seed, so a failing run can be repeated exactly.
//
// The zero value injects nothing. Latency is applied by the Browser
// decorator (Faults.Browser); everything else by the client it is given to
// in ClientOptions.Faults. A Faults is safe for concurrent use once it is
// in use; do not change its fields afterwards.
type Faults struct {
	// Latency is added before the browser acts on each command.
	Latency time.Duration
	// DropResults is the probability (0..1) that a result is never sent.
	DropResults float64
	// DuplicateResults is the probability that a result is sent twice.
	DuplicateResults float64
	// Late holds every result until this long after its command arrived,
	// beyond infer's timeout when it exceeds timeout_ms.
	Late time.Duration
	// Malformed is the probability that a malformed frame goes out just
	// before a result.
	Malformed float64
	// DisconnectAfter drops the connection, once, when the Nth browser
	// command arrives (that command is never answered); 0 never does.
	DisconnectAfter int
	// ReconnectStorm connects and disconnects this many times in quick
	// succession before the client settles down.
	ReconnectStorm int
	// WrongToken presents a wrong token in every hello.
	WrongToken bool
	// Seed seeds the generator behind the probabilities.
	Seed uint64

	once     sync.Once
	mu       sync.Mutex
	rng      *rand.Rand
	commands int
}

// Validate reports a fault setting that makes no sense.
func (f *Faults) Validate() error {
	if f == nil {
		return nil
	}
	var errs []error
	for _, p := range []struct {
		name string
		v    float64
	}{{"drop-results", f.DropResults}, {"duplicate-results", f.DuplicateResults}, {"malformed", f.Malformed}} {
		if p.v < 0 || p.v > 1 {
			errs = append(errs, fmt.Errorf("--%s %v is not a probability: use a number from 0 to 1", p.name, p.v))
		}
	}
	if f.Latency < 0 || f.Late < 0 {
		errs = append(errs, errors.New("--latency and --late must not be negative"))
	}
	if f.DisconnectAfter < 0 || f.ReconnectStorm < 0 {
		errs = append(errs, errors.New("--disconnect-after and --reconnect-storm must not be negative"))
	}
	return errors.Join(errs...)
}

// Active reports whether any fault is set.
func (f *Faults) Active() bool {
	return f != nil && (f.Latency > 0 || f.DropResults > 0 || f.DuplicateResults > 0 || f.Late > 0 ||
		f.Malformed > 0 || f.DisconnectAfter > 0 || f.ReconnectStorm > 0 || f.WrongToken)
}

// String lists the active faults, for logs.
func (f *Faults) String() string {
	if !f.Active() {
		return "none"
	}
	var s string
	add := func(k, v string) {
		if s != "" {
			s += " "
		}
		s += k + "=" + v
	}
	if f.Latency > 0 {
		add("latency", f.Latency.String())
	}
	if f.DropResults > 0 {
		add("drop-results", strconv.FormatFloat(f.DropResults, 'g', -1, 64))
	}
	if f.DuplicateResults > 0 {
		add("duplicate-results", strconv.FormatFloat(f.DuplicateResults, 'g', -1, 64))
	}
	if f.Late > 0 {
		add("late", f.Late.String())
	}
	if f.Malformed > 0 {
		add("malformed", strconv.FormatFloat(f.Malformed, 'g', -1, 64))
	}
	if f.DisconnectAfter > 0 {
		add("disconnect-after", strconv.Itoa(f.DisconnectAfter))
	}
	if f.ReconnectStorm > 0 {
		add("reconnect-storm", strconv.Itoa(f.ReconnectStorm))
	}
	if f.WrongToken {
		add("wrong-token", "true")
	}
	add("seed", strconv.FormatUint(f.Seed, 10))
	return s
}

// roll draws true with probability p. A nil Faults never does.
func (f *Faults) roll(p float64) bool {
	if f == nil || p <= 0 {
		return false
	}
	f.once.Do(func() { f.rng = rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15)) })
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rng.Float64() < p
}

func (f *Faults) dropP() float64 {
	if f == nil {
		return 0
	}
	return f.DropResults
}

func (f *Faults) duplicateP() float64 {
	if f == nil {
		return 0
	}
	return f.DuplicateResults
}

func (f *Faults) malformedP() float64 {
	if f == nil {
		return 0
	}
	return f.Malformed
}

// disconnectNow counts a command and reports whether it is the one the
// connection should drop at.
func (f *Faults) disconnectNow() bool {
	if f == nil || f.DisconnectAfter <= 0 {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.commands++
	return f.commands == f.DisconnectAfter
}

// malformedResult is a browser_result cut off mid-frame, as a buggy or
// crashing extension might send: not valid JSON at all.
func malformedResult(id string) []byte {
	return []byte(`{"type":"browser_result","id":` + strconv.Quote(id) + `,"content":"trunc`)
}

// Browser wraps b so that every command waits Latency before the browser
// acts; the wait ends early, with the command's timeout error, when the
// command's context ends. Without latency b is returned as it is.
func (f *Faults) Browser(b Browser) Browser {
	if f == nil || f.Latency <= 0 {
		return b
	}
	return &slowBrowser{inner: b, latency: f.Latency}
}

type slowBrowser struct {
	inner   Browser
	latency time.Duration
}

func (s *slowBrowser) Do(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult {
	t := time.NewTimer(s.latency)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	if s.inner == nil {
		return wire.BrowserResult{Error: "infer-sim has no browser attached"}
	}
	return s.inner.Do(ctx, cmd)
}
