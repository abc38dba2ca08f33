package bridge

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/internal/syncbuf"
)

func TestAuthLimiterHoldsBackPastTheBurstAndForgets(t *testing.T) {
	t.Parallel()
	l := newAuthLimiter(Options{AuthFailureBurst: 3, AuthBackoff: 100 * time.Millisecond, AuthBackoffMax: time.Second, AuthFailureWindow: time.Minute})
	start := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	want := []time.Duration{0, 0, 0, 100, 200, 400, 800, 1000, 1000}
	now := start
	for i, w := range want {
		now = now.Add(time.Second)
		if got := l.failure(now); got != w*time.Millisecond {
			t.Fatalf("failure %d: hold back %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
	// A quiet minute later the count has started over.
	now = now.Add(time.Minute + time.Second)
	if got := l.failure(now); got != 0 {
		t.Fatalf("after a quiet window: hold back %v, want none", got)
	}
	// Failures that keep coming never let the count reset.
	for range 100 {
		now = now.Add(30 * time.Second)
		l.failure(now)
	}
	if got := l.failure(now.Add(30 * time.Second)); got != time.Second {
		t.Fatalf("a slow steady guesser is held back %v, want the cap", got)
	}
}

func TestRefusalLogSumsUpAFlood(t *testing.T) {
	t.Parallel()
	logs := &syncbuf.Buffer{}
	r := newRefusalLog(slog.New(slog.NewTextHandler(logs, nil)), 50*time.Millisecond)
	for range 40 {
		r.refused(refusedToken, "bridge: refused: wrong token", "wrong token")
	}
	r.refused(refusedOrigin, "bridge: refused: origin", "origin")
	if got := strings.Count(logs.String(), "\n"); got != 2 {
		t.Fatalf("%d lines for 40 refusals of one kind and one of another, want 2:\n%s", got, logs)
	}
	deadline := time.Now().Add(guard)
	for !strings.Contains(logs.String(), "count=39") {
		if time.Now().After(deadline) {
			t.Fatalf("no summary line:\n%s", logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "kind=token") || !strings.Contains(logs.String(), "wrong token") {
		t.Fatalf("the summary does not say what was refused:\n%s", logs)
	}
	r.close()
}

func TestRefusalLogFlushesOnClose(t *testing.T) {
	t.Parallel()
	logs := &syncbuf.Buffer{}
	r := newRefusalLog(slog.New(slog.NewTextHandler(logs, nil)), time.Hour)
	for range 10 {
		r.refused(refusedHello, "bridge: refused: no hello", "no hello")
	}
	r.close()
	if !strings.Contains(logs.String(), "count=9") {
		t.Fatalf("the count was lost at close:\n%s", logs)
	}
	// After close every refusal is written at once: nothing is left to
	// sum it up later.
	r.refused(refusedHello, "bridge: refused: late", "late")
	if !strings.Contains(logs.String(), "late") {
		t.Fatalf("a refusal after close was not logged:\n%s", logs)
	}
}

// wrongHello dials, sends a hello with a wrong token and returns the
// socket without waiting for the answer.
func wrongHello(t *testing.T, ts *testServer) *websocket.Conn {
	t.Helper()
	ws := mustDial(t, ts.Server)
	ws.SetWriteDeadline(time.Now().Add(guard))
	if err := ws.WriteMessage(websocket.TextMessage, wire.MustEncode(wire.BrowserHello{Token: "guess", ExtensionVersion: "x"})); err != nil {
		t.Fatal(err)
	}
	return ws
}

// closedAfter reports, on its channel, when the server closed ws.
func closedAfter(ws *websocket.Conn) <-chan time.Time {
	ch := make(chan time.Time, 1)
	go func() {
		ws.SetReadDeadline(time.Now().Add(2 * guard))
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				ch <- time.Now()
				return
			}
		}
	}()
	return ch
}

func TestRepeatedWrongTokensAreHeldBack(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) {
		o.AuthFailureBurst = 2
		o.AuthBackoff = 150 * time.Millisecond
	})
	for i, atLeast := range []time.Duration{0, 0, 150 * time.Millisecond, 300 * time.Millisecond} {
		start := time.Now()
		ws := wrongHello(t, ts)
		code, _ := readClose(t, ws)
		if code != websocket.ClosePolicyViolation {
			t.Fatalf("attempt %d: close code %d, want 1008", i+1, code)
		}
		// A lower bound only: the server waits at least this long on
		// purpose, however slow the machine.
		if took := time.Since(start); took < atLeast {
			t.Fatalf("attempt %d was answered after %v, want at least %v", i+1, took, atLeast)
		}
	}
}

func TestTheRightTokenIsNeverHeldBack(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) {
		o.AuthFailureBurst = 1
		o.AuthBackoff = time.Minute // far longer than the test
	})
	first := wrongHello(t, ts)
	readClose(t, first) // within the burst
	held := closedAfter(wrongHello(t, ts))
	// The held-back socket's refusal is certain by now, or very soon;
	// either way it must not have been answered yet.
	connectRaw(t, ts, "right")
	select {
	case <-held:
		t.Fatal("the wrong token was answered before its hold-back ended")
	default:
	}
	ts.waitStatus(t, isConnected)
}

func TestHeldBackSocketsDoNotTakeHandshakeSlots(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) {
		o.MaxPendingHandshakes = 2
		o.AuthFailureBurst = 1
		o.AuthBackoff = time.Minute
	})
	waitHeld := func(n int) {
		t.Helper()
		deadline := time.Now().Add(guard)
		for len(ts.penalty) < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d wrong hellos held back, want %d", len(ts.penalty), n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	first := wrongHello(t, ts)
	readClose(t, first)
	first.Close() // frees its slot without waiting for the close grace
	heldA := closedAfter(wrongHello(t, ts))
	waitHeld(1)
	heldB := closedAfter(wrongHello(t, ts))
	waitHeld(2)
	// Both penalty slots are taken: the next wrong token is refused at
	// once rather than held, so a flood cannot make the server keep
	// sockets without bound.
	third := wrongHello(t, ts)
	if code, _ := readClose(t, third); code != websocket.ClosePolicyViolation {
		t.Fatalf("close code %d, want 1008", code)
	}
	third.Close()
	// The held-back sockets took no handshake slot: the real extension
	// gets in.
	connectRaw(t, ts, "right")
	select {
	case <-heldA:
		t.Fatal("a held-back socket was released early")
	case <-heldB:
		t.Fatal("a held-back socket was released early")
	default:
	}
}

func TestStatusWrongBearerIsHeldBackTheRightOneIsNot(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) {
		o.AuthFailureBurst = 1
		o.AuthBackoff = 200 * time.Millisecond
		o.AuthBackoffMax = time.Minute
	})
	if code, _ := statusBody(t, ts.Server, "Bearer nope"); code != http.StatusUnauthorized {
		t.Fatalf("wrong bearer: %d", code)
	}
	start := time.Now()
	if code, _ := statusBody(t, ts.Server, "Bearer nope"); code != http.StatusUnauthorized {
		t.Fatalf("wrong bearer: %d", code)
	}
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Fatalf("the second wrong bearer was answered after %v, want at least 200ms", took)
	}
	// The next failure is held a long time; the right token meanwhile is
	// answered.
	held := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(ts.Port())+"/status", nil)
		req.Header.Set("Authorization", "Bearer still-wrong")
		resp, err := plainHTTP.Do(req)
		if err != nil {
			held <- 0
			return
		}
		resp.Body.Close()
		held <- resp.StatusCode
	}()
	deadline := time.Now().Add(guard)
	for len(ts.penalty) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the wrong bearer was not held back")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if code, _ := statusBody(t, ts.Server, "Bearer "+testToken); code != http.StatusOK {
		t.Fatalf("right bearer during a hold-back: %d", code)
	}
	select {
	case code := <-held:
		t.Fatalf("the held-back request was answered (%d) before the right one", code)
	default:
	}
	ts.Close() // ends the hold-back
	if code := <-held; code != http.StatusUnauthorized && code != 0 {
		t.Fatalf("held-back request ended with %d", code)
	}
}

func TestAWrongTokenFloodIsLoggedInAFewLines(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) { o.AuthFailureBurst = 1000 })
	const attempts = 30
	for range attempts {
		ws := wrongHello(t, ts)
		readClose(t, ws)
		ws.Close() // else its slot stays taken for the close grace
	}
	ts.Close()
	logs := ts.logs.String()
	if n := strings.Count(logs, "an extension tried a wrong token"); n != 2 {
		t.Fatalf("%d log lines mention the wrong token, want the first refusal and one summary:\n%s", n, logs)
	}
	if !strings.Contains(logs, "count=29") {
		t.Fatalf("the summary does not count the rest:\n%s", logs)
	}
}

// TestRefusalLogLinesReadCleanlyAsJSON: the caller's text is quoted once
// (by the handler, not also by the bridge) and durations are human
// strings, not nanoseconds.
func TestRefusalLogLinesReadCleanlyAsJSON(t *testing.T) {
	t.Parallel()
	logs := &syncbuf.Buffer{}
	ts := startServer(t, func(o *Options) { o.Logger = slog.New(slog.NewJSONHandler(logs, nil)) })
	for range 2 {
		ws := mustDial(t, ts.Server)
		ws.WriteMessage(websocket.TextMessage, wire.MustEncode(wire.BrowserHello{Token: "wrong", ExtensionVersion: "1.12.1"}))
		readClose(t, ws)
	}
	long := strings.Repeat("h", 200)
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(ts.Port())+"/status", nil)
	req.Host = long
	if resp, err := plainHTTP.Do(req); err == nil {
		resp.Body.Close()
	}
	ts.Close() // sums up the second refusal
	out := logs.String()
	if !strings.Contains(out, `"extension_version":"1.12.1"`) {
		t.Errorf("the version is not logged as plain text:\n%s", out)
	}
	if !strings.Contains(out, `"within":"10s"`) {
		t.Errorf("the summary's window is not a human duration:\n%s", out)
	}
	if !strings.Contains(out, `"host":"`+strings.Repeat("h", 100)+`…"`) {
		t.Errorf("a long Host is not cut to 100 characters:\n%s", out)
	}
	if strings.Contains(out, `\"`) {
		t.Errorf("a value is quoted twice:\n%s", out)
	}
}
