package seat

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/internal/leaks"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/sim"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leaks.Options()...)
}

const (
	token      = "seat-test-token-0123456789abcdefghijk"
	otherToken = "seat-test-token-rotated-0123456789abcd"
	// guard bounds waits for what should happen soon: a "did not hang"
	// limit, never a speed check.
	guard = 30 * time.Second
)

var read = browser.Command{Action: browser.Read, Selector: "h1"}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// home is a short home folder: the relay socket's path must fit a
// sockaddr_un.
func home(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "seat")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// statuses records what a seat reports, for tests to wait on.
type statuses struct {
	mu   sync.Mutex
	all  []browser.Status
	more chan struct{}
}

func newStatuses() *statuses { return &statuses{more: make(chan struct{}, 1)} }

func (r *statuses) add(st browser.Status) {
	r.mu.Lock()
	r.all = append(r.all, st)
	r.mu.Unlock()
	select {
	case r.more <- struct{}{}:
	default:
	}
}

// waitFor waits until a reported status satisfies ok.
func (r *statuses) waitFor(t *testing.T, what string, ok func(browser.Status) bool) browser.Status {
	t.Helper()
	deadline := time.After(guard)
	for {
		r.mu.Lock()
		for _, st := range r.all {
			if ok(st) {
				r.mu.Unlock()
				return st
			}
		}
		r.mu.Unlock()
		select {
		case <-r.more:
		case <-deadline:
			t.Fatalf("no status %s came", what)
		}
	}
}

type testSeat struct {
	*Seat
	statuses *statuses
	held     chan struct{} // receives at every OnHold
}

// start makes a seat for port and serves it until the test ends.
func start(t *testing.T, home string, port int, wait time.Duration, tok string) *testSeat {
	t.Helper()
	s, err := New(Options{
		Bridge: bridge.Options{Port: port, Token: tok, CloseGrace: 50 * time.Millisecond},
		Home:   home, Root: "/projects/" + t.Name(), Command: "infer test",
		ConnectWait: wait, Retry: 10 * time.Millisecond, MaxRetry: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := &testSeat{Seat: s, statuses: newStatuses(), held: make(chan struct{}, 8)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Serve(ctx, Hooks{OnStatus: ts.statuses.add, OnHold: func() { ts.held <- struct{}{} }})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		s.Close()
	})
	return ts
}

// extension connects a simulated extension to port until the test ends.
func extension(t *testing.T, port int, tok string) *sim.Client {
	t.Helper()
	c := sim.NewClient(sim.ClientOptions{
		URL: "ws://127.0.0.1:" + strconv.Itoa(port) + "/ws", Token: tok, Browser: &sim.Minimal{},
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return c
}

func do(t *testing.T, s *Seat) (browser.Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	return s.Do(ctx, read)
}

func mustRead(t *testing.T, who string, s *Seat) {
	t.Helper()
	res, err := do(t, s)
	if err != nil {
		t.Fatalf("%s: read: %v", who, err)
	}
	if res.Content != sim.MinimalPageText {
		t.Fatalf("%s: read %q, want the simulated page's text", who, res.Content)
	}
}

// TestHolderAndGuestShareTheBrowser: the second infer on a port becomes
// the first one's guest instead of failing, and both reach the one
// extension.
func TestHolderAndGuestShareTheBrowser(t *testing.T) {
	h, port := home(t), freePort(t)
	a := start(t, h, port, guard, token)
	<-a.held
	ext := extension(t, port, token)
	b := start(t, h, port, guard, token)
	if !a.Holding() || b.Holding() {
		t.Fatalf("holding: first %t, second %t; want the first only", a.Holding(), b.Holding())
	}
	holder, ok := b.Holder()
	if !ok || holder.PID != os.Getpid() || holder.Root != "/projects/"+t.Name() || holder.Port != port {
		t.Fatalf("the guest names its holder as %+v (%t)", holder, ok)
	}
	mustRead(t, "holder", a.Seat)
	mustRead(t, "guest", b.Seat)
	b.statuses.waitFor(t, "connected on the guest", func(st browser.Status) bool { return st.State == browser.Connected })
	if n := ext.Connects(); n != 1 {
		t.Errorf("the extension connected %d times, want once", n)
	}
}

// TestGuestTakesOverWhenHolderCloses: when the holder stops, its guest
// holds the port, serves the extension that redials, and its calls work.
func TestGuestTakesOverWhenHolderCloses(t *testing.T) {
	h, port := home(t), freePort(t)
	a := start(t, h, port, guard, token)
	<-a.held
	extension(t, port, token)
	b := start(t, h, port, guard, token)
	mustRead(t, "guest", b.Seat)
	if via := b.Status().Via; !strings.Contains(via, "(pid "+strconv.Itoa(os.Getpid())+")") {
		t.Errorf("the guest's status says its browser comes through %q, want the holder named", via)
	}
	if via := a.Status().Via; via != "" {
		t.Errorf("the holder's status says its browser comes through %q", via)
	}

	a.Close()
	select {
	case <-b.held:
	case <-time.After(guard):
		t.Fatal("the guest never took the port over")
	}
	mustRead(t, "new holder", b.Seat)
	if !b.Holding() {
		t.Error("the guest answers but does not hold the bridge")
	}
	if via := b.Status().Via; via != "" {
		t.Errorf("after taking the port over the status still says the browser comes through %q", via)
	}
	if _, err := do(t, a.Seat); !errors.Is(err, browser.ErrNotConnected) {
		t.Errorf("a closed seat's call: %v, want ErrNotConnected", err)
	}
}

// TestCallWaitsForAnExtension: a call made before any extension connected
// waits, says so in the status, and succeeds once one connects.
func TestCallWaitsForAnExtension(t *testing.T) {
	port := freePort(t)
	a := start(t, home(t), port, guard, token)
	got := make(chan error, 1)
	go func() {
		_, err := do(t, a.Seat)
		got <- err
	}()
	st := a.statuses.waitFor(t, "saying it waits", func(st browser.Status) bool {
		return strings.Contains(st.Reason, "waiting up to 30s for the browser extension to connect")
	})
	if st.State == browser.Connected || !Waiting(st.Reason) {
		t.Fatalf("waiting while connected, or Waiting does not see it: %+v", st)
	}
	extension(t, port, token)
	if err := <-got; err != nil {
		t.Fatalf("the call failed although an extension connected while it waited: %v", err)
	}
	if a.Misses() != 0 {
		t.Errorf("Misses = %d after a call that succeeded", a.Misses())
	}
}

// TestCallFailsAfterTheWait: with no extension at all, the call fails
// after the wait with an error that says it waited; with no wait, at once.
func TestCallFailsAfterTheWait(t *testing.T) {
	a := start(t, home(t), freePort(t), 20*time.Millisecond, token)
	_, err := do(t, a.Seat)
	var we *WaitError
	if !errors.Is(err, browser.ErrNotConnected) || !errors.As(err, &we) {
		t.Fatalf("error %v (%T), want a WaitError matching ErrNotConnected", err, err)
	}
	for _, want := range []string{"waited 20ms for the browser extension to connect, but none did", "infer pair", "extension.connect_wait"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if a.Misses() != 1 {
		t.Errorf("Misses = %d, want 1", a.Misses())
	}

	b := start(t, home(t), freePort(t), 0, token)
	_, err = do(t, b.Seat)
	if !errors.Is(err, browser.ErrNotConnected) || errors.As(err, &we) {
		t.Fatalf("with no wait: %v, want ErrNotConnected without waiting", err)
	}
}

// TestSetToken: the holder's bridge takes the new token at once, and a
// guest refused for an old token gets in once it has the new one.
func TestSetToken(t *testing.T) {
	h, port := home(t), freePort(t)
	a := start(t, h, port, guard, token)
	<-a.held
	if err := a.SetToken(otherToken); err != nil {
		t.Fatal(err)
	}
	if a.Token() != otherToken {
		t.Errorf("Token = %q after SetToken", a.Token())
	}
	extension(t, port, otherToken)
	mustRead(t, "holder", a.Seat)

	b := start(t, h, port, guard, token)
	if _, ok := b.Holder(); ok {
		t.Fatal("a guest with the old token was let in")
	}
	b.statuses.waitFor(t, "naming the refusal", func(st browser.Status) bool { return strings.Contains(st.Reason, "refused") })
	if err := b.SetToken(otherToken); err != nil {
		t.Fatal(err)
	}
	mustRead(t, "guest with the new token", b.Seat)
	if err := b.SetToken(""); err == nil {
		t.Error("an empty token was taken")
	}
}

// TestPortHeldByAStranger: a port held by something that is not an infer
// is named, with the way to find out what it is, and the seat keeps
// trying.
func TestPortHeldByAStranger(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	a := start(t, home(t), port, 0, token)
	a.statuses.waitFor(t, "looking for an infer first", func(st browser.Status) bool { return strings.Contains(st.Reason, "looking for the infer of yours") })
	st := a.statuses.waitFor(t, "naming the stranger", func(st browser.Status) bool { return strings.Contains(st.Reason, "not one of your infers") })
	for _, want := range []string{"port " + strconv.Itoa(port), "not one of your infers", "infer doctor"} {
		if !strings.Contains(st.Reason, want) {
			t.Errorf("reason %q does not say %q", st.Reason, want)
		}
	}
	ln.Close()
	select {
	case <-a.held:
	case <-time.After(guard):
		t.Fatal("the seat did not take the port once it was free")
	}
}

// TestNewRefusesBadOptions: what retrying cannot fix fails at once.
func TestNewRefusesBadOptions(t *testing.T) {
	for name, o := range map[string]Options{
		"no home":  {Bridge: bridge.Options{Token: token}},
		"no token": {Home: filepath.Join(os.TempDir(), "x")},
		"negative": {Home: filepath.Join(os.TempDir(), "x"), Bridge: bridge.Options{Token: token}, ConnectWait: -time.Second},
	} {
		if s, err := New(o); err == nil {
			s.Close()
			t.Errorf("%s: New succeeded", name)
		}
	}
}

// TestGuestWaitsForTheHoldersExtension: a guest's call made before the
// holder's extension connected waits, saying whose browser it waits
// for, and succeeds once the extension connects to the holder.
func TestGuestWaitsForTheHoldersExtension(t *testing.T) {
	h, port := home(t), freePort(t)
	a := start(t, h, port, guard, token)
	<-a.held
	b := start(t, h, port, guard, token)
	got := make(chan error, 1)
	go func() {
		_, err := do(t, b.Seat)
		got <- err
	}()
	st := b.statuses.waitFor(t, "saying it waits", func(st browser.Status) bool {
		return strings.Contains(st.Reason, "waiting up to 30s for the browser extension to connect")
	})
	if !strings.Contains(st.Reason, "this infer uses the browser of infer test in /projects/") {
		t.Errorf("the guest's reason does not say whose browser it waits for: %q", st.Reason)
	}
	extension(t, port, token)
	if err := <-got; err != nil {
		t.Fatalf("the guest's call failed although the holder's extension connected: %v", err)
	}
}
