package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/internal/leaks"
	"github.com/infer-workspace/infer/internal/syncbuf"

	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leaks.Options()...)
}

const testToken = "sim-test-token"

// guard bounds waits for things that should happen almost at once; it is
// a "did not hang" check, never a speed check.
const guard = 10 * time.Second

func ctxGuard(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return ctx
}

// runClient runs c until the test ends.
func runClient(t *testing.T, c *Client) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func newTestClient(url, token string, b Browser) *Client {
	return NewClient(ClientOptions{
		URL:        url,
		Token:      token,
		Browser:    b,
		MinBackoff: 10 * time.Millisecond,
		MaxBackoff: 40 * time.Millisecond,
	})
}

// startBridge runs a real bridge server on port (0 = any).
func startBridge(t *testing.T, port int, panel bridge.Panel, onStatus func(browser.Status)) *bridge.Server {
	t.Helper()
	srv, err := bridge.Listen(bridge.Options{Port: port, Token: testToken, Panel: panel, OnStatus: onStatus, CloseGrace: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background()) }()
	t.Cleanup(func() {
		srv.Close()
		<-served
	})
	return srv
}

// rawServer is a hand-driven stand-in for infer: it accepts any hello,
// acks it, and hands each socket to the test.
type rawServer struct {
	url   string
	conns chan rawConn
	hello chan wire.BrowserHello
}

// rawConn is one accepted socket; acked closes once its hello_ack is
// written, so the test never writes beside the handler.
type rawConn struct {
	ws    *websocket.Conn
	acked chan struct{}
}

func newRawServer(t *testing.T) *rawServer {
	t.Helper()
	rs := &rawServer{conns: make(chan rawConn, 16), hello: make(chan wire.BrowserHello, 16)}
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		_, data, err := ws.ReadMessage()
		if err != nil {
			ws.Close()
			return
		}
		f, _ := wire.Decode(data)
		h, _ := f.(wire.BrowserHello)
		rs.hello <- h
		// Queue the socket before acking it: the client dials its next
		// connection only after this ack, so the queue keeps dial order.
		// Queued after the ack, a later handler could overtake this one
		// and the test would take the wrong socket.
		rc := rawConn{ws: ws, acked: make(chan struct{})}
		rs.conns <- rc
		ws.WriteMessage(websocket.TextMessage, wire.MustEncode(wire.BrowserHelloAck{}))
		close(rc.acked)
	}))
	t.Cleanup(srv.Close)
	rs.url = "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws"
	return rs
}

// accept waits for the client's next authenticated socket.
func (rs *rawServer) accept(t *testing.T) *websocket.Conn {
	t.Helper()
	select {
	case rc := <-rs.conns:
		t.Cleanup(func() { rc.ws.Close() })
		<-rc.acked
		return rc.ws
	case <-time.After(guard):
		t.Fatal("the client never connected")
		return nil
	}
}

func send(t *testing.T, ws *websocket.Conn, msg string) {
	t.Helper()
	ws.SetWriteDeadline(time.Now().Add(guard))
	if err := ws.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatalf("server write: %v", err)
	}
}

// readFrame reads the client's next frame.
func readFrame(t *testing.T, ws *websocket.Conn) wire.Frame {
	t.Helper()
	ws.SetReadDeadline(time.Now().Add(guard))
	_, data, err := ws.ReadMessage()
	if err != nil {
		t.Fatalf("server read: %v", err)
	}
	f, err := wire.Decode(data)
	if err != nil {
		t.Fatalf("client sent a malformed frame %q: %v", data, err)
	}
	return f
}

func TestClientSendsHelloWithVersionAndOrigin(t *testing.T) {
	t.Parallel()
	origins := make(chan string, 1)
	rs := newRawServer(t)
	wrapped := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origins <- r.Header.Get("Origin")
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer wrapped.Close()
	c := NewClient(ClientOptions{URL: "ws" + strings.TrimPrefix(wrapped.URL, "http") + "/ws", Token: "t", MinBackoff: time.Hour})
	runClient(t, c)
	if o := <-origins; o != "chrome-extension://infer-sim" {
		t.Errorf("Origin = %q", o)
	}

	c2 := NewClient(ClientOptions{URL: rs.url, Token: "tok", ExtensionVersion: "9.9.9"})
	runClient(t, c2)
	rs.accept(t)
	if h := <-rs.hello; h.Token != "tok" || h.ExtensionVersion != "9.9.9" {
		t.Errorf("hello = %+v", h)
	}
}

func TestClientReconnectsWithBackoffAfterServerRestart(t *testing.T) {
	t.Parallel()
	statuses := make(chan browser.Status, 64)
	onStatus := func(st browser.Status) {
		select {
		case statuses <- st:
		default:
		}
	}
	first := startBridge(t, 0, nil, onStatus)
	port := first.Port()
	c := newTestClient(first.URL(), testToken, &Minimal{})
	runClient(t, c)
	if err := c.WaitConnected(ctxGuard(t)); err != nil {
		t.Fatal(err)
	}
	first.Close()

	// The client retries while nothing listens, then finds the new server
	// on the same port.
	second := startBridge(t, port, nil, onStatus)
	deadline := time.After(guard)
	for second.Status().State != browser.Connected || c.Connects() < 2 {
		select {
		case <-statuses:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			t.Fatalf("the client did not reconnect; last error: %v", c.LastError())
		}
	}
	if n := c.Connects(); n != 2 {
		t.Errorf("Connects() = %d, want 2", n)
	}
	if _, err := second.Navigate(ctxGuard(t), "https://example.com/"); err != nil {
		t.Fatalf("command after reconnecting: %v", err)
	}
}

func TestClientReportsRejectedTokenAndKeepsRetrying(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	reported := false
	srv := startBridge(t, 0, nil, func(st browser.Status) {
		if strings.Contains(st.Reason, "wrong token") {
			mu.Lock()
			reported = true
			mu.Unlock()
		}
	})
	// The server reports a run of refusals once (it summarises floods), so
	// the client's own tap counts the attempts.
	rejections := &rejectionCounter{}
	c := NewClient(ClientOptions{URL: srv.URL(), Token: "not-the-token", Browser: &Minimal{}, MinBackoff: 10 * time.Millisecond, MaxBackoff: 40 * time.Millisecond, Tap: rejections})
	runClient(t, c)
	deadline := time.Now().Add(guard)
	for {
		mu.Lock()
		ok := reported
		mu.Unlock()
		if ok && rejections.count() >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server reported=%v, %d refused attempts; last error %v", ok, rejections.count(), c.LastError())
		}
		time.Sleep(10 * time.Millisecond)
	}
	var rejected *RejectedError
	if err := c.LastError(); !errors.As(err, &rejected) || rejected.Code != websocket.ClosePolicyViolation {
		t.Fatalf("LastError() = %v, want a RejectedError with 1008", err)
	}
	if !strings.Contains(rejected.Error(), "check the token") {
		t.Errorf("rejection message %q does not say what to do", rejected.Error())
	}
	if c.Connects() != 0 {
		t.Error("a refused client counted as connected")
	}
}

func TestOneResultPerCommandID(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	c := newTestClient(rs.url, "t", browserFunc(func(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult {
		if cmd.Selector == "#panic" {
			panic("the page exploded")
		}
		text := "read " + cmd.Selector
		return wire.BrowserResult{ID: "the browser's own wrong id", Content: &text}
	}))
	runClient(t, c)
	ws := rs.accept(t)
	send(t, ws, `{"type":"browser_command","id":"a","action":"read","selector":"#x","timeout_ms":1000}`)
	send(t, ws, `{"type":"browser_command","id":"a","action":"read","selector":"#x","timeout_ms":1000}`)
	send(t, ws, `{"type":"browser_command","id":"b","action":"read","selector":"#panic","timeout_ms":1000}`)
	send(t, ws, `{"type":"browser_command","id":"c","action":"read","selector":"#y"}`)
	got := map[string][]wire.BrowserResult{}
	for range 3 {
		r, ok := readFrame(t, ws).(wire.BrowserResult)
		if !ok {
			t.Fatal("expected a browser_result")
		}
		got[r.ID] = append(got[r.ID], r)
	}
	// Give a duplicate answer the chance to show up before checking.
	send(t, ws, `{"type":"browser_command","id":"d","action":"tabs"}`)
	if r := readFrame(t, ws).(wire.BrowserResult); r.ID != "d" {
		t.Fatalf("got an extra result for %q", r.ID)
	}
	if len(got["a"]) != 1 || *got["a"][0].Content != "read #x" {
		t.Errorf("results for a: %+v", got["a"])
	}
	if len(got["b"]) != 1 || !strings.Contains(got["b"][0].Error, "the page exploded") {
		t.Errorf("results for the panicking command: %+v", got["b"])
	}
	if len(got["c"]) != 1 {
		t.Errorf("results for c: %+v", got["c"])
	}
}

func TestCommandDeadlineComesFromTimeoutMS(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	budgets := make(chan time.Duration, 2)
	c := newTestClient(rs.url, "t", browserFunc(func(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult {
		dl, ok := ctx.Deadline()
		if !ok {
			budgets <- -1
		} else {
			budgets <- time.Until(dl)
		}
		<-ctx.Done() // a browser that never finishes on its own
		return wire.BrowserResult{Error: "timed out"}
	}))
	runClient(t, c)
	ws := rs.accept(t)
	send(t, ws, `{"type":"browser_command","id":"slow","action":"navigate","url":"http://slow.example/","timeout_ms":150}`)
	if b := <-budgets; b <= 0 || b > 150*time.Millisecond {
		t.Errorf("browser's budget = %v, want at most 150ms", b)
	}
	if r := readFrame(t, ws).(wire.BrowserResult); r.ID != "slow" || r.Error != "timed out" {
		t.Errorf("result = %+v", r)
	}
}

func TestUnknownFramesAndKeepalivesAreIgnored(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	c := newTestClient(rs.url, "t", &Minimal{})
	sub := c.Subscribe()
	defer sub.Close()
	runClient(t, c)
	ws := rs.accept(t)
	send(t, ws, `{"type":"infer_keepalive"}`)
	send(t, ws, `{"type":"some_future_frame","x":1}`)
	send(t, ws, `{"type":"mode","mode":["bad"]}`)
	send(t, ws, `garbage`)
	send(t, ws, `{"type":"interrupted"}`)
	f, err := sub.Next(ctxGuard(t))
	if err != nil || f.FrameType() != (wire.Interrupted{}).FrameType() {
		t.Fatalf("first frame seen = %v %v, want interrupted", f, err)
	}
	// Still connected and answering.
	send(t, ws, `{"type":"browser_command","id":"n","action":"navigate","url":"https://a.example/"}`)
	if r := readFrame(t, ws).(wire.BrowserResult); r.ID != "n" || r.URL != "https://a.example/" {
		t.Errorf("result = %+v", r)
	}
}

func TestSubscriptionKeepsEveryFrameInOrder(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	c := newTestClient(rs.url, "t", nil)
	sub := c.Subscribe()
	defer sub.Close()
	runClient(t, c)
	ws := rs.accept(t)
	const n = 500
	for i := range n {
		send(t, ws, fmt.Sprintf(`{"type":"chat_event","event":{"type":"TEXT_MESSAGE_CONTENT","delta":"%d"}}`, i))
	}
	// Read only after everything was sent: nothing may have been dropped.
	send(t, ws, `{"type":"interrupted"}`)
	ctx := ctxGuard(t)
	for i := range n {
		ev, err := WaitFor[wire.ChatEvent](ctx, sub, nil)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if want := fmt.Sprintf(`{"type":"TEXT_MESSAGE_CONTENT","delta":"%d"}`, i); string(ev.Event) != want {
			t.Fatalf("event %d = %s, want %s", i, ev.Event, want)
		}
	}
	if _, err := WaitFor[wire.Interrupted](ctx, sub, nil); err != nil {
		t.Fatal(err)
	}
	sub.Close()
	if _, err := sub.Next(ctx); !errors.Is(err, ErrSubscriptionClosed) {
		t.Errorf("Next after Close: %v", err)
	}
}

func TestToolRequestsAreMatchedByID(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	c := newTestClient(rs.url, "t", nil)
	runClient(t, c)
	ws := rs.accept(t)
	if err := c.WaitConnected(ctxGuard(t)); err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		res wire.ToolResult
		err error
	}
	results := make(map[string]chan outcome)
	for _, name := range []string{"Bash", "Read"} {
		ch := make(chan outcome, 1)
		results[name] = ch
		go func() {
			res, err := c.ToolRequest(ctxGuard(t), name, "{}")
			ch <- outcome{res, err}
		}()
	}
	reqs := map[string]wire.ToolRequest{}
	for range 2 {
		req := readFrame(t, ws).(wire.ToolRequest)
		reqs[req.ToolName] = req
	}
	send(t, ws, `{"type":"tool_result","id":"unknown-id","success":true,"output":"stray"}`)
	send(t, ws, string(wire.MustEncode(wire.ToolResult{ID: reqs["Read"].ID, Success: true, Output: "read output"})))
	send(t, ws, string(wire.MustEncode(wire.ToolResult{ID: reqs["Bash"].ID, Success: false, Output: "exit 1", Error: "exit status 1"})))
	if o := <-results["Read"]; o.err != nil || o.res.Output != "read output" {
		t.Errorf("Read: %+v %v", o.res, o.err)
	}
	if o := <-results["Bash"]; o.err != nil || o.res.Success || o.res.Output != "exit 1" {
		t.Errorf("Bash: %+v %v", o.res, o.err)
	}
}

func TestPanelCallFailsWhenTheConnectionDrops(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	// Stays disconnected after the drop.
	c := NewClient(ClientOptions{URL: rs.url, Token: "t", MinBackoff: time.Hour, MaxBackoff: time.Hour})
	runClient(t, c)
	ws := rs.accept(t)
	if err := c.WaitConnected(ctxGuard(t)); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 1)
	go func() {
		_, err := c.ListConversations(ctxGuard(t))
		errs <- err
	}()
	if f := readFrame(t, ws); f.FrameType() != (wire.ListConversations{}).FrameType() {
		t.Fatalf("got %s", f.FrameType())
	}
	ws.Close()
	if err := <-errs; !errors.Is(err, ErrDisconnected) {
		t.Fatalf("ListConversations across a drop: %v, want ErrDisconnected", err)
	}
	if _, err := c.ListSkills(ctxGuard(t)); !errors.Is(err, ErrNotConnected) {
		t.Fatalf("ListSkills while disconnected: %v, want ErrNotConnected", err)
	}
}

func TestRunRejectsBadOptions(t *testing.T) {
	t.Parallel()
	if err := NewClient(ClientOptions{Token: "t"}).Run(context.Background()); err == nil || !strings.Contains(err.Error(), "URL") {
		t.Errorf("no URL: %v", err)
	}
	if err := NewClient(ClientOptions{URL: "ws://127.0.0.1:1/ws"}).Run(context.Background()); err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("no token: %v", err)
	}
}

func TestBackoffDoublesWithJitterAndIsCapped(t *testing.T) {
	t.Parallel()
	minD, maxD := 100*time.Millisecond, time.Second
	for n, want := range []time.Duration{100, 200, 400, 800, 1000, 1000, 1000} {
		want *= time.Millisecond
		for range 50 {
			d := backoff(minD, maxD, n)
			if d < want/2 || d > want {
				t.Fatalf("backoff(n=%d) = %v, want within [%v, %v]", n, d, want/2, want)
			}
		}
	}
	if backoff(minD, maxD, 1000) > maxD {
		t.Error("backoff overflows its cap")
	}
}

// browserFunc is a test double of Browser backed by a function.
type browserFunc func(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult

func (f browserFunc) Do(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult {
	return f(ctx, cmd)
}

// rejectionCounter is a test Tap counting refused connection attempts.
type rejectionCounter struct {
	mu sync.Mutex
	n  int
}

func (r *rejectionCounter) Handshake(http.Header)   {}
func (r *rejectionCounter) Frame(Direction, []byte) {}
func (r *rejectionCounter) Event(name string) {
	if name == "rejected" {
		r.mu.Lock()
		r.n++
		r.mu.Unlock()
	}
}
func (r *rejectionCounter) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

func TestRecentIDsForgetsTheOldestAndCatchesRepeats(t *testing.T) {
	t.Parallel()
	r := newRecentIDs(3)
	for _, id := range []string{"a", "b", "c"} {
		if !r.add(id) {
			t.Fatalf("%s reported as a repeat", id)
		}
	}
	if r.add("b") {
		t.Fatal("a repeat within the window was not caught")
	}
	r.add("d") // pushes "a" out
	if !r.add("a") {
		t.Fatal("an id older than the window is remembered forever")
	}
	if len(r.set) != 3 {
		t.Fatalf("window holds %d ids", len(r.set))
	}
}

// TestAConnectionThatFailedWhileGreetingIsNeverCurrent: a connection that
// starts closing before it is attached (a write of the profile's
// after-hello frames failed) must not become the current one: the client
// stays "not connected", and the next connection attaches normally.
func TestAConnectionThatFailedWhileGreetingIsNeverCurrent(t *testing.T) {
	t.Parallel()
	rs := newRawServer(t)
	c := NewClient(ClientOptions{URL: rs.url, Token: "t"})
	dialRaw := func() *websocket.Conn {
		ws, _, err := websocket.DefaultDialer.Dial(rs.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.Close() })
		return ws
	}

	dead := newClientConn(c, dialRaw())
	dead.shutdown(errors.New("write: connection reset by peer"))
	if c.attach(dead) {
		t.Fatal("a closing connection was attached")
	}
	if c.current() != nil {
		t.Fatal("a closing connection became current")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := c.WaitConnected(ctx); err == nil {
		t.Fatal("WaitConnected succeeded with no live connection")
	}
	if _, err := c.ListSkills(context.Background()); !errors.Is(err, ErrNotConnected) {
		t.Fatalf("ListSkills: %v, want ErrNotConnected", err)
	}

	live := newClientConn(c, dialRaw())
	if !c.attach(live) || c.current() != live {
		t.Fatal("the next connection did not attach")
	}
	if err := c.WaitConnected(context.Background()); err != nil {
		t.Fatal(err)
	}
	live.shutdown(errors.New("test over"))
	if c.current() != nil {
		t.Fatal("a closed connection stayed current")
	}
}

// dialCounter counts the client's connection attempts.
type dialCounter struct {
	mu sync.Mutex
	n  int
}

func (d *dialCounter) Handshake(http.Header) {
	d.mu.Lock()
	d.n++
	d.mu.Unlock()
}
func (d *dialCounter) Frame(Direction, []byte) {}
func (d *dialCounter) Event(string)            {}
func (d *dialCounter) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

// TestClientAsksWhetherInferRunsOnceWhileRetrying: pointed at a port
// where nothing listens, or at a web server that is not infer, the client
// keeps retrying as the extension does, and says once, in words, that
// infer may not be running there: not "connection refused" or "bad
// handshake" at every attempt.
func TestClientAsksWhetherInferRunsOnceWhileRetrying(t *testing.T) {
	t.Parallel()
	closed := httptest.NewServer(http.NotFoundHandler())
	refusedURL := "ws" + strings.TrimPrefix(closed.URL, "http") + "/ws"
	closed.Close()
	web := httptest.NewServer(http.NotFoundHandler())
	defer web.Close()
	webURL := "ws" + strings.TrimPrefix(web.URL, "http") + "/ws"

	for _, tc := range []struct{ url, want string }{
		{refusedURL, "nothing answers at " + refusedURL + " (connection refused): is infer running on this port?"},
		{webURL, "the server at " + webURL + " is not infer's bridge (it answered HTTP 404 Not Found to the WebSocket upgrade): is infer running on this port?"},
	} {
		var log syncbuf.Buffer
		dials := &dialCounter{}
		c := NewClient(ClientOptions{
			URL: tc.url, Token: testToken, Browser: &Minimal{}, Tap: dials,
			MinBackoff: 5 * time.Millisecond, MaxBackoff: 10 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(&log, nil)),
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		deadline := time.After(guard)
		for dials.count() < 5 {
			select {
			case <-deadline:
				t.Fatalf("%s: only %d attempts", tc.url, dials.count())
			case <-time.After(5 * time.Millisecond):
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("Run: %v", err)
		}
		var unreachable *UnreachableError
		if err := c.LastError(); !errors.As(err, &unreachable) || err.Error() != tc.want {
			t.Errorf("LastError() = %v, want %q", err, tc.want)
		}
		out := log.String()
		if n := strings.Count(out, "is infer running on this port?"); n != 1 {
			t.Errorf("%s: said %d times in %d attempts, want once:\n%s", tc.url, n, dials.count(), out)
		}
		if !strings.Contains(out, "level=WARN") || strings.Contains(out, "bad handshake") {
			t.Errorf("%s: log:\n%s", tc.url, out)
		}
		if got := ConnectAdvice(c.LastError()); got != tc.want {
			t.Errorf("ConnectAdvice = %q, want the error alone", got)
		}
	}
}
