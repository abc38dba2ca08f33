package sim

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
)

// logWatch is a slog handler that counts records by message, so a test can
// wait for the client to have made a decision it cannot otherwise see.
type logWatch struct {
	mu     sync.Mutex
	counts map[string]int
	wake   chan struct{}
}

func newLogWatch() *logWatch {
	return &logWatch{counts: map[string]int{}, wake: make(chan struct{}, 1)}
}

func (w *logWatch) Enabled(context.Context, slog.Level) bool { return true }
func (w *logWatch) WithAttrs([]slog.Attr) slog.Handler       { return w }
func (w *logWatch) WithGroup(string) slog.Handler            { return w }
func (w *logWatch) Handle(_ context.Context, r slog.Record) error {
	w.mu.Lock()
	w.counts[r.Message]++
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return nil
}

func (w *logWatch) count(msg string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counts[msg]
}

// waitFor blocks until msg was logged n times.
func (w *logWatch) waitFor(t *testing.T, msg string, n int) {
	t.Helper()
	deadline := time.After(guard)
	for w.count(msg) < n {
		select {
		case <-w.wake:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatalf("%q logged %d times, want %d", msg, w.count(msg), n)
		}
	}
}

func faultyClient(url string, f *Faults, b Browser, log *logWatch) *Client {
	opts := ClientOptions{URL: url, Token: "t", Browser: f.Browser(b), Faults: f,
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond}
	if log != nil {
		opts.Logger = slog.New(log)
	}
	return NewClient(opts)
}

func command(id string) string {
	return `{"type":"browser_command","id":"` + id + `","action":"navigate","url":"https://a.example/","timeout_ms":5000}`
}

func TestLatencyDelaysTheBrowserPastTheTimeout(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	c := faultyClient(rs.url, &Faults{Latency: time.Hour}, &Minimal{}, nil)
	runClient(t, c)
	ws := rs.accept(t)
	send(t, ws, `{"type":"browser_command","id":"slow","action":"navigate","url":"https://a.example/","timeout_ms":50}`)
	r := readFrame(t, ws).(wire.BrowserResult)
	if r.ID != "slow" || !strings.Contains(r.Error, "timed out") {
		t.Fatalf("result = %+v, want the command's timeout: the latency outlasted it", r)
	}
	if (&Faults{}).Browser(&Minimal{}) == nil || (*Faults)(nil).Browser(nil) != nil {
		t.Error("no latency should leave the browser as it is")
	}
}

func TestDropResultsWithProbabilityOneSendsNothing(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	log := newLogWatch()
	c := faultyClient(rs.url, &Faults{DropResults: 1}, &Minimal{}, log)
	runClient(t, c)
	ws := rs.accept(t)
	for _, id := range []string{"a", "b", "c"} {
		send(t, ws, command(id))
	}
	log.waitFor(t, "sim: fault: dropped a browser_result", 3)
	// Nothing was written for them: the next frame is this one.
	if err := c.Send(ctxGuard(t), wire.ListSkills{}); err != nil {
		t.Fatal(err)
	}
	if f := readFrame(t, ws); f.FrameType() != (wire.ListSkills{}).FrameType() {
		t.Fatalf("got %s, want no result before list_skills", f.FrameType())
	}
}

// dropRun sends n commands with DropResults 0.5 and the given seed, and
// returns how many results arrived.
func dropRun(t *testing.T, seed uint64, n int) int {
	rs := newRawServer(t)
	log := newLogWatch()
	ctx, cancel := context.WithCancel(context.Background())
	c := faultyClient(rs.url, &Faults{DropResults: 0.5, Seed: seed}, &Minimal{}, log)
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	ws := rs.accept(t)
	for i := range n {
		send(t, ws, command(string(rune('A'+i%26))+string(rune('a'+i/26))))
	}
	log.waitFor(t, "sim: fault: dropped a browser_result", 1)
	c.Send(ctxGuard(t), wire.ListSkills{}) // a marker after the last decision
	results := 0
	for {
		f := readFrame(t, ws)
		if f.FrameType() == (wire.ListSkills{}).FrameType() {
			if results+log.count("sim: fault: dropped a browser_result") == n {
				return results
			}
			c.Send(ctxGuard(t), wire.ListSkills{}) // results still on their way
			continue
		}
		results++
	}
}

func TestDropResultsIsReproducibleWithASeed(t *testing.T) {
	t.Parallel()
	const n = 40
	first := dropRun(t, 7, n)
	if first == 0 || first == n {
		t.Fatalf("%d of %d results arrived with p=0.5; want some dropped and some sent", first, n)
	}
	if again := dropRun(t, 7, n); again != first {
		t.Errorf("seed 7 gave %d results, then %d", first, again)
	}
}

func TestDuplicateResultsSendsEachResultTwice(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	c := faultyClient(rs.url, &Faults{DuplicateResults: 1}, &Minimal{}, nil)
	runClient(t, c)
	ws := rs.accept(t)
	send(t, ws, command("dup"))
	for range 2 {
		if r := readFrame(t, ws).(wire.BrowserResult); r.ID != "dup" || r.Error != "" {
			t.Fatalf("result %+v", r)
		}
	}
}

func TestMalformedSendsGarbageBeforeTheResult(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	c := faultyClient(rs.url, &Faults{Malformed: 1}, &Minimal{}, nil)
	runClient(t, c)
	ws := rs.accept(t)
	send(t, ws, command("m"))
	ws.SetReadDeadline(time.Now().Add(guard))
	_, data, err := ws.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wire.Decode(data); !errors.Is(err, wire.ErrMalformed) {
		t.Fatalf("first frame %q decodes (%v), want a malformed one", data, err)
	}
	if r := readFrame(t, ws).(wire.BrowserResult); r.ID != "m" {
		t.Fatalf("then %+v, want the real result", r)
	}
}

func TestLateResultsArriveAfterInfersTimeout(t *testing.T) {
	t.Parallel()
	srv, err := bridge.Listen(bridge.Options{Token: testToken, CommandTimeout: 100 * time.Millisecond, CloseGrace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background()) }()
	t.Cleanup(func() { srv.Close(); <-served })
	results := 0
	var mu sync.Mutex
	c := NewClient(ClientOptions{URL: srv.URL(), Token: testToken, Browser: &Minimal{}, Faults: &Faults{Late: 1500 * time.Millisecond},
		Tap: TapFunc(func(dir Direction, data []byte) {
			if typ, _ := wire.PeekType(data); dir == ExtToSrv && typ == (wire.BrowserResult{}).FrameType() {
				mu.Lock()
				results++
				mu.Unlock()
			}
		})})
	runClient(t, c)
	if err := c.WaitConnected(ctxGuard(t)); err != nil {
		t.Fatal(err)
	}
	_, err = srv.Navigate(ctxGuard(t), "https://a.example/")
	if err == nil || !strings.Contains(err.Error(), "100ms") {
		t.Fatalf("Navigate = %v, want infer's timeout", err)
	}
	// infer waits timeout_ms plus a grace of 500ms. The result still comes,
	// late, and infer ignores it without dropping
	// the connection.
	deadline := time.After(guard)
	for {
		mu.Lock()
		n := results
		mu.Unlock()
		if n == 1 {
			break
		}
		select {
		case <-deadline:
			t.Fatal("the late result was never sent")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if st := srv.Status(); st.State != browser.Connected || c.Connects() != 1 {
		t.Fatalf("after the late result: %+v, connects %d", st, c.Connects())
	}
}

func TestDisconnectAfterDropsTheConnectionOnceAtTheNthCommand(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	c := faultyClient(rs.url, &Faults{DisconnectAfter: 2}, &Minimal{}, nil)
	runClient(t, c)
	ws := rs.accept(t)
	send(t, ws, command("one"))
	if r := readFrame(t, ws).(wire.BrowserResult); r.ID != "one" {
		t.Fatalf("first result %+v", r)
	}
	send(t, ws, command("two"))
	ws.SetReadDeadline(time.Now().Add(guard))
	if _, data, err := ws.ReadMessage(); err == nil {
		t.Fatalf("got %s, want the connection dropped instead of a result", data)
	} else if websocket.IsCloseError(err, websocket.CloseGoingAway) {
		t.Fatalf("the socket was closed politely (%v); a dropped one sends no close frame", err)
	}
	again := rs.accept(t)
	for _, id := range []string{"three", "four"} {
		send(t, again, command(id))
		if r := readFrame(t, again).(wire.BrowserResult); r.ID != id {
			t.Fatalf("after reconnecting: %+v", r)
		}
	}
}

func TestReconnectStormConnectsAndDisconnectsFirst(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	c := faultyClient(rs.url, &Faults{ReconnectStorm: 3}, &Minimal{}, nil)
	runClient(t, c)
	for i := range 3 {
		ws := rs.accept(t)
		ws.SetReadDeadline(time.Now().Add(guard))
		if _, _, err := ws.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseGoingAway) {
			t.Fatalf("storm connection %d: %v, want it closed", i+1, err)
		}
	}
	ws := rs.accept(t)
	send(t, ws, command("calm"))
	if r := readFrame(t, ws).(wire.BrowserResult); r.ID != "calm" {
		t.Fatalf("after the storm: %+v", r)
	}
	if n := c.Connects(); n != 1 {
		t.Errorf("Connects() = %d: storm connections should not count", n)
	}
	if len(rs.hello) != 0 {
		for range 4 {
			if h := <-rs.hello; h.Token != "t" {
				t.Errorf("hello %+v", h)
			}
		}
	}
}

func TestWrongTokenIsRefusedAndNeverLeaks(t *testing.T) {
	t.Parallel()
	refused := make(chan string, 16)
	srv := startBridge(t, 0, nil, func(st browser.Status) {
		if st.Reason != "" {
			select {
			case refused <- st.Reason:
			default:
			}
		}
	})
	var mu sync.Mutex
	var tapped []string
	c := NewClient(ClientOptions{URL: srv.URL(), Token: testToken, Browser: &Minimal{}, Faults: &Faults{WrongToken: true},
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond,
		Tap: TapFunc(func(_ Direction, data []byte) {
			mu.Lock()
			tapped = append(tapped, string(data))
			mu.Unlock()
		})})
	runClient(t, c)
	select {
	case reason := <-refused:
		if !strings.Contains(reason, "wrong token") {
			t.Errorf("infer's reason: %q", reason)
		}
	case <-time.After(guard):
		t.Fatal("infer never refused the wrong token")
	}
	deadline := time.After(guard)
	for {
		var rejected *RejectedError
		if errors.As(c.LastError(), &rejected) {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("LastError = %v, want a RejectedError", c.LastError())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if c.Connects() != 0 {
		t.Error("a client with a wrong token counted as connected")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, f := range tapped {
		if strings.Contains(f, testToken) || strings.Contains(f, wrongToken) {
			t.Errorf("a token reached the tap: %s", f)
		}
	}
}

func TestFaultValidation(t *testing.T) {
	t.Parallel()
	for i, f := range []*Faults{{DropResults: 1.5}, {Malformed: -0.1}, {Latency: -time.Second}, {DisconnectAfter: -1}} {
		if err := f.Validate(); err == nil {
			t.Errorf("bad faults #%d validated", i)
		}
	}
	if err := NewClient(ClientOptions{URL: "ws://x", Token: "t", Faults: &Faults{DuplicateResults: 2}}).Run(context.Background()); err == nil || !strings.Contains(err.Error(), "probability") {
		t.Errorf("Run with a bad fault: %v", err)
	}
	f := &Faults{Latency: time.Second, WrongToken: true, Seed: 3}
	if !f.Active() || f.String() != "latency=1s wrong-token=true seed=3" {
		t.Errorf("String() = %q", f.String())
	}
	if (&Faults{}).Active() || (*Faults)(nil).Active() {
		t.Error("no fault should be inactive")
	}
}
