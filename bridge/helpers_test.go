package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/internal/leaks"
	"github.com/infer-workspace/infer/internal/syncbuf"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/sim"
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(dialHelperEnv); addr != "" {
		dialHelper(addr)
		return
	}
	goleak.VerifyTestMain(m, leaks.Options()...)
}

const testToken = "s3cret-test-token-0123456789abcdef"

// guard is how long a test waits for something that should happen almost
// at once: only a "did not hang" bound, never a speed check.
const guard = 10 * time.Second

// plainHTTP keeps no idle connections, so none outlives a test.
var plainHTTP = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// testServer is a running Server with its log and status events.
type testServer struct {
	*Server
	logs     *syncbuf.Buffer
	statuses chan browser.Status
}

// startServer runs a server with test-friendly defaults; adjust may change
// the options first. It is closed when the test ends.
func startServer(t *testing.T, adjust func(*Options)) *testServer {
	t.Helper()
	ts := &testServer{
		logs:     &syncbuf.Buffer{},
		statuses: make(chan browser.Status, 1024),
	}
	opts := Options{
		Token:      testToken,
		Logger:     slog.New(slog.NewTextHandler(ts.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		CloseGrace: 200 * time.Millisecond,
		OnStatus: func(st browser.Status) {
			select {
			case ts.statuses <- st:
			default:
			}
		},
	}
	if adjust != nil {
		adjust(&opts)
	}
	srv, err := Listen(opts)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	ts.Server = srv
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background()) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve returned %v", err)
		}
	})
	return ts
}

// waitStatus waits for an OnStatus event that ok accepts.
func (ts *testServer) waitStatus(t *testing.T, ok func(browser.Status) bool) browser.Status {
	t.Helper()
	timeout := time.After(guard)
	for {
		select {
		case st := <-ts.statuses:
			if ok(st) {
				return st
			}
		case <-timeout:
			t.Fatalf("no matching status event; current status %+v", ts.Status())
		}
	}
}

// waitHandshaking waits until n sockets wait for their hello.
func (ts *testServer) waitHandshaking(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for {
		ts.mu.Lock()
		got := len(ts.handshaking)
		ts.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sockets wait for their hello, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func isConnected(st browser.Status) bool    { return st.State == browser.Connected }
func isDisconnected(st browser.Status) bool { return st.State == browser.Disconnected }

// dial opens a raw WebSocket to the server with the given extra headers
// (an extension Origin unless the headers say otherwise).
func dial(t *testing.T, srv *Server, header http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	if header == nil {
		header = http.Header{}
	}
	if _, ok := header["Origin"]; !ok {
		header.Set("Origin", "chrome-extension://abcdefghijklmnop")
	}
	d := websocket.Dialer{HandshakeTimeout: guard}
	ws, resp, err := d.Dial(srv.URL(), header)
	if err == nil {
		t.Cleanup(func() { ws.Close() })
	}
	return ws, resp, err
}

// mustDial is dial that fails the test on error.
func mustDial(t *testing.T, srv *Server) *websocket.Conn {
	t.Helper()
	ws, _, err := dial(t, srv, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	return ws
}

// rawExtension is a hand-driven extension: the test reads commands and
// writes results itself, to produce orders and faults sim.Client never
// would.
type rawExtension struct {
	t  *testing.T
	ws *websocket.Conn
}

// connectRaw dials and authenticates a rawExtension.
func connectRaw(t *testing.T, ts *testServer, version string) *rawExtension {
	t.Helper()
	ws := mustDial(t, ts.Server)
	x := &rawExtension{t: t, ws: ws}
	x.writeFrame(wire.BrowserHello{Token: testToken, ExtensionVersion: version})
	if f := x.next(); f.FrameType() != (wire.BrowserHelloAck{}).FrameType() {
		t.Fatalf("first frame after hello is %s, want browser_hello_ack", f.FrameType())
	}
	return x
}

func (x *rawExtension) writeRaw(msg string) {
	x.t.Helper()
	x.ws.SetWriteDeadline(time.Now().Add(guard))
	if err := x.ws.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		x.t.Fatalf("write: %v", err)
	}
}

func (x *rawExtension) writeFrame(f wire.Frame) {
	x.t.Helper()
	x.writeRaw(string(wire.MustEncode(f)))
}

// next reads the next frame, skipping keepalives.
func (x *rawExtension) next() wire.Frame {
	x.t.Helper()
	for {
		x.ws.SetReadDeadline(time.Now().Add(guard))
		_, data, err := x.ws.ReadMessage()
		if err != nil {
			x.t.Fatalf("read: %v", err)
		}
		f, err := wire.Decode(data)
		if err != nil {
			x.t.Fatalf("server sent a malformed frame %q: %v", data, err)
		}
		if _, ok := f.(wire.Keepalive); ok {
			continue
		}
		return f
	}
}

// nextCommand reads frames until a browser_command arrives.
func (x *rawExtension) nextCommand() wire.BrowserCommand {
	x.t.Helper()
	for {
		if cmd, ok := x.next().(wire.BrowserCommand); ok {
			return cmd
		}
	}
}

// readClose reads until the server closes the socket and returns the
// close frame's code and text.
func readClose(t *testing.T, ws *websocket.Conn) (int, string) {
	t.Helper()
	ws.SetReadDeadline(time.Now().Add(guard))
	for {
		_, _, err := ws.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code, ce.Text
		}
		t.Fatalf("socket ended without a close frame: %v", err)
	}
}

// doAsync runs Do on its own goroutine.
func doAsync(srv *Server, ctx context.Context, cmd browser.Command) <-chan doOutcome {
	ch := make(chan doOutcome, 1)
	go func() {
		res, err := srv.Do(ctx, cmd)
		ch <- doOutcome{res, err}
	}()
	return ch
}

type doOutcome struct {
	res browser.Result
	err error
}

func waitOutcome(t *testing.T, ch <-chan doOutcome) doOutcome {
	t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(guard):
		t.Fatal("Do did not return")
		return doOutcome{}
	}
}

// browserFunc is a test double of sim.Browser backed by a function.
type browserFunc func(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult

func (f browserFunc) Do(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult {
	return f(ctx, cmd)
}

// connectSim runs a sim.Client against the server until the test ends.
func connectSim(t *testing.T, ts *testServer, b sim.Browser) *sim.Client {
	t.Helper()
	c := sim.NewClient(sim.ClientOptions{
		URL:              ts.URL(),
		Token:            testToken,
		ExtensionVersion: "sim-test",
		Browser:          b,
		MinBackoff:       10 * time.Millisecond,
		MaxBackoff:       50 * time.Millisecond,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	wctx, wcancel := context.WithTimeout(context.Background(), guard)
	defer wcancel()
	if err := c.WaitConnected(wctx); err != nil {
		t.Fatalf("sim client did not connect: %v", err)
	}
	return c
}

func ctxGuard(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return ctx
}

// recordingPanel is a test double of Panel: it records every call in
// order and answers the list requests with canned frames.
type recordingPanel struct {
	mu     sync.Mutex
	calls  []string
	sender Sender
	called chan string
}

func newRecordingPanel() *recordingPanel {
	return &recordingPanel{called: make(chan string, 1024)}
}

func (p *recordingPanel) record(s Sender, call string) {
	p.mu.Lock()
	p.calls = append(p.calls, call)
	p.sender = s
	p.mu.Unlock()
	p.called <- call
}

func (p *recordingPanel) Calls() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.calls...)
}

// waitCall waits until a call equal to want was recorded.
func (p *recordingPanel) waitCall(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(guard)
	for {
		select {
		case c := <-p.called:
			if c == want {
				return
			}
		case <-timeout:
			t.Fatalf("panel never saw %q; calls: %q", want, p.Calls())
		}
	}
}

func (p *recordingPanel) Connected(s Sender, v string) {
	p.record(s, "connected "+v)
	s.Send(wire.Mode{Mode: "standard"})
}

// Handle implements Panel: it records each frame as one line and answers
// like a tiny workspace.
func (p *recordingPanel) Handle(s Sender, f wire.Frame) {
	switch f := f.(type) {
	case wire.ListConversations:
		p.record(s, "list_conversations")
		s.Send(wire.Conversations{Conversations: []wire.ConversationInfo{{ID: "c1", Title: "First", UpdatedAt: "2026-08-16T12:00:00Z", MessageCount: 2}}})
	case wire.ResumeConversation:
		p.record(s, "resume "+f.ID)
		s.Send(wire.ConversationSnapshot{Messages: []wire.Message{{Role: "user", Content: "hi " + f.ID}}})
	case wire.NewSession:
		p.record(s, "new_session")
		s.Send(wire.ConversationSnapshot{})
	case wire.UserMessage:
		p.record(s, "user_message "+f.Content)
	case wire.Interrupt:
		p.record(s, "interrupt")
	case wire.ListHistory:
		p.record(s, "list_history")
		s.Send(wire.History{})
	case wire.ListSkills:
		p.record(s, "list_skills")
		s.Send(wire.Skills{Skills: []wire.Skill{{Name: "tmux", Description: "Drive tmux", Scope: "user"}}})
	case wire.ListModels:
		p.record(s, "list_models")
		s.Send(wire.Models{Models: []string{"offline/demo"}, Current: "offline/demo"})
	case wire.SelectModel:
		p.record(s, "select_model "+f.Model)
		s.Send(wire.Models{Models: []string{"offline/demo", f.Model}, Current: f.Model})
	case wire.SetMode:
		p.record(s, "set_mode "+f.Mode)
		s.Send(wire.Mode{Mode: f.Mode})
	case wire.ApprovalResponse:
		p.record(s, "approval_response "+f.RequestID+" "+f.Action)
	case wire.ToolRequest:
		p.record(s, "tool_request "+f.ID+" "+f.ToolName)
		s.Send(wire.ToolResult{ID: f.ID, Success: true, Output: "ran " + f.ToolArgs})
	}
}

// statusBody fetches /status with the given Authorization header.
func statusBody(t *testing.T, srv *Server, auth string) (int, StatusReport) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(srv.Port())+"/status", nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := plainHTTP.Do(req)
	if err != nil {
		t.Fatalf("GET /status: %v", err)
	}
	defer resp.Body.Close()
	var rep StatusReport
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
			t.Fatalf("decode /status: %v", err)
		}
	}
	return resp.StatusCode, rep
}

func deadline() time.Time { return time.Now().Add(guard) }
