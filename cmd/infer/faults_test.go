package main

// Fault tests: the extension, the provider, the shell and the disk failing
// in the ways they fail in real life, each through the same wiring `infer
// serve` uses. Waits are bounded by generous "did not hang" guards, never
// by how fast something should be.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/gorilla/websocket"
	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/bridge/agui"
	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/sim"
)

// faultGuard bounds every wait in the fault tests: a hang guard only.
const faultGuard = 20 * time.Second

// faultRigOptions shape one in-process infer serve for a fault test.
type faultRigOptions struct {
	// Config is written to config.yaml when not empty.
	Config string
	// CommandTimeout is extension.command_timeout (0: the default).
	CommandTimeout time.Duration
	// Browser answers the simulated extension's commands (default
	// sim.Minimal); Faults make the extension misbehave.
	Browser sim.Browser
	Faults  *sim.Faults
	// StoreFS replaces the conversation store's filesystem.
	StoreFS store.FS
	// OnFrame sees every frame the extension receives.
	OnFrame func(wire.Frame)
	// QuietLog discards infer's log instead of keeping it for the test.
	QuietLog bool
}

// faultRig is infer serve's wiring in-process, with its log captured at debug
// level and a simulated extension connected.
type faultRig struct {
	*served
	log     *hlBuffer
	token   string
	closeFn func()
}

// startFaultRig is serveInProcess with the knobs the fault tests need.
func startFaultRig(t *testing.T, home, project string, o faultRigOptions) *faultRig {
	t.Helper()
	if home == "" {
		home = t.TempDir()
	}
	if project == "" {
		project = t.TempDir()
	}
	if err := config.EnsureDir(home); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(config.BrowserUsePath(home)); err != nil {
		bu := config.NewBrowserUse(config.DefaultPort)
		if o.CommandTimeout > 0 {
			bu.Extension.CommandTimeout = config.Duration(o.CommandTimeout)
		}
		// A call made while the simulator is away waits a second for
		// it, not the default 20 s: the faults here end turns within
		// faultGuard, and the wait itself is bridge/seat's to test.
		bu.Extension.ConnectWait = config.Duration(time.Second)
		if err := config.CreateBrowserUse(config.BrowserUsePath(home), bu); err != nil {
			t.Fatal(err)
		}
	}
	if o.Config != "" {
		if err := os.WriteFile(config.ConfigPath(home), []byte(o.Config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	logBuf := newHLBuffer()
	var logTo io.Writer = logBuf
	if o.QuietLog {
		logTo = io.Discard
	}
	a, err := openApp(home, project, appOptions{
		Bridge: true, BridgeRequired: true, PortSet: true, Port: 0,
		Log:     slog.New(slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: slog.LevelDebug})),
		StoreFS: o.StoreFS,
	})
	if err != nil {
		t.Fatal(err)
	}
	srvCtx, stopServer := context.WithCancel(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{t: t, home: home, project: project, app: a, stop: cancel, stopServer: stopServer, done: make(chan struct{})}
	serveDone := make(chan struct{})
	go func() { defer close(serveDone); a.Serve(srvCtx) }()
	br := o.Browser
	if br == nil {
		br = &sim.Minimal{}
	}
	s.client = sim.NewClient(sim.ClientOptions{
		URL: a.Seat.URL(), Token: a.BrowserUse.Extension.Token,
		Browser: o.Faults.Browser(br), Faults: o.Faults, OnFrame: o.OnFrame,
		MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
	})
	s.frames = s.client.Subscribe()
	hello := s.client.Subscribe()
	defer hello.Close()
	go func() { defer close(s.done); s.client.Run(ctx) }()
	var once sync.Once
	rg := &faultRig{served: s, log: logBuf, token: a.BrowserUse.Extension.Token}
	rg.closeFn = func() {
		once.Do(func() {
			s.close()
			<-serveDone
		})
	}
	t.Cleanup(rg.closeFn)
	wctx, wcancel := context.WithTimeout(ctx, faultGuard)
	defer wcancel()
	if err := s.client.WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.WaitFor[wire.Mode](wctx, hello, nil); err != nil {
		t.Fatal(err)
	}
	return rg
}

// shutdown stops the extension and infer, finishing every write; the
// test's cleanup then does nothing more.
func (r *faultRig) shutdown() { r.closeFn() }

// stored loads the active conversation from disk with a store of its own.
func (r *faultRig) stored(t *testing.T) store.Conversation {
	t.Helper()
	id := r.app.Workspace.ActiveConversation()
	st, err := store.Open(config.ConversationsDir(r.home, r.project), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.Load(id)
	if err != nil {
		t.Fatalf("loading conversation %q: %v", id, err)
	}
	return c
}

// ---- a scripted OpenAI-compatible provider ----

// faultModel is an OpenAI-compatible server on httptest. It records every
// chat request and answers with script, which sees the decoded request.
type faultModel struct {
	srv    *httptest.Server
	script func(w http.ResponseWriter, r *http.Request, req faultChatRequest)

	mu       sync.Mutex
	bodies   []string
	headers  []http.Header
	requests []faultChatRequest
}

// faultChatRequest is the part of a Chat Completions request the scripts read.
type faultChatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
}

// text returns message i's content as text (string content, or the text
// parts of an array).
func (c faultChatRequest) text(i int) string {
	raw := c.Messages[i].Content
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type, Text string
	}
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// lastUser is the text of the last user message.
func (c faultChatRequest) lastUser() string {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if c.Messages[i].Role == "user" {
			return c.text(i)
		}
	}
	return ""
}

func startFaultModel(t *testing.T, script func(w http.ResponseWriter, r *http.Request, req faultChatRequest)) *faultModel {
	t.Helper()
	m := &faultModel{script: script}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *faultModel) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if strings.HasSuffix(r.URL.Path, "/models") {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model","created":1,"owned_by":"test"}]}`)
		return
	}
	var req faultChatRequest
	json.Unmarshal(body, &req)
	m.mu.Lock()
	m.bodies = append(m.bodies, string(body))
	m.headers = append(m.headers, r.Header.Clone())
	m.requests = append(m.requests, req)
	m.mu.Unlock()
	m.script(w, r, req)
}

// recorded returns the raw chat request bodies so far.
func (m *faultModel) recorded() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.bodies...)
}

// providerConfig names the server as provider "fake" with model "m" and
// makes fake/m the default model; extra is appended (more YAML keys).
func (m *faultModel) providerConfig(extra string) string {
	return fmt.Sprintf("model: fake/m\nproviders:\n  fake:\n    base_url: %s/v1\n    models: [m]\n    discover: false\n%s", m.srv.URL, extra)
}

// faultSSE writes Chat Completions chunks as server-sent events.
type faultSSE struct {
	w http.ResponseWriter
	n int
}

func newFaultSSE(w http.ResponseWriter) *faultSSE {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	return &faultSSE{w: w}
}

func (s *faultSSE) data(payload string) {
	fmt.Fprintf(s.w, "data: %s\n\n", payload)
	s.w.(http.Flusher).Flush()
}

func (s *faultSSE) chunk(delta any, finish string) {
	d, _ := json.Marshal(delta)
	fin := "null"
	if finish != "" {
		fin = `"` + finish + `"`
	}
	s.n++
	s.data(fmt.Sprintf(`{"id":"c%d","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`, s.n, d, fin))
}

func (s *faultSSE) text(t string) { s.chunk(map[string]string{"content": t}, "") }

// toolCall streams one complete tool call at index i.
func (s *faultSSE) toolCall(i int, id, name, args string) {
	s.chunk(map[string]any{"tool_calls": []map[string]any{{
		"index": i, "id": id, "type": "function",
		"function": map[string]string{"name": name, "arguments": args},
	}}}, "")
}

func (s *faultSSE) finish(reason string) {
	s.chunk(map[string]string{}, reason)
	s.data("[DONE]")
}

// cut drops the TCP connection at once, as a crashing proxy would.
func cutConnection(w http.ResponseWriter) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	buf.Flush()
	conn.Close()
}

// runEvents reads the panel's chat events of one run, to its terminal
// event, checking that exactly one start and one end bracket it.
func (r *faultRig) runEvents(t *testing.T) []chatEvent {
	t.Helper()
	evs := r.runUntilEnd()
	starts := 0
	for _, e := range evs {
		if e.Type == "RUN_STARTED" {
			starts++
		}
	}
	if starts != 1 {
		t.Fatalf("%d RUN_STARTED in one run: %+v", starts, evs)
	}
	return evs
}

// faultRunError returns the run's RUN_ERROR message and code, failing when
// the run finished instead.
func faultRunError(t *testing.T, raw []wire.ChatEvent) (msg, code string) {
	t.Helper()
	for _, f := range raw {
		var e struct {
			Type, Message string
			Code          *string
		}
		json.Unmarshal(f.Event, &e)
		if e.Type == "RUN_ERROR" {
			if e.Code != nil {
				code = *e.Code
			}
			return e.Message, code
		}
	}
	t.Fatal("the run did not end in RUN_ERROR")
	return "", ""
}

// rawRun collects the raw chat event frames of one run.
func (r *faultRig) rawRun(t *testing.T) []wire.ChatEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), faultGuard)
	defer cancel()
	var out []wire.ChatEvent
	for {
		f, err := sim.WaitFor[wire.ChatEvent](ctx, r.frames, nil)
		if err != nil {
			t.Fatalf("run did not end: %v (so far %d events)", err, len(out))
		}
		out = append(out, f)
		e := decodeChat(t, f)
		if e.Type == "RUN_FINISHED" || e.Type == "RUN_ERROR" {
			return out
		}
	}
}

func faultRunText(t *testing.T, raw []wire.ChatEvent) string {
	var evs []chatEvent
	for _, f := range raw {
		evs = append(evs, decodeChat(t, f))
	}
	return textOf(evs)
}

// ---- provider faults ----

// TestFaultProviderStreams runs a provider that breaks its stream in each
// way a real one does, through config.yaml and the real wiring: every run
// ends in one RUN_ERROR with a message that says what happened, and the
// text that arrived before the failure is kept in the store.
func TestFaultProviderStreams(t *testing.T) {
	t.Parallel()
	const partial = "The answer starts well "
	cases := []struct {
		name string
		// extra config under the provider and agent sections
		config string
		// reply is the provider's behaviour after the partial text.
		reply func(w http.ResponseWriter, r *http.Request, s *faultSSE)
		// interrupt makes the panel interrupt once the partial text shows.
		interrupt bool
		code      string
		want      []string // substrings of the RUN_ERROR message
	}{
		{
			name:  "connection cut mid-stream",
			reply: func(w http.ResponseWriter, r *http.Request, s *faultSSE) { cutConnection(w) },
			code:  "stream_error", want: []string{"stream broke", "partial answer was kept"},
		},
		{
			name:  "clean end without finish",
			reply: func(w http.ResponseWriter, r *http.Request, s *faultSSE) {},
			code:  "stream_error", want: []string{"ended before the model finished"},
		},
		{
			name: "garbage event",
			reply: func(w http.ResponseWriter, r *http.Request, s *faultSSE) {
				s.data(`{"id":"c9","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":`)
				s.data(`<html><body>502 Bad Gateway</body></html>`)
			},
			code: "stream_error", want: []string{"stream broke"},
		},
		{
			name:   "stall past the idle timeout",
			config: "agent:\n  stream_idle_timeout: 1s\n",
			reply: func(w http.ResponseWriter, r *http.Request, s *faultSSE) {
				<-r.Context().Done()
			},
			code: "stream_error", want: []string{"sent nothing for 1s", "agent.stream_idle_timeout"},
		},
		{
			name: "stall interrupted by the person",
			reply: func(w http.ResponseWriter, r *http.Request, s *faultSSE) {
				<-r.Context().Done()
			},
			interrupt: true,
			code:      "interrupted",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := startFaultModel(t, func(w http.ResponseWriter, r *http.Request, req faultChatRequest) {
				s := newFaultSSE(w)
				if req.lastUser() == "again" {
					s.text("fine now")
					s.finish("stop")
					return
				}
				for _, word := range strings.SplitAfter(partial, " ") {
					if word != "" {
						s.text(word)
					}
				}
				tc.reply(w, r, s)
			})
			rg := startFaultRig(t, "", "", faultRigOptions{Config: m.providerConfig(tc.config)})
			if got := rg.app.Workspace.Model(); got != "fake/m" {
				t.Fatalf("model %q", got)
			}
			rg.client.SendUserMessage(rg.ctx(), "tell me something")
			if tc.interrupt {
				ctx, cancel := context.WithTimeout(context.Background(), faultGuard)
				defer cancel()
				var seen strings.Builder
				for !strings.Contains(seen.String(), "well") {
					f, err := sim.WaitFor[wire.ChatEvent](ctx, rg.frames, nil)
					if err != nil {
						t.Fatal(err)
					}
					seen.WriteString(decodeChat(t, f).Delta)
				}
				rg.client.Interrupt(rg.ctx())
			}
			raw := rg.rawRun(t)
			msg, code := faultRunError(t, raw)
			t.Logf("RUN_ERROR %s: %s", code, msg)
			if code != tc.code {
				t.Fatalf("RUN_ERROR code %q (message %q), want %q", code, msg, tc.code)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("RUN_ERROR message %q lacks %q", msg, w)
				}
			}
			conv := rg.stored(t)
			if len(conv.Messages) != 2 || conv.Messages[1].Role != "assistant" || conv.Messages[1].Content != partial {
				t.Fatalf("stored %+v, want the user message and the partial answer %q", conv.Messages, partial)
			}
			// The next turn works: the provider is asked again with the
			// partial answer in the history.
			before := len(m.recorded())
			rg.client.SendUserMessage(rg.ctx(), "again")
			rg.rawRun(t)
			if len(m.recorded()) <= before {
				t.Fatal("the next turn did not reach the provider")
			}
		})
	}
}

// ---- the workspace's own view ----

// faultWatch follows the workspace's event stream, what the terminal UI
// sees; unlike the panel it keeps going while the extension is away.
type faultWatch struct {
	t   *testing.T
	sub *session.Subscription
	// enc tells the transcript's changes as the panel gets them, and
	// queued holds what it told that next has yet to read.
	enc    agui.Encoder
	queued []events.Event
}

// event returns the next AG-UI event the workspace's changes make.
func (w *faultWatch) event(ctx context.Context) (events.Event, error) {
	for len(w.queued) == 0 {
		ev, err := w.sub.Next(ctx)
		if err != nil {
			return nil, err
		}
		if _, ok := ev.(session.Resync); ok {
			return nil, errResync
		}
		if c, ok := ev.(session.TranscriptChanged); ok {
			for _, e := range w.enc.Encode(c.Change) {
				w.queued = append(w.queued, e.Event)
			}
		}
	}
	e := w.queued[0]
	w.queued = w.queued[1:]
	return e, nil
}

func (r *faultRig) watch(t *testing.T) *faultWatch {
	w := &faultWatch{t: t, sub: r.app.Workspace.Subscribe()}
	t.Cleanup(w.sub.Close)
	return w
}

// faultRun is one run as the workspace streamed it.
type faultRun struct {
	types    []events.EventType
	raw      []string // every chat event as JSON
	text     string
	terminal events.Event
}

func (f faultRun) finished() bool { return f.terminal.Type() == events.EventTypeRunFinished }

func (f faultRun) errorMessage() string {
	if e, ok := f.terminal.(*events.RunErrorEvent); ok {
		return e.Message
	}
	return ""
}

// run waits for the next run's terminal event and checks that the run had
// exactly one start and one end.
func (w *faultWatch) run() faultRun {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), faultGuard)
	defer cancel()
	r, err := w.next(ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}

// errResync is next's error when the workspace dropped the watcher's
// backlog because it fell too far behind: the run's events are incomplete.
var errResync = errors.New("the workspace event stream resynced: events were dropped")

// next is run for any goroutine: it reports instead of failing the test.
func (w *faultWatch) next(ctx context.Context) (faultRun, error) {
	var r faultRun
	var text strings.Builder
	starts := 0
	for {
		e, err := w.event(ctx)
		if errors.Is(err, errResync) {
			return r, err
		}
		if err != nil {
			return r, fmt.Errorf("the run did not end: %v (events so far %v)", err, r.types)
		}
		typ := e.Type()
		r.types = append(r.types, typ)
		if b, err := e.ToJSON(); err == nil {
			r.raw = append(r.raw, string(b))
		}
		switch typ {
		case events.EventTypeRunStarted:
			starts++
		case events.EventTypeTextMessageContent:
			text.WriteString(e.(*events.TextMessageContentEvent).Delta)
		case events.EventTypeRunFinished, events.EventTypeRunError:
			r.terminal, r.text = e, text.String()
			if starts != 1 {
				return r, fmt.Errorf("%d RUN_STARTED before the terminal event: %v", starts, r.types)
			}
			return r, nil
		}
	}
}

// ---- the extension vanishing ----

// faultGateBrowser is sim.Minimal whose chosen action blocks (honouring the
// command's context) the first time it arrives, telling the test it has.
type faultGateBrowser struct {
	sim.Minimal
	action  browser.Action
	once    sync.Once
	arrived chan struct{}
}

func newFaultGateBrowser(action browser.Action) *faultGateBrowser {
	return &faultGateBrowser{action: action, arrived: make(chan struct{})}
}

func (g *faultGateBrowser) Do(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult {
	first := false
	if cmd.Action == g.action {
		g.once.Do(func() { first = true })
	}
	if first {
		close(g.arrived)
		<-ctx.Done()
		return wire.BrowserResult{Error: "cancelled: " + ctx.Err().Error()}
	}
	return g.Minimal.Do(ctx, cmd)
}

func faultWaitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(faultGuard):
		t.Fatalf("%s did not happen", what)
	}
}

// reconnect brings the rig's extension back after Disconnect.
func (r *faultRig) reconnect(t *testing.T) {
	t.Helper()
	r.client.Reconnect()
	ctx, cancel := context.WithTimeout(context.Background(), faultGuard)
	defer cancel()
	if err := r.client.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestFaultExtensionVanishesMidCommand drops the extension while a
// navigate is in flight. The command's budget is the longest allowed, so
// only the disconnect can end it: the driver fails at once with
// ErrDisconnected, the turn records a failed tool result and finishes,
// and after a reconnect the next turn's navigate works.
func TestFaultExtensionVanishesMidCommand(t *testing.T) {
	t.Parallel()
	br := newFaultGateBrowser(browser.Navigate)
	rg := startFaultRig(t, "", "", faultRigOptions{Browser: br, CommandTimeout: config.MaxCommandTimeout})
	rg.setMode("auto")
	watch := rg.watch(t)
	rg.client.SendUserMessage(rg.ctx(), "open example.com")
	faultWaitClosed(t, br.arrived, "the navigate reaching the extension")
	rg.client.Disconnect()
	run := watch.run()
	if !run.finished() {
		t.Fatalf("the turn ended with %v: %s", run.terminal.Type(), run.errorMessage())
	}
	snap := rg.app.Workspace.Snapshot()
	msgs := rg.toolMessages()
	if len(msgs) != 1 || !strings.Contains(msgs[0], browser.ErrDisconnected.Error()) {
		t.Fatalf("tool result %q, want the disconnect", msgs)
	}
	for id, ok := range callOutcomes(snap) {
		if ok {
			t.Fatalf("call %s recorded as a success", id)
		}
	}
	if st := rg.app.Workspace.BrowserStatus(); st.State != browser.Disconnected {
		t.Fatalf("status %v after the extension vanished", st.State)
	}

	rg.reconnect(t)
	rg.client.SendUserMessage(rg.ctx(), "open example.com")
	run = watch.run()
	msgs = rg.toolMessages()
	if !run.finished() || len(msgs) != 2 || !strings.Contains(msgs[1], "https://example.com") {
		t.Fatalf("after the reconnect: %v, tool results %q", run.terminal.Type(), msgs)
	}
}

// faultRawExtension is a hand-driven extension connection, for faults the
// simulator cannot produce: a frame cut off in the middle.
type faultRawExtension struct {
	t  *testing.T
	ws *websocket.Conn
}

func dialFaultRawExtension(t *testing.T, url, token string) *faultRawExtension {
	t.Helper()
	h := http.Header{}
	h.Set("Origin", "chrome-extension://fault-test")
	d := websocket.Dialer{HandshakeTimeout: faultGuard}
	ws, _, err := d.Dial(url, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	x := &faultRawExtension{t: t, ws: ws}
	if token != "" {
		x.write(wire.MustEncode(wire.BrowserHello{Token: token, ExtensionVersion: "fault-test"}))
		if _, ok := x.next().(wire.BrowserHelloAck); !ok {
			t.Fatal("no browser_hello_ack")
		}
	}
	return x
}

func (x *faultRawExtension) write(b []byte) {
	x.t.Helper()
	x.ws.SetWriteDeadline(time.Now().Add(faultGuard))
	if err := x.ws.WriteMessage(websocket.TextMessage, b); err != nil {
		x.t.Fatal(err)
	}
}

// next returns the next frame that is not a keepalive.
func (x *faultRawExtension) next() wire.Frame {
	x.t.Helper()
	for {
		x.ws.SetReadDeadline(time.Now().Add(faultGuard))
		_, data, err := x.ws.ReadMessage()
		if err != nil {
			x.t.Fatalf("reading from infer: %v", err)
		}
		f, err := wire.Decode(data)
		if err != nil {
			x.t.Fatalf("undecodable frame %q: %v", data, err)
		}
		if _, ok := f.(wire.Keepalive); !ok {
			return f
		}
	}
}

// vanishMidFrame starts a frame, sends part of it, and drops the TCP
// connection: the browser killed the extension while it was writing.
func (x *faultRawExtension) vanishMidFrame(prefix string, filler int) {
	x.t.Helper()
	w, err := x.ws.NextWriter(websocket.TextMessage)
	if err != nil {
		x.t.Fatal(err)
	}
	io.WriteString(w, prefix)
	chunk := strings.Repeat("A", 64<<10)
	for sent := 0; sent < filler; sent += len(chunk) {
		if _, err := io.WriteString(w, chunk); err != nil {
			break
		}
	}
	x.ws.NetConn().Close()
}

// TestFaultExtensionVanishesMidScreenshot drops the connection while a
// large screenshot result is half written: infer must not take the partial
// frame for a result. The call fails as a disconnect, nothing is saved
// under artifacts, and the next screenshot through a reconnected extension
// works.
func TestFaultExtensionVanishesMidScreenshot(t *testing.T) {
	t.Parallel()
	rg := startFaultRig(t, "", "", faultRigOptions{CommandTimeout: config.MaxCommandTimeout})
	watch := rg.watch(t)
	rg.client.Disconnect()
	x := dialFaultRawExtension(t, rg.app.Seat.URL(), rg.token)
	x.next() // the mode
	rg.app.Workspace.Send("screenshot", tools.OriginTerminal)
	cmd, ok := x.next().(wire.BrowserCommand)
	for !ok {
		cmd, ok = x.next().(wire.BrowserCommand)
	}
	if cmd.Action != browser.Screenshot {
		t.Fatalf("command %+v", cmd)
	}
	x.vanishMidFrame(`{"type":"browser_result","id":"`+cmd.ID+`","url":"https://example.com/","title":"Big","image_mime_type":"image/png","image":"`, 8<<20)

	run := watch.run()
	msgs := rg.toolMessages()
	if !run.finished() || len(msgs) != 1 || !strings.Contains(msgs[0], browser.ErrDisconnected.Error()) {
		t.Fatalf("run %v, tool results %q", run.terminal.Type(), msgs)
	}
	if shots := faultFiles(t, config.ArtifactsDir(rg.home, rg.project)); len(shots) != 0 {
		t.Fatalf("a partial screenshot was saved: %v", shots)
	}

	rg.reconnect(t)
	rg.app.Workspace.Send("screenshot", tools.OriginTerminal)
	run = watch.run()
	msgs = rg.toolMessages()
	if !run.finished() || len(msgs) != 2 || !strings.Contains(msgs[1], "PNG") {
		t.Fatalf("after the reconnect: %v, tool results %q", run.terminal.Type(), msgs)
	}
	if shots := faultFiles(t, config.ArtifactsDir(rg.home, rg.project)); len(shots) != 1 {
		t.Fatalf("artifacts %v", shots)
	}
}

// faultFiles lists the regular files under dir.
func faultFiles(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// faultSettles polls count until it is at most limit (goroutines and
// sockets wind down asynchronously), failing after the guard.
func faultSettles(t *testing.T, what string, limit int, count func() int) int {
	t.Helper()
	deadline := time.Now().Add(faultGuard)
	for {
		n := count()
		if n <= limit {
			return n
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%s: %d, want at most %d\n%s", what, n, limit, buf)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFaultExtensionVanishesDuringHello opens connections that die at
// every step of the handshake: mid-HTTP-request, after the upgrade but
// before browser_hello, and right after a valid hello before the ack is
// read. The live extension is never disturbed by the first two, infer's
// goroutines return to where they were, and the extension still drives
// the browser afterwards.
func TestFaultExtensionVanishesDuringHello(t *testing.T) {
	rg := startFaultRig(t, "", "", faultRigOptions{})
	rg.setMode("auto")
	addr := strings.TrimSuffix(strings.TrimPrefix(rg.app.Seat.URL(), "ws://"), "/ws")
	runtime.GC()
	base := runtime.NumGoroutine()
	connects := rg.client.Connects()

	const rounds = 15
	for i := 0; i < rounds; i++ {
		// Dies halfway through the upgrade request.
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n", addr)
		c.Close()

		// Upgraded, then gone before saying hello.
		x := dialFaultRawExtension(t, rg.app.Seat.URL(), "")
		x.ws.NetConn().Close()
	}
	if got := rg.client.Connects(); got != connects || !rg.client.Connected() {
		t.Fatalf("the live extension was disturbed: %d connects (was %d), connected=%v", got, connects, rg.client.Connected())
	}
	faultSettles(t, "goroutines after sockets died before hello", base+2, runtime.NumGoroutine)

	// Authenticated, then gone before reading the ack: each replaces the
	// live extension for a moment, which then reconnects. Two, not
	// fifteen: three replacements within the bridge's flap window are
	// two browsers taking turns, which pauses browser commands
	// (TestFlappingPausesCommands in bridge).
	for i := 0; i < 2; i++ {
		h := http.Header{}
		h.Set("Origin", "chrome-extension://fault-test")
		ws, _, err := websocket.DefaultDialer.Dial(rg.app.Seat.URL(), h)
		if err != nil {
			t.Fatal(err)
		}
		ws.WriteMessage(websocket.TextMessage, wire.MustEncode(wire.BrowserHello{Token: rg.token, ExtensionVersion: "vanishing"}))
		ws.NetConn().Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), faultGuard)
	defer cancel()
	for rg.app.Workspace.BrowserStatus().ExtensionVersion != "infer-sim" || !rg.client.Connected() {
		if ctx.Err() != nil {
			t.Fatalf("the extension did not come back: %+v", rg.app.Workspace.BrowserStatus())
		}
		time.Sleep(10 * time.Millisecond)
	}
	watch := rg.watch(t)
	rg.app.Workspace.Send("open example.com; tabs", tools.OriginTerminal)
	run := watch.run()
	if !run.finished() {
		t.Fatalf("turn after the handshake faults: %v", run.terminal.Type())
	}
	for id, ok := range callOutcomes(rg.app.Workspace.Snapshot()) {
		if !ok {
			t.Fatalf("call %s failed: %q", id, rg.toolMessages())
		}
	}
	faultSettles(t, "goroutines after all the handshake faults", base+2, runtime.NumGoroutine)
}

// TestFaultExtensionVanishesMidApprovalResponse answers an approval with a
// frame cut off halfway: infer must not act on it, the request stays
// pending and is re-sent when the extension is back, and the command runs
// exactly once after the real answer. Then, repeatedly, a complete answer
// is sent and the socket dropped at once: whichever way that races, the
// command runs exactly once and the turn ends once.
func TestFaultExtensionVanishesMidApprovalResponse(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	rg := startFaultRig(t, "", "", faultRigOptions{})
	watch := rg.watch(t)
	count := func(name string) int {
		b, _ := os.ReadFile(filepath.Join(rg.project, name))
		return strings.Count(string(b), "ran\n")
	}

	rg.client.SendUserMessage(rg.ctx(), "run echo ran >> cut.txt")
	req := rg.nextApproval()
	rg.client.Disconnect()
	x := dialFaultRawExtension(t, rg.app.Seat.URL(), rg.token)
	for {
		if a, ok := x.next().(wire.ApprovalRequest); ok && a.RequestID == req.RequestID {
			break // re-sent to the new connection
		}
	}
	x.vanishMidFrame(`{"type":"approval_response","request_id":"`+req.RequestID+`","act`, 0)
	faultSettles(t, "live connections after the cut frame", 0, func() int {
		if rg.app.Workspace.BrowserStatus().State == browser.Connected {
			return 1
		}
		return 0
	})
	if p := rg.app.Workspace.PendingApprovals(); len(p) != 1 || p[0].ID != req.RequestID || count("cut.txt") != 0 {
		t.Fatalf("after a cut answer: pending %+v, ran %d times", p, count("cut.txt"))
	}
	rg.reconnect(t)
	again, err := sim.WaitFor(rg.ctx(), rg.frames, func(a wire.ApprovalRequest) bool { return a.RequestID == req.RequestID })
	if err != nil {
		t.Fatalf("the pending request was not re-sent: %v", err)
	}
	rg.client.Approve(rg.ctx(), again.RequestID)
	if run := watch.run(); !run.finished() || count("cut.txt") != 1 {
		t.Fatalf("run %v, ran %d times", run.terminal.Type(), count("cut.txt"))
	}

	for i := 0; i < 8; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), faultGuard)
		defer cancel()
		name := fmt.Sprintf("raced-%d.txt", i)
		rg.client.SendUserMessage(rg.ctx(), "run echo ran >> "+name)
		// Earlier rounds' requests were re-sent on reconnects: pick this one.
		req, err := sim.WaitFor(rg.ctx(), rg.frames, func(a wire.ApprovalRequest) bool { return strings.Contains(a.ToolArgs, name) })
		if err != nil {
			t.Fatal(err)
		}
		rg.client.Approve(rg.ctx(), req.RequestID)
		rg.client.Disconnect()
		rg.reconnect(t)
		// Unless the answer got through, the request comes back to the
		// panel and is answered again; a second answer must not count.
		ended := make(chan error, 1)
		var run faultRun
		go func() {
			var err error
			run, err = watch.next(ctx)
			ended <- err
		}()
		answered := false
	waiting:
		for {
			select {
			case err := <-ended:
				if err != nil {
					t.Fatalf("round %d: %v\nworkspace pending %+v, panel pending %+v, answered again %v, connected %v\n%s", i, err,
						rg.app.Workspace.PendingApprovals(), rg.client.PendingApprovals(), answered, rg.client.Connected(), rg.log)
				}
				break waiting
			case <-time.After(5 * time.Millisecond):
			}
			for _, a := range rg.client.PendingApprovals() {
				if a.RequestID == req.RequestID && !answered {
					answered = true
					rg.client.Approve(rg.ctx(), a.RequestID)
				}
			}
		}
		if !run.finished() || count(name) != 1 {
			t.Fatalf("round %d: run %v, ran %d times", i, run.terminal.Type(), count(name))
		}
	}
}

// faultPanelText reads chat events from frames until the streamed text holds
// want, returning it.
func faultPanelText(t *testing.T, frames *sim.Subscription, want string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), faultGuard)
	defer cancel()
	var b strings.Builder
	for !strings.Contains(b.String(), want) {
		f, err := sim.WaitFor[wire.ChatEvent](ctx, frames, nil)
		if err != nil {
			t.Fatalf("the panel never saw %q (got %d bytes): %v", want, b.Len(), err)
		}
		b.WriteString(decodeChat(t, f).Delta)
	}
	return b.String()
}

func (r *faultRig) waitStatus(t *testing.T, want browser.State) {
	t.Helper()
	faultSettles(t, "waiting for the status "+want.String(), 0, func() int {
		if r.app.Workspace.BrowserStatus().State == want {
			return 0
		}
		return 1
	})
}

// TestFaultExtensionVanishesMidStream drops the extension while 5000
// words stream to its panel. The turn carries on to its end, the store
// holds every word, and a panel that comes back resumes the conversation
// whole. A panel that comes back while the stream is still running gets
// the rest of it live, and the run's end.
func TestFaultExtensionVanishesMidStream(t *testing.T) {
	t.Parallel()
	const words = 5000
	gates := map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
	m := startFaultModel(t, func(w http.ResponseWriter, r *http.Request, req faultChatRequest) {
		f := strings.Fields(req.lastUser()) // stream <n> <gate>
		n, _ := strconv.Atoi(f[1])
		s := newFaultSSE(w)
		for i := 1; i <= n; i++ {
			if i == 1001 {
				select {
				case <-gates[f[2]]:
				case <-r.Context().Done():
					return
				}
			}
			s.text(strconv.Itoa(i) + " ")
		}
		s.finish("stop")
	})
	rg := startFaultRig(t, "", "", faultRigOptions{Config: m.providerConfig("")})
	watch := rg.watch(t)
	all := numbers(words)

	rg.client.SendUserMessage(rg.ctx(), "stream 5000 a")
	faultPanelText(t, rg.frames, " 1000 ")
	rg.client.Disconnect()
	rg.waitStatus(t, browser.Disconnected)
	close(gates["a"])
	run := watch.run()
	if !run.finished() || run.text != all {
		t.Fatalf("the turn without its panel: %v, %d bytes of text", run.terminal.Type(), len(run.text))
	}
	id := rg.app.Workspace.ActiveConversation()
	if conv := rg.stored(t); len(conv.Messages) != 2 || conv.Messages[1].Content != all {
		t.Fatalf("stored %d messages; the answer has %d bytes of %d", len(conv.Messages), len(conv.Messages[len(conv.Messages)-1].Content), len(all))
	}
	rg.reconnect(t)
	snap, err := rg.client.Resume(rg.ctx(), id)
	if err != nil || len(snap.Messages) != 2 || snap.Messages[1].Content != all {
		t.Fatalf("resume after the turn: %d messages, %v", len(snap.Messages), err)
	}

	// Back while the stream still runs: the snapshot holds what is
	// final, the rest streams live, and the run's end arrives.
	rg.client.SendUserMessage(rg.ctx(), "stream 5000 b")
	faultPanelText(t, rg.frames, " 1000 ")
	rg.client.Disconnect()
	rg.waitStatus(t, browser.Disconnected)
	after := rg.client.Subscribe()
	defer after.Close()
	rg.reconnect(t)
	snap, err = rg.client.Resume(rg.ctx(), id)
	if err != nil || len(snap.Messages) != 3 || snap.Messages[2].Content != "stream 5000 b" {
		t.Fatalf("resume mid-stream: %+v, %v", snap.Messages, err)
	}
	close(gates["b"])
	var rest strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), faultGuard)
	defer cancel()
	for {
		f, err := sim.WaitFor[wire.ChatEvent](ctx, after, nil)
		if err != nil {
			t.Fatalf("the reconnected panel did not see the run end: %v", err)
		}
		e := decodeChat(t, f)
		rest.WriteString(e.Delta)
		if e.Type == "RUN_ERROR" {
			t.Fatalf("the run failed: %+v", e)
		}
		if e.Type == "RUN_FINISHED" {
			break
		}
	}
	if want := strings.TrimPrefix(all, numbers(1000)); rest.String() != want {
		t.Fatalf("the reconnected panel got %d bytes of the rest, want %d", rest.Len(), len(want))
	}
	watch.run()
	if snap, err = rg.client.Resume(rg.ctx(), id); err != nil || len(snap.Messages) != 4 || snap.Messages[3].Content != all {
		t.Fatalf("resume after the second stream: %d messages, %v", len(snap.Messages), err)
	}
}

// ---- the shell ----

// faultLiveCommands counts live processes whose command line is exactly
// cmdline (arguments joined by spaces).
func faultLiveCommands(cmdline string) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.TrimRight(strings.ReplaceAll(string(b), "\x00", " "), " ") == cmdline && faultProcessAlive(pid) {
			n++
		}
	}
	return n
}

// faultProcessAlive reports whether pid is a live process (a zombie is dead:
// in a container nobody may reap it).
func faultProcessAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(data), ')')
	f := strings.Fields(string(data[i+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// faultReadPID waits for the command to write its background child's pid.
func faultReadPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	faultSettles(t, "the command writing "+filepath.Base(path), 0, func() int {
		b, err := os.ReadFile(path)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return 1
		}
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return 0
	})
	return pid
}

// TestFaultBashCommandThatNeverEnds runs a command whose background child
// sleeps for ten minutes, twice: once stopped by tools.bash.timeout and
// once by an interrupt. Either way the turn ends, the result says why, and
// the child is dead, not orphaned.
func TestFaultBashCommandThatNeverEnds(t *testing.T) {
	needSandbox(t)
	rg := startFaultRig(t, "", "", faultRigOptions{Config: "tools:\n  bash:\n    timeout: 1s\n"})
	rg.setMode("auto")
	watch := rg.watch(t)
	const cmd = "run sleep 600 & echo $! > %s && wait"

	rg.app.Workspace.Send(fmt.Sprintf(cmd, "timeout.pid"), tools.OriginTerminal)
	// The pid the command writes is its own sandbox's, so it only says
	// that the command started; its child is found by its command line.
	faultReadPID(t, filepath.Join(rg.project, "timeout.pid"))
	run := watch.run()
	msgs := rg.toolMessages()
	if !run.finished() || len(msgs) != 1 || !strings.Contains(msgs[0], "timed out after 1s") {
		t.Fatalf("timeout: run %v, result %q", run.terminal.Type(), msgs)
	}
	faultSettles(t, "the timed-out command's child", 0, func() int { return faultLiveCommands("sleep 600") })

	// The default budget (2m), so only the interrupt can stop it.
	rg = startFaultRig(t, "", "", faultRigOptions{})
	rg.setMode("auto")
	watch = rg.watch(t)
	rg.app.Workspace.Send(fmt.Sprintf(cmd, "interrupt.pid"), tools.OriginTerminal)
	faultReadPID(t, filepath.Join(rg.project, "interrupt.pid"))
	rg.app.Workspace.Interrupt()
	run = watch.run()
	msgs = rg.toolMessages()
	if e, ok := run.terminal.(*events.RunErrorEvent); !ok || e.Code == nil || *e.Code != "interrupted" {
		t.Fatalf("interrupt: run ended with %v", run.terminal.Type())
	}
	if len(msgs) != 1 || !strings.Contains(msgs[0], "interrupted and stopped") {
		t.Fatalf("interrupt: result %q", msgs)
	}
	faultSettles(t, "the interrupted command's child", 0, func() int { return faultLiveCommands("sleep 600") })
}

// TestFaultBashFloodsOutput pipes 200 MB through a command's output. The
// model, the store and the panel get a capped result with the omission
// marker, and infer's heap does not grow with the flood.
func TestFaultBashFloodsOutput(t *testing.T) {
	needSandbox(t)
	const flood = 200_000_000
	var chatBytes sync.Map // the largest TOOL_CALL_RESULT the panel saw
	rg := startFaultRig(t, "", "", faultRigOptions{OnFrame: func(f wire.Frame) {
		if ce, ok := f.(wire.ChatEvent); ok && strings.Contains(string(ce.Event), "TOOL_CALL_RESULT") {
			chatBytes.Store(len(ce.Event), true)
		}
	}})
	rg.setMode("auto")
	watch := rg.watch(t)

	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
		}
	}()
	rg.app.Workspace.Send(fmt.Sprintf("run yes infer-flood | head -c %d", flood), tools.OriginTerminal)
	run := watch.run()
	close(stop)
	<-sampled
	if !run.finished() {
		t.Fatalf("run %v", run.terminal.Type())
	}
	msgs := rg.toolMessages()
	if len(msgs) != 1 || !strings.Contains(msgs[0], " bytes omitted ...]") || len(msgs[0]) > 40_000 {
		t.Fatalf("result of %d bytes: %.300q", len(msgs[0]), msgs)
	}
	omitted := regexp.MustCompile(`\[\.\.\. (\d+) bytes omitted \.\.\.\]`).FindStringSubmatch(msgs[0])
	if n, _ := strconv.Atoi(omitted[1]); n < flood-40_000 {
		t.Fatalf("omitted %d bytes of %d", n, flood)
	}
	for _, m := range rg.stored(t).Messages {
		if len(m.Content) > 40_000 {
			t.Fatalf("a stored %s message holds %d bytes", m.Role, len(m.Content))
		}
	}
	// The panel's frames cross their own socket after the run's events:
	// wait for the result to arrive, so the size check below sees it.
	for deadline := time.Now().Add(faultGuard); ; time.Sleep(10 * time.Millisecond) {
		seen := false
		chatBytes.Range(func(any, any) bool { seen = true; return false })
		if seen {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the panel never got the tool's result")
		}
	}
	chatBytes.Range(func(k, _ any) bool {
		if k.(int) > 60_000 {
			t.Errorf("the panel got a tool result of %d bytes", k.(int))
		}
		return true
	})
	grew := int64(peak) - int64(base)
	t.Logf("heap in use: %d MiB before, peak %d MiB during a %d MB flood", base>>20, peak>>20, flood/1_000_000)
	if grew > 64<<20 {
		t.Fatalf("the heap grew by %d MiB during the flood", grew>>20)
	}
}

// ---- the disk ----

// faultDisk is the real filesystem with a switch that makes writes fail
// the way a full disk does: half the bytes land, then ENOSPC.
type faultDisk struct {
	store.FS
	mu sync.Mutex
	// fail decides, per write, whether it hits a full disk; nil never.
	fail func(name string, p []byte) bool
}

func (d *faultDisk) set(fail func(name string, p []byte) bool) {
	d.mu.Lock()
	d.fail = fail
	d.mu.Unlock()
}

func (d *faultDisk) failing(name string, p []byte) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fail != nil && d.fail(name, p)
}

func (d *faultDisk) OpenFile(name string, flag int, perm os.FileMode) (store.File, error) {
	f, err := d.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultDiskFile{File: f, disk: d, name: name}, nil
}

type faultDiskFile struct {
	store.File
	disk *faultDisk
	name string
}

func (f *faultDiskFile) Write(p []byte) (int, error) {
	if f.disk.failing(f.name, p) {
		n, _ := f.File.Write(p[:len(p)/2])
		return n, &os.PathError{Op: "write", Path: f.name, Err: syscall.ENOSPC}
	}
	return f.File.Write(p)
}

// TestFaultDiskFillsWhileAConversationIsWritten fills the disk under a
// conversation: first before the person's message can be saved, then
// after it but before the agent's answer. Each turn ends in a RUN_ERROR
// the panel sees, saying the conversation could not be saved; nothing
// written before is lost or damaged; and once there is space again the
// next turn works and is saved.
func TestFaultDiskFillsWhileAConversationIsWritten(t *testing.T) {
	t.Parallel()
	disk := &faultDisk{FS: store.OS}
	rg := startFaultRig(t, "", "", faultRigOptions{StoreFS: disk})
	rg.setMode("auto")
	contents := func() []string {
		var out []string
		for _, m := range rg.stored(t).Messages {
			out = append(out, m.Role+":"+m.Content)
		}
		return out
	}

	rg.client.SendUserMessage(rg.ctx(), "hello")
	if last := rg.runEvents(t); last[len(last)-1].Type != "RUN_FINISHED" {
		t.Fatalf("first turn: %+v", last[len(last)-1])
	}
	before := contents()

	// Full before the message is saved.
	disk.set(func(string, []byte) bool { return true })
	rg.client.SendUserMessage(rg.ctx(), "tabs")
	raw := rg.rawRun(t)
	msg, code := faultRunError(t, raw)
	if code != "storage" || !strings.Contains(msg, "saving the conversation") || !strings.Contains(msg, "no space left on device") {
		t.Fatalf("RUN_ERROR %q (%s)", msg, code)
	}
	if !strings.Contains(faultRunText(t, raw), "Free some disk space") {
		t.Fatalf("no visible notice: %q", faultRunText(t, raw))
	}
	if got := contents(); !slices.Equal(got, before) {
		t.Fatalf("after the failed save:\n%q\nwant\n%q", got, before)
	}

	// Full again once the message is saved, when the answer is written.
	disk.set(func(name string, p []byte) bool { return bytes.Contains(p, []byte(`"role":"assistant"`)) })
	rg.client.SendUserMessage(rg.ctx(), "tabs")
	raw = rg.rawRun(t)
	if msg, _ := faultRunError(t, raw); !strings.Contains(msg, "saving the conversation") || !strings.Contains(msg, "no space left on device") {
		t.Fatalf("RUN_ERROR %q", msg)
	}
	want := append(before, "user:tabs")
	if got := contents(); !slices.Equal(got, want) {
		t.Fatalf("after the failed answer:\n%q\nwant\n%q", got, want)
	}

	// Space again.
	disk.set(nil)
	rg.client.SendUserMessage(rg.ctx(), "tabs")
	if last := rg.runEvents(t); last[len(last)-1].Type != "RUN_FINISHED" {
		t.Fatalf("turn after space returned: %+v", last[len(last)-1])
	}
	got := contents()
	if len(got) != len(want)+4 || !slices.Equal(got[:len(want)], want) || got[len(want)] != "user:tabs" {
		t.Fatalf("after space returned:\n%q", got)
	}
	if c := rg.stored(t); c.SkippedLines != 0 {
		t.Fatalf("%d damaged lines in the conversation file", c.SkippedLines)
	}
}

// ---- kill -9 ----

// faultKillClient is a simulated extension with an explicit stop, so that one
// per restart does not keep dialling a dead process until the test ends.
type faultKillClient struct {
	c    *sim.Client
	sub  *sim.Subscription
	stop func()
}

func connectFaultKill(t *testing.T, url, token string) *faultKillClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := sim.NewClient(sim.ClientOptions{URL: url, Token: token, Browser: &sim.Minimal{}, MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	sub := c.Subscribe()
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	k := &faultKillClient{c: c, sub: sub, stop: sync.OnceFunc(func() { cancel(); <-done; sub.Close() })}
	t.Cleanup(k.stop)
	wctx, wcancel := context.WithTimeout(ctx, faultGuard)
	defer wcancel()
	if err := c.WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}
	return k
}

// chatUntil waits for a chat event of one of the types.
func (k *faultKillClient) chatUntil(t *testing.T, types ...string) chatEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), faultGuard)
	defer cancel()
	for {
		f, err := sim.WaitFor[wire.ChatEvent](ctx, k.sub, nil)
		if err != nil {
			t.Fatalf("waiting for %v: %v", types, err)
		}
		e := decodeChat(t, f)
		if slices.Contains(types, e.Type) {
			return e
		}
	}
}

// TestFaultKillNineMidTurnRepeatedly kills `infer serve` with SIGKILL at a
// random moment 0–300 ms into a turn that calls four tools and streams its
// summary, fifteen times, restarting it each time on the same project.
// After every restart every conversation is listed and resumes, and holds
// everything it held before the kill except at most the torn tail.
//
// What counts as sent: a message is sent once the panel has seen the
// RUN_STARTED of its turn. The workspace emits it only after the message
// was appended to the conversation file (and fsynced), so a kill after it
// must not lose the message. A message whose sim.Client.SendUserMessage
// returned but whose run never started may or may not have reached infer
// (the bytes can still be in a socket buffer at the kill), so it is only
// required to appear at most once.
// panelArtifactLink is an artifact link as the panel gets it.
var panelArtifactLink = regexp.MustCompile(`\(http://127\.0\.0\.1:\d+/artifacts/`)

func TestFaultKillNineMidTurnRepeatedly(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and kills the infer binary")
	}
	home, token := initHome(t)
	project := t.TempDir()
	if err := os.WriteFile(config.ConfigPath(home), []byte("agent:\n  mode: auto\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	seed := rng.Uint64()
	rng = rand.New(rand.NewPCG(seed, 9))
	t.Logf("kill delays seeded with %d", seed)

	acked := map[string]string{}    // message → conversation, for messages whose run started
	maybe := map[string]bool{}      // sent, run never seen starting
	kept := map[string][]string{}   // conversation → what it held at the last restart
	finished := map[string]string{} // a completed turn's user message → its conversation
	const iterations = 15

	check := func(k *faultKillClient, iteration int) (latest string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), faultGuard)
		defer cancel()
		list, err := k.c.ListConversations(ctx)
		if err != nil {
			t.Fatalf("restart %d: list: %v", iteration, err)
		}
		listed := map[string]bool{}
		for _, c := range list.Conversations {
			listed[c.ID] = true
		}
		for id := range kept {
			if !listed[id] {
				t.Fatalf("restart %d: conversation %s is no longer listed", iteration, id)
			}
		}
		seen := map[string]int{}
		for _, c := range list.Conversations {
			snap, err := k.c.Resume(ctx, c.ID)
			if err != nil {
				t.Fatalf("restart %d: resume %s: %v", iteration, c.ID, err)
			}
			var now []string
			for _, m := range snap.Messages {
				// The panel's artifact links name this run's port; the
				// stored text they come from does not change.
				now = append(now, m.Role+":"+panelArtifactLink.ReplaceAllString(m.Content, "(/artifacts/"))
				if m.Role == "user" {
					seen[m.Content]++
				}
			}
			prev := kept[c.ID]
			if len(now) < len(prev) || !slices.Equal(now[:len(prev)], prev) {
				t.Fatalf("restart %d: conversation %s lost messages it held before the kill:\nbefore %q\nnow    %q", iteration, c.ID, prev, now)
			}
			kept[c.ID] = now
		}
		for msg, conv := range acked {
			if seen[msg] != 1 {
				t.Fatalf("restart %d: acknowledged message %q (conversation %s) is stored %d times", iteration, msg, conv, seen[msg])
			}
		}
		for msg := range maybe {
			if seen[msg] > 1 {
				t.Fatalf("restart %d: %q stored %d times", iteration, msg, seen[msg])
			}
		}
		for msg, conv := range finished {
			// A turn that ended before the kill is whole: its user
			// message is followed by its answer.
			found := false
			for i, line := range kept[conv] {
				if line == "user:"+msg && i+1 < len(kept[conv]) && strings.HasPrefix(kept[conv][i+1], "assistant:") {
					found = true
				}
			}
			if !found {
				t.Fatalf("restart %d: the finished turn %q is not whole in %s: %q", iteration, msg, conv, kept[conv])
			}
		}
		if len(list.Conversations) > 0 {
			latest = list.Conversations[0].ID
		}
		return latest
	}

	for i := 0; i < iterations; i++ {
		p := startServe(t, home, project)
		k := connectFaultKill(t, p.url, token)
		latest := check(k, i)
		ctx, cancel := context.WithTimeout(context.Background(), faultGuard)
		if i%4 == 0 || latest == "" {
			if _, err := k.c.NewSession(ctx); err != nil {
				t.Fatal(err)
			}
		} else if _, err := k.c.Resume(ctx, latest); err != nil {
			t.Fatal(err)
		}

		short := fmt.Sprintf("read #done-%d", i)
		k.c.SendUserMessage(ctx, short)
		k.chatUntil(t, "RUN_STARTED")
		if end := k.chatUntil(t, "RUN_FINISHED", "RUN_ERROR"); end.Type != "RUN_FINISHED" {
			t.Fatalf("iteration %d: the short turn failed: %+v", i, end)
		}
		// The conversation id is known once the first message is stored.
		list, _ := k.c.ListConversations(ctx)
		conv := list.Conversations[0].ID
		acked[short], finished[short] = conv, conv

		long := fmt.Sprintf("open demo.infer.localhost/kill-%d; read #kill-%d; screenshot; tabs", i, i)
		k.c.SendUserMessage(ctx, long)
		maybe[long] = true
		k.chatUntil(t, "RUN_STARTED")
		delete(maybe, long)
		acked[long] = conv
		time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		// A message that may or may not get in before the kill.
		racing := fmt.Sprintf("read #racing-%d", i)
		k.c.SendUserMessage(ctx, racing)
		maybe[racing] = true
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
		cancel()
		k.stop()
	}

	p := startServe(t, home, project)
	k := connectFaultKill(t, p.url, token)
	latest := check(k, iterations)
	ctx, cancel := context.WithTimeout(context.Background(), faultGuard)
	defer cancel()
	if _, err := k.c.Resume(ctx, latest); err != nil {
		t.Fatal(err)
	}
	k.c.SendUserMessage(ctx, "read #after-all-the-kills")
	if end := k.chatUntil(t, "RUN_FINISHED", "RUN_ERROR"); end.Type != "RUN_FINISHED" {
		t.Fatalf("the turn after the last restart failed: %+v", end)
	}
	st, err := store.Open(config.ConversationsDir(home, project), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	metas, _ := st.List()
	for _, m := range metas {
		c, err := st.Load(m.ID)
		if err != nil || c.SkippedLines > 1 {
			t.Fatalf("conversation %s: %d unreadable lines, %v", m.ID, c.SkippedLines, err)
		}
	}
	t.Logf("%d conversations, %d acknowledged messages kept through %d kills", len(metas), len(acked), iterations)
}

// ---- sustained simulator faults ----

// faultDroppingBrowser is sim.Minimal whose connection drops every nth
// command, the way a service worker is suspended now and then: the
// command is never answered and the extension comes back a moment later.
type faultDroppingBrowser struct {
	sim.Minimal
	every  int
	client *sim.Client // set before the client runs

	mu    sync.Mutex
	count int
	drops sync.WaitGroup
}

func (d *faultDroppingBrowser) Do(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult {
	d.mu.Lock()
	d.count++
	drop := d.every > 0 && d.count%d.every == 0
	d.mu.Unlock()
	if drop {
		d.drops.Add(1)
		go func() {
			defer d.drops.Done()
			d.client.Disconnect()
			time.Sleep(20 * time.Millisecond)
			d.client.Reconnect()
		}()
		<-ctx.Done()
		return wire.BrowserResult{Error: "dropped"}
	}
	return d.Minimal.Do(ctx, cmd)
}

// faultDriverOutcomes counts how direct driver calls ended.
type faultDriverOutcomes struct {
	mu                                      sync.Mutex
	ok, timeout, disconnected, notConnected int
	other                                   []string
	slowest                                 time.Duration
}

func (o *faultDriverOutcomes) add(err error, took time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.slowest = max(o.slowest, took)
	var ce *browser.CommandError
	switch {
	case err == nil:
		o.ok++
	case errors.Is(err, browser.ErrTimeout):
		o.timeout++
	case errors.Is(err, browser.ErrDisconnected):
		o.disconnected++
	case errors.Is(err, browser.ErrNotConnected):
		o.notConnected++
	case errors.As(err, &ce) && strings.Contains(ce.Message, "timed out"):
		// The simulated browser's own timeout after a disconnect
		// cancelled the command: an answer, just a failed one.
		o.ok++
	default:
		o.other = append(o.other, err.Error())
	}
}

// TestFaultSustainedSimulatorFaults runs browser tool turns in auto mode
// and direct driver calls for 20 s against an extension that drops 20% of
// its results, sends 20% twice, precedes 20% with a malformed frame, adds
// 5 ms to each command and drops its connection every 50 commands, with a
// 1 s command timeout. infer never crashes or hangs: every turn ends with
// exactly one terminal event, every driver call ends in a result, a
// timeout or a disconnect within its budget, and the goroutines return to
// where they were once it is all shut down.
func TestFaultSustainedSimulatorFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for 20 seconds")
	}
	leaks := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, leaks) })
	const duration = 20 * time.Second
	const budget = time.Second

	br := &faultDroppingBrowser{every: 50}
	faults := &sim.Faults{Latency: 5 * time.Millisecond, DropResults: 0.2, DuplicateResults: 0.2, Malformed: 0.2, Seed: uint64(time.Now().UnixNano())}
	t.Logf("faults: %s", faults)
	rg := startFaultRig(t, "", "", faultRigOptions{Browser: br, Faults: faults, CommandTimeout: budget})
	br.client = rg.client
	rg.setMode("auto")
	watch := rg.watch(t)

	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	var wg sync.WaitGroup
	var outcomes faultDriverOutcomes
	actions := []browser.Command{
		{Action: browser.Navigate, URL: "https://example.com/"}, {Action: browser.Read}, {Action: browser.Tabs},
		{Action: browser.Screenshot}, {Action: browser.Click, Selector: "a"}, {Action: browser.Type, Selector: "input", Text: "x"},
	}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; ctx.Err() == nil; i++ {
				start := time.Now()
				_, err := rg.app.Seat.Server().Do(context.Background(), actions[i%len(actions)])
				outcomes.add(err, time.Since(start))
				if errors.Is(err, browser.ErrNotConnected) {
					rg.client.WaitConnected(ctx) // not a busy loop while it reconnects
				}
			}
		}()
	}

	turns, failed := 0, 0
	var turnErr error
	for ctx.Err() == nil {
		rg.app.Workspace.Send(fmt.Sprintf("open demo.infer.localhost/%d; read; tabs; screenshot", turns), tools.OriginTerminal)
		rctx, rcancel := context.WithTimeout(context.Background(), faultGuard)
		run, err := watch.next(rctx)
		rcancel()
		if err != nil {
			buf := make([]byte, 4<<20)
			buf = buf[:runtime.Stack(buf, true)]
			turnErr = fmt.Errorf("turn %d: %w\n%s", turns, err, buf)
			break
		}
		turns++
		if !run.finished() {
			failed++
			t.Logf("turn %d ended with %v: %s", turns, run.terminal.Type(), run.errorMessage())
		}
	}
	cancel()
	wg.Wait()
	br.drops.Wait()
	if turnErr != nil {
		t.Fatal(turnErr)
	}

	// No second terminal event trails any run, and the workspace is idle.
	faultSettles(t, "turns still running", 0, func() int {
		if rg.app.Workspace.Busy() {
			return 1
		}
		return 0
	})
	for _, ev := range watch.sub.Drain() {
		if c, ok := ev.(session.TranscriptChanged); ok {
			if evs := watch.enc.Encode(c.Change); len(evs) > 0 {
				t.Fatalf("a chat event after the last run ended: %v", evs[0].Type())
			}
		}
	}
	o := &outcomes
	t.Logf("%d turns (%d not finished); driver calls: %d answered, %d timed out, %d disconnected, %d while reconnecting; slowest %v",
		turns, failed, o.ok, o.timeout, o.disconnected, o.notConnected, o.slowest)
	if len(o.other) > 0 {
		t.Fatalf("driver calls failed unexpectedly: %q", o.other[:min(5, len(o.other))])
	}
	if o.timeout == 0 || o.disconnected == 0 || o.ok == 0 || turns == 0 {
		t.Fatal("the faults did not happen, so this run proves nothing")
	}
	// A hang guard, not a speed check: the budget plus the grace, with
	// room for a loaded machine.
	if o.slowest > budget+10*time.Second {
		t.Fatalf("a driver call took %v with a %v budget", o.slowest, budget)
	}
	if failed > 0 {
		t.Fatalf("%d of %d turns did not finish", failed, turns)
	}

	// Still healthy: a turn without faults in the way works.
	rg.client.Disconnect()
	rg.app.Workspace.Send("tabs", tools.OriginTerminal)
	if run := watch.run(); !run.finished() {
		t.Fatalf("the turn after the faults: %v", run.terminal.Type())
	}
	rg.shutdown()
}
