package bridge

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/sim"
)

func isFlapping(st browser.Status) bool { return st.Flapping > 0 }

// TestTwoExtensionsTakingTurnsAreCalledFlapping: two simulated extensions
// with the same token redial whenever they are replaced, as two browsers
// with the real extension do. The bridge says so in its status, its log
// (once, not per turn) and /status.
func TestTwoExtensionsTakingTurnsAreCalledFlapping(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) { o.FlapWindow = time.Hour })
	for _, name := range []string{"browser-a", "browser-b"} {
		c := sim.NewClient(sim.ClientOptions{
			URL: ts.URL(), Token: testToken, ExtensionVersion: name, Browser: &sim.Minimal{},
			MinBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); c.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	st := ts.waitStatus(t, isFlapping)
	if st.State != browser.Connected || st.Flapping < 3 {
		t.Errorf("status %+v, want connected and at least 3 replacements", st)
	}
	_, rep := statusBody(t, ts.Server, "Bearer "+testToken)
	if rep.Flapping == nil || rep.Flapping.Replaced < 3 || rep.Flapping.WindowSeconds != 3600 {
		t.Errorf("/status flapping = %+v", rep.Flapping)
	}
	// Let them take a few more turns: the warning is logged once.
	for range 5 {
		ts.waitStatus(t, isFlapping)
	}
	logs := ts.logs.String()
	if n := strings.Count(logs, "keep replacing each other"); n != 1 {
		t.Errorf("the flapping is logged %d times, want once:\n%s", n, logs)
	}
	if !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, `within=1h0m0s`) {
		t.Errorf("no warning with its window:\n%s", logs)
	}
}

// TestFlappingPausesCommands: while two browsers take turns on the socket,
// a command is refused at once with browser.ErrFlapping and a reason that
// says what to do, and neither browser receives it, whichever holds the
// socket at that moment. That goes on after one of them is closed, until
// the window passes (see TestCommandsFlowAgainAfterTheFlapping).
func TestFlappingPausesCommands(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) { o.FlapWindow = time.Hour })
	var received atomic.Int32
	stops := make([]func(), 2)
	for i, name := range []string{"browser-a", "browser-b"} {
		c := sim.NewClient(sim.ClientOptions{
			URL: ts.URL(), Token: testToken, ExtensionVersion: name,
			Browser: browserFunc(func(context.Context, wire.BrowserCommand) wire.BrowserResult {
				received.Add(1)
				return wire.BrowserResult{URL: "https://" + name + ".test/"}
			}),
			MinBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond,
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); c.Run(ctx) }()
		stops[i] = sync.OnceFunc(func() { cancel(); <-done })
		t.Cleanup(stops[i])
	}
	ts.waitStatus(t, isFlapping)
	cmd := browser.Command{Action: browser.Read, Selector: "h1", Timeout: guard}
	for range 20 {
		_, err := ts.Do(ctxGuard(t), cmd)
		if !errors.Is(err, browser.ErrFlapping) {
			t.Fatalf("a command while two browsers take turns: %v, want browser.ErrFlapping", err)
		}
		msg := err.Error()
		for _, want := range []string{"browser read: two browsers with the extension and this token keep replacing each other",
			"browser commands are paused until one of them is closed", "disconnect the extension in one of them"} {
			if !strings.Contains(msg, want) {
				t.Fatalf("the error %q does not say %q", msg, want)
			}
		}
	}
	// One browser is closed; the other now holds the socket alone, but a
	// window has not passed yet.
	stops[0]()
	for end := time.Now().Add(guard); ; time.Sleep(5 * time.Millisecond) {
		if st := ts.Status(); st.State == browser.Connected && st.ExtensionVersion == "browser-b" {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("browser-b did not hold the socket: %+v", ts.Status())
		}
	}
	if _, err := ts.Do(ctxGuard(t), cmd); !errors.Is(err, browser.ErrFlapping) {
		t.Fatalf("a command within the window: %v, want browser.ErrFlapping", err)
	}
	if n := received.Load(); n != 0 {
		t.Errorf("the browsers received %d commands while paused", n)
	}
	// The connection that set the status writes its log line after
	// releasing the server's lock, so the line may trail the status.
	for end := time.Now().Add(guard); !strings.Contains(ts.logs.String(), "browser commands are paused"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the log does not say commands are paused:\n%s", ts.logs.String())
		}
	}
}

// TestCommandsFlowAgainAfterTheFlapping: once a window passes without a
// replacement, commands reach the browser that stayed.
func TestCommandsFlowAgainAfterTheFlapping(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) {
		o.FlapReplacements = 1
		o.FlapWindow = 100 * time.Millisecond
	})
	connectRaw(t, ts, "a")
	b := connectRaw(t, ts, "b")
	ts.waitStatus(t, isFlapping)
	ts.waitStatus(t, func(st browser.Status) bool { return st.Flapping == 0 })
	out := doAsync(ts.Server, ctxGuard(t), browser.Command{Action: browser.Read, Selector: "h1"})
	got := b.nextCommand()
	content := "Hello"
	b.writeFrame(wire.BrowserResult{ID: got.ID, URL: "https://b.test/", Content: &content})
	if o := waitOutcome(t, out); o.err != nil || o.res.Content != "Hello" {
		t.Fatalf("after the flapping: %+v %v", o.res, o.err)
	}
	if !strings.Contains(ts.logs.String(), "browser commands flow again") {
		t.Errorf("the end is not logged with commands flowing again:\n%s", ts.logs)
	}
}

// TestAFewReplacementsAreNotFlapping: reloading the extension replaces a
// connection now and then; that is not two browsers fighting.
func TestAFewReplacementsAreNotFlapping(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) { o.FlapWindow = time.Hour })
	for range 3 { // two replacements, one short of the default three
		connectRaw(t, ts, "reloaded")
		if st := ts.waitStatus(t, isConnected); st.Flapping != 0 {
			t.Fatalf("status %+v after a reload", st)
		}
	}
	_, rep := statusBody(t, ts.Server, "Bearer "+testToken)
	if rep.Flapping != nil {
		t.Errorf("/status flapping = %+v", rep.Flapping)
	}
	last := connectRaw(t, ts, "third replacement")
	if st := ts.waitStatus(t, isConnected); st.Flapping != 3 {
		t.Errorf("status %+v after three replacements, want Flapping 3", st)
	}
	// Between two turns the live connection may be gone; the flapping
	// is still news.
	last.ws.Close()
	if st := ts.waitStatus(t, isDisconnected); st.Flapping != 3 {
		t.Errorf("status %+v after the live connection went, want Flapping 3", st)
	}
}

// TestFlappingEndsAfterAQuietWindow: once a whole window passes without a
// replacement, the status says so.
func TestFlappingEndsAfterAQuietWindow(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) {
		o.FlapReplacements = 1
		o.FlapWindow = 100 * time.Millisecond
	})
	connectRaw(t, ts, "a")
	connectRaw(t, ts, "b")
	ts.waitStatus(t, isFlapping)
	st := ts.waitStatus(t, func(st browser.Status) bool { return st.Flapping == 0 })
	if st.State != browser.Connected || st.ExtensionVersion != "b" {
		t.Errorf("status after the flapping ended: %+v", st)
	}
	if !strings.Contains(ts.logs.String(), "stopped replacing each other") {
		t.Errorf("the end is not logged:\n%s", ts.logs)
	}
}

// TestFlappingCountsOnlyTheWindow checks the count against times set by
// hand: replacements older than the window no longer count.
func TestFlappingCountsOnlyTheWindow(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) { o.FlapWindow = time.Minute })
	now := time.Now()
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.replaced = []time.Time{now.Add(-2 * time.Minute), now.Add(-time.Minute), now.Add(-30 * time.Second), now.Add(-time.Second)}
	if n := ts.flappingLocked(now); n != 0 || len(ts.replaced) != 2 {
		t.Errorf("flapping %d with %d kept, want 0 with 2", n, len(ts.replaced))
	}
	ts.replaced = append(ts.replaced, now)
	if n := ts.flappingLocked(now); n != 3 {
		t.Errorf("flapping %d, want 3", n)
	}
}

// TestSetTokenClosesConnectionsOfTheOldToken: after a rotation the old
// token stops working at once, connections made with it are closed with
// a reason that says what to do, and the new token gets in.
func TestSetTokenClosesConnectionsOfTheOldToken(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	x := connectRaw(t, ts, "old")
	if err := ts.SetToken(testToken); err != nil {
		t.Fatal(err)
	}
	const rotated = "the-rotated-token-0123456789abcdef"
	if err := ts.SetToken(rotated); err != nil {
		t.Fatal(err)
	}
	code, text := readClose(t, x.ws)
	if code != websocket.ClosePolicyViolation || !strings.Contains(text, "token changed") {
		t.Errorf("old connection closed with %d %q", code, text)
	}
	st := ts.waitStatus(t, isDisconnected)
	if !strings.Contains(st.Reason, "paste the new token") {
		t.Errorf("status reason %q", st.Reason)
	}

	ws := mustDial(t, ts.Server)
	ws.WriteMessage(websocket.TextMessage, wire.MustEncode(wire.BrowserHello{Token: testToken, ExtensionVersion: "old"}))
	if code, _ := readClose(t, ws); code != websocket.ClosePolicyViolation {
		t.Errorf("the old token was answered with %d, want 1008", code)
	}
	if code, _ := statusBody(t, ts.Server, "Bearer "+testToken); code != 401 {
		t.Errorf("/status with the old token: %d", code)
	}
	if code, _ := statusBody(t, ts.Server, "Bearer "+rotated); code != 200 {
		t.Errorf("/status with the new token: %d", code)
	}
	ws = mustDial(t, ts.Server)
	ws.WriteMessage(websocket.TextMessage, wire.MustEncode(wire.BrowserHello{Token: rotated, ExtensionVersion: "new"}))
	ts.waitStatus(t, isConnected)
	if err := ts.SetToken(""); err == nil {
		t.Error("an empty token was accepted")
	}
}
