package main

// Hostile clients: each test attacks a running infer serve over loopback
// while, where it matters, a well-behaved simulated extension keeps using
// it. Timing-sensitive attacks run on serve's wiring built by hand
// (hostileRig) so the bridge's timeouts can be shrunk; the checks a web
// page or a crash would defeat run against the real binary.

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/bridge/agui"
	"github.com/infer-workspace/infer/bridge/panelsync"
	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/internal/syncbuf"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/demo"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/sim"
)

// hostileGuard bounds every wait in these tests: a "did not hang" limit,
// never a speed check.
const hostileGuard = 10 * time.Second

// extensionOrigin is an Origin the bridge accepts.
const extensionOrigin = "chrome-extension://hostiletestextension"

// demoOnly is a test double of llm.Catalog serving offline/demo alone.
type demoOnly struct{ m *demo.Model }

func (c demoOnly) Models() []string { return []string{demo.ID} }
func (c demoOnly) Resolve(id string) (llm.Provider, string, error) {
	if id != demo.ID {
		return nil, "", fmt.Errorf("unknown model %q", id)
	}
	return c.m, "demo", nil
}

// rigOptions adjusts a hostileRig.
type rigOptions struct {
	bridge  func(*bridge.Options)
	session func(*session.Options)
	// noClient leaves the rig without a connected extension.
	noClient bool
}

// hostileRig is infer serve's wiring (a workspace with a file store and
// history, the panel mirror, the bridge driving the browser tools) built
// by hand, with a simulated extension connected.
type hostileRig struct {
	t      *testing.T
	dir    string
	token  string
	logs   *syncbuf.Buffer
	store  *store.Store
	hist   *store.History
	ws     *session.Workspace
	panel  *panelsync.Sync
	srv    *bridge.Server
	served chan error
	client *sim.Client
	frames *sim.Subscription

	stopClient context.CancelFunc
	clientDone chan struct{}
	closeOnce  sync.Once
}

func newHostileRig(t *testing.T, ro rigOptions) *hostileRig {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(filepath.Join(dir, "conversations"), store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	hist, err := store.OpenHistory(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	r := &hostileRig{t: t, dir: dir, token: "hostile-rig-token-" + strings.Repeat("k", 25), logs: &syncbuf.Buffer{}, store: st, hist: hist}
	log := slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	env := &tools.Env{Root: dir, ArtifactsDir: filepath.Join(dir, "artifacts")}
	so := session.Options{
		Store: st, History: hist, Catalog: demoOnly{&demo.Model{}},
		Tools:  tools.PipelineConfig{Env: env},
		Logger: log,
	}
	if ro.session != nil {
		ro.session(&so)
	}
	if r.ws, err = session.New(so); err != nil {
		t.Fatal(err)
	}
	r.panel = panelsync.New(r.ws, log)
	bo := bridge.Options{
		Token: r.token, Panel: r.panel, Logger: log,
		ArtifactsDir: env.ArtifactsDir,
		CloseGrace:   100 * time.Millisecond,
		OnStatus:     r.ws.SetBrowserStatus,
	}
	if ro.bridge != nil {
		ro.bridge(&bo)
	}
	if r.srv, err = bridge.Listen(bo); err != nil {
		t.Fatal(err)
	}
	env.Browser = r.ws.WatchBrowser(r.srv)
	r.served = make(chan error, 1)
	go func() { r.served <- r.srv.Serve(context.Background()) }()
	t.Cleanup(r.close)
	if !ro.noClient {
		r.client, r.frames = r.connect()
	}
	return r
}

// connect runs a simulated extension until the rig closes.
func (r *hostileRig) connect() (*sim.Client, *sim.Subscription) {
	r.t.Helper()
	c := sim.NewClient(sim.ClientOptions{URL: r.srv.URL(), Token: r.token, Browser: &sim.Minimal{}, MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	frames := c.Subscribe()
	ctx, cancel := context.WithCancel(context.Background())
	r.stopClient, r.clientDone = cancel, make(chan struct{})
	go func() { defer close(r.clientDone); c.Run(ctx) }()
	wctx, wcancel := context.WithTimeout(ctx, hostileGuard)
	defer wcancel()
	if err := c.WaitConnected(wctx); err != nil {
		r.t.Fatal(err)
	}
	if _, err := sim.WaitFor[wire.Mode](wctx, frames, nil); err != nil {
		r.t.Fatal(err)
	}
	return c, frames
}

// close stops everything the rig started; safe to call more than once.
func (r *hostileRig) close() {
	r.closeOnce.Do(func() {
		if r.stopClient != nil {
			r.stopClient()
			<-r.clientDone
			r.frames.Close()
		}
		r.srv.Close()
		if err := <-r.served; err != nil {
			r.t.Errorf("Serve: %v", err)
		}
		r.panel.Close()
		r.ws.Close()
		r.hist.Close()
	})
}

func (r *hostileRig) addr() string { return "127.0.0.1:" + strconv.Itoa(r.srv.Port()) }

func guardCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), hostileGuard)
	t.Cleanup(cancel)
	return ctx
}

// driverLoop keeps the agent's browser driver busy with tabs commands, the
// way the agent uses the real extension, and counts what failed.
type driverLoop struct {
	stop, done chan struct{}
	ok, failed atomic.Int64
	mu         sync.Mutex
	firstErr   error
	slowest    time.Duration
}

func startDriverLoop(d browser.Driver) *driverLoop {
	l := &driverLoop{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for {
			select {
			case <-l.stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), hostileGuard)
			start := time.Now()
			_, err := d.Do(ctx, browser.Command{Action: browser.Tabs})
			took := time.Since(start)
			cancel()
			l.mu.Lock()
			l.slowest = max(l.slowest, took)
			if err != nil && l.firstErr == nil {
				l.firstErr = err
			}
			l.mu.Unlock()
			if err != nil {
				l.failed.Add(1)
			} else {
				l.ok.Add(1)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return l
}

// finish stops the loop and fails the test unless every command succeeded
// (and some ran).
func (l *driverLoop) finish(t *testing.T) {
	t.Helper()
	close(l.stop)
	<-l.done
	if n := l.failed.Load(); n > 0 {
		t.Errorf("%d browser commands failed during the attack; first: %v", n, l.firstErr)
	}
	if l.ok.Load() == 0 {
		t.Error("no browser command completed during the attack")
	}
	t.Logf("browser commands answered during the attack: %d, the slowest in %v", l.ok.Load(), l.slowest.Round(time.Millisecond))
}

// upgradeRequest is a WebSocket upgrade for /ws, as a browser would send
// it; an empty origin leaves the header out.
func upgradeRequest(host, origin string) string {
	var b strings.Builder
	b.WriteString("GET /ws HTTP/1.1\r\nHost: " + host + "\r\n")
	b.WriteString("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n")
	b.WriteString("Sec-WebSocket-Key: aG9zdGlsZS10ZXN0LWtleQ==\r\n")
	if origin != "" {
		b.WriteString("Origin: " + origin + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

// rawConn is a TCP connection driven byte by byte.
type rawConn struct {
	net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, hostileGuard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{Conn: c, br: bufio.NewReader(c)}
}

// send writes s whole.
func (c *rawConn) send(s string) error {
	c.SetWriteDeadline(time.Now().Add(hostileGuard))
	_, err := io.WriteString(c, s)
	return err
}

// response reads one HTTP response head and its body.
func (c *rawConn) response() (*http.Response, string, error) {
	c.SetReadDeadline(time.Now().Add(hostileGuard))
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return resp, "", nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body), err
}

// closedByServer reads (and drops) whatever comes until the server ends
// the connection, and reports whether it did within d.
func (c *rawConn) closedByServer(d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c.br)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// closeFrame reads the server's first WebSocket frame, which must be a
// close frame, and returns its code and reason.
func (c *rawConn) closeFrame(d time.Duration) (int, string, error) {
	c.SetReadDeadline(time.Now().Add(d))
	var head [2]byte
	if _, err := io.ReadFull(c.br, head[:]); err != nil {
		return 0, "", err
	}
	if head[0] != 0x88 || head[1] > 125 {
		return 0, "", fmt.Errorf("first frame is %#x/%#x, not a close frame", head[0], head[1])
	}
	payload := make([]byte, head[1])
	if _, err := io.ReadFull(c.br, payload); err != nil {
		return 0, "", err
	}
	if len(payload) < 2 {
		return 0, "", errors.New("close frame without a code")
	}
	return int(binary.BigEndian.Uint16(payload)), string(payload[2:]), nil
}

// clientFrame encodes one masked WebSocket frame, as a client must send it.
func clientFrame(opcode byte, payload []byte) []byte {
	b := []byte{0x80 | opcode}
	switch n := len(payload); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = append(b, 0x80|126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	mask := [4]byte{0x5a, 0x17, 0xc3, 0x88}
	b = append(b, mask[:]...)
	for i, c := range payload {
		b = append(b, c^mask[i%4])
	}
	return b
}

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot count file descriptors: %v", err)
	}
	return len(entries)
}

// settlesTo waits until count() is at most limit, and fails the test if it
// never gets there.
func settlesTo(t *testing.T, what string, limit int, count func() int) {
	t.Helper()
	deadline := time.Now().Add(hostileGuard)
	for {
		n := count()
		if n <= limit {
			t.Logf("%s settled at %d (limit %d)", what, n, limit)
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: %d after the attack, want at most %d", what, n, limit)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wrongTokenHello dials /ws as an extension, says hello with token and
// returns the close code the server answered with.
func wrongTokenHello(addr, token string) (int, error) {
	d := websocket.Dialer{HandshakeTimeout: hostileGuard}
	ws, resp, err := d.Dial("ws://"+addr+"/ws", http.Header{"Origin": {extensionOrigin}})
	if err != nil {
		if resp != nil {
			return resp.StatusCode, err
		}
		return 0, err
	}
	defer ws.Close()
	ws.SetWriteDeadline(time.Now().Add(hostileGuard))
	if err := ws.WriteMessage(websocket.TextMessage, wire.MustEncode(wire.BrowserHello{Token: token, ExtensionVersion: "hostile"})); err != nil {
		return 0, err
	}
	ws.SetReadDeadline(time.Now().Add(2 * hostileGuard))
	for {
		if _, _, err := ws.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, nil
			}
			return 0, err
		}
	}
}

// TestHostileUnauthenticatedAndWrongTokenFloods opens 200 sockets at once
// that never say hello, then makes 500 attempts with wrong tokens, while
// the agent keeps driving the connected extension's browser.
func TestHostileUnauthenticatedAndWrongTokenFloods(t *testing.T) {
	const helloTimeout = 1500 * time.Millisecond
	const maxPending = 16
	r := newHostileRig(t, rigOptions{bridge: func(o *bridge.Options) {
		o.HelloTimeout = helloTimeout
		o.MaxPendingHandshakes = maxPending
		// Hold-backs short enough for 500 attempts to finish quickly.
		o.AuthBackoff = 2 * time.Millisecond
		o.AuthBackoffMax = 10 * time.Millisecond
	}})
	baseGoroutines, baseFDs := runtime.NumGoroutine(), openFDs(t)
	loop := startDriverLoop(r.srv)

	// 200 silent sockets: connected first, then all asking for the
	// upgrade at once.
	const silent = 200
	conns := make([]*rawConn, silent)
	for i := range conns {
		conns[i] = dialRaw(t, r.addr())
	}
	type outcome struct {
		code     int
		closeErr error
		reason   string
		ended    bool
	}
	outcomes := make([]outcome, silent)
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := &outcomes[i]
			if err := c.send(upgradeRequest(r.addr(), extensionOrigin)); err != nil {
				o.closeErr = err
				return
			}
			resp, _, err := c.response()
			if err != nil {
				o.closeErr = err
				return
			}
			o.code = resp.StatusCode
			if o.code == http.StatusSwitchingProtocols {
				var code int
				code, o.reason, o.closeErr = c.closeFrame(hostileGuard)
				// 1008 for the hello timeout, 1013 for a socket evicted
				// to make room for a newer one.
				if o.closeErr == nil && code != websocket.ClosePolicyViolation && code != websocket.CloseTryAgainLater {
					o.closeErr = fmt.Errorf("close code %d", code)
				}
			}
			o.ended = c.closedByServer(hostileGuard)
		}()
	}
	wg.Wait()
	// A newcomer evicts the socket that has waited longest for its hello,
	// so silent sockets cannot keep the extension out: most are evicted,
	// the last ones to arrive time out, and a newcomer finding every slot
	// already being freed for others is refused with 503.
	upgraded, evicted, timedOut, busy := 0, 0, 0, 0
	for i, o := range outcomes {
		switch o.code {
		case http.StatusSwitchingProtocols:
			upgraded++
			switch {
			case strings.Contains(o.reason, "no browser_hello within"):
				timedOut++
			case strings.Contains(o.reason, "newer connection needed the slot"):
				evicted++
			default:
				t.Errorf("silent socket %d closed with %q (%v), want the hello timeout or an eviction", i, o.reason, o.closeErr)
			}
		case http.StatusServiceUnavailable:
			busy++
		default:
			t.Errorf("silent socket %d: HTTP %d (%v)", i, o.code, o.closeErr)
		}
		if !o.ended {
			t.Errorf("silent socket %d (HTTP %d) was still open %v later", i, o.code, hostileGuard)
		}
	}
	t.Logf("silent sockets: %d upgraded (%d evicted, %d timed out), %d refused with 503", upgraded, evicted, timedOut, busy)
	// At most maxPending sockets ever wait for a hello at once, so at most
	// that many can still be waiting when the hello timeout comes.
	if timedOut > maxPending || upgraded+busy != silent {
		t.Errorf("%d silent sockets timed out, want at most %d; %d upgraded and %d refused of %d", timedOut, maxPending, upgraded, busy, silent)
	}

	// 500 wrong tokens from 8 sockets at a time.
	const attempts, workers = 500, 8
	var next atomic.Int64
	var refused atomic.Int64
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= attempts {
				code, err := wrongTokenHello(r.addr(), "not-the-token")
				if err != nil || code != websocket.ClosePolicyViolation {
					errs <- fmt.Errorf("wrong token: code %d, %v", code, err)
					return
				}
				refused.Add(1)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if refused.Load() != attempts {
		t.Errorf("%d of %d wrong tokens refused", refused.Load(), attempts)
	}
	loop.finish(t)
	if n := r.client.Connects(); n != 1 || !r.client.Connected() {
		t.Errorf("the real extension lost its connection (connects %d, connected %v)", n, r.client.Connected())
	}
	for _, c := range conns {
		c.Close()
	}
	settlesTo(t, "goroutines", baseGoroutines+5, runtime.NumGoroutine)
	settlesTo(t, "open file descriptors", baseFDs+5, func() int { return openFDs(t) })

	logs := r.logs.String()
	if n := strings.Count(logs, "tried a wrong token"); n == 0 || n > 3 {
		t.Errorf("%d log lines about wrong tokens for %d attempts, want a first line and few summaries", n, attempts)
	}
	if n := strings.Count(logs, "no browser_hello within"); n == 0 || n > 3 {
		t.Errorf("%d log lines about silent sockets, want a first line and few summaries", n)
	}
}

// TestHostileSlowLorisIsCutAtTheDeadline dribbles requests and hellos a
// byte at a time, and holds connections that say nothing: the server cuts
// each at its deadline while the extension keeps working.
func TestHostileSlowLorisIsCutAtTheDeadline(t *testing.T) {
	t.Parallel()
	const helloTimeout = 500 * time.Millisecond
	r := newHostileRig(t, rigOptions{bridge: func(o *bridge.Options) { o.HelloTimeout = helloTimeout }})
	loop := startDriverLoop(r.srv)
	dribble := func(c *rawConn, s string) {
		for i := range len(s) {
			if c.send(s[i:i+1]) != nil {
				return // cut off
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	type attack struct {
		name string
		run  func(c *rawConn) error
	}
	attacks := []attack{
		{"upgrade request a byte at a time", func(c *rawConn) error {
			go dribble(c, upgradeRequest(r.addr(), extensionOrigin))
			return nil
		}},
		{"hello a byte at a time", func(c *rawConn) error {
			if err := c.send(upgradeRequest(r.addr(), extensionOrigin)); err != nil {
				return err
			}
			if resp, _, err := c.response(); err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
				return fmt.Errorf("upgrade: %v %v", resp, err)
			}
			go dribble(c, string(clientFrame(websocket.TextMessage, wire.MustEncode(wire.BrowserHello{Token: r.token, ExtensionVersion: "slow"}))))
			code, reason, err := c.closeFrame(hostileGuard)
			if err != nil || code != websocket.ClosePolicyViolation || !strings.Contains(reason, "no browser_hello within") {
				return fmt.Errorf("close %d %q %v, want 1008 for the hello timeout", code, reason, err)
			}
			return nil
		}},
		{"connection that says nothing", func(c *rawConn) error { return nil }},
		{"idle keep-alive connection", func(c *rawConn) error {
			if err := c.send("GET /artifacts/none.png HTTP/1.1\r\nHost: " + r.addr() + "\r\n\r\n"); err != nil {
				return err
			}
			resp, _, err := c.response()
			if err != nil || resp.StatusCode != http.StatusNotFound {
				return fmt.Errorf("GET: %v %v", resp, err)
			}
			return nil
		}},
		{"request body that never comes", func(c *rawConn) error {
			return c.send("POST /artifacts/x.png HTTP/1.1\r\nHost: " + r.addr() + "\r\nContent-Length: 1000\r\n\r\n")
		}},
	}
	var wg sync.WaitGroup
	for _, a := range attacks {
		c := dialRaw(t, r.addr())
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			if err := a.run(c); err != nil {
				t.Errorf("%s: %v", a.name, err)
				return
			}
			if !c.closedByServer(hostileGuard) {
				t.Errorf("%s: still open after %v", a.name, hostileGuard)
				return
			}
			// The server gives every socket at least its deadline.
			if took := time.Since(start); took < helloTimeout/2 {
				t.Errorf("%s: cut after %v, before the %v deadline", a.name, took, helloTimeout)
			}
		}()
	}
	wg.Wait()
	loop.finish(t)
	if n := r.client.Connects(); n != 1 {
		t.Errorf("the real extension reconnected %d times", n-1)
	}
}

// TestHostileWebPageOriginsGet403 is a web page's new WebSocket(...) to
// the real infer serve: refused before the upgrade.
func TestHostileWebPageOriginsGet403(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the infer binary")
	}
	home, _ := initHome(t)
	p := startServe(t, home, t.TempDir())
	addr := strings.TrimSuffix(strings.TrimPrefix(p.url, "ws://"), "/ws")
	for _, origin := range []string{"http://evil.example", "https://evil.example", "null", "http://" + addr, "file://"} {
		c := dialRaw(t, addr)
		if err := c.send(upgradeRequest(addr, origin)); err != nil {
			t.Fatal(err)
		}
		resp, body, err := c.response()
		if err != nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("Origin %s: %v %v, want 403", origin, resp, err)
			continue
		}
		if resp.Header.Get("Upgrade") != "" || !strings.Contains(body, "forbidden") {
			t.Errorf("Origin %s: 403 with Upgrade %q, body %q", origin, resp.Header.Get("Upgrade"), body)
		}
	}
	// The extension's own origin still gets in.
	c := dialRaw(t, addr)
	c.send(upgradeRequest(addr, extensionOrigin))
	if resp, _, err := c.response(); err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("extension origin: %v %v", resp, err)
	}
}

// TestHostileRebindingHostsGet403 sends the Host headers a DNS-rebinding
// page would to every route of the real infer serve.
func TestHostileRebindingHostsGet403(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the infer binary")
	}
	home, token := initHome(t)
	project := t.TempDir()
	art := config.ArtifactsDir(home, project)
	if err := os.MkdirAll(art, 0o700); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(art, "shot.png"), []byte("\x89PNG\r\n\x1a\nnot really"), 0o600)
	p := startServe(t, home, project)
	u, _ := url.Parse(p.url)
	port, _ := strconv.Atoi(u.Port())
	addr := u.Host
	get := func(host, path string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			t.Fatalf("GET %s (Host %s): %v", path, host, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	upgrade := func(host string) int {
		t.Helper()
		c := dialRaw(t, addr)
		c.send(upgradeRequest(host, extensionOrigin))
		resp, _, err := c.response()
		if err != nil {
			t.Fatalf("upgrade (Host %s): %v", host, err)
		}
		return resp.StatusCode
	}
	ps := strconv.Itoa(port)
	for _, host := range []string{
		"evil.example:" + ps, "127.0.0.1.nip.io:" + ps, "localhost.evil:" + ps,
		"127.0.0.1", "localhost", "127.0.0.1:" + strconv.Itoa(port+1), "localhost:" + strconv.Itoa(port+1),
	} {
		if code := upgrade(host); code != http.StatusForbidden {
			t.Errorf("/ws with Host %s: %d, want 403", host, code)
		}
		for _, path := range []string{"/artifacts/shot.png", "/status"} {
			if code := get(host, path); code != http.StatusForbidden {
				t.Errorf("%s with Host %s: %d, want 403", path, host, code)
			}
		}
	}
	for _, host := range []string{addr, "localhost:" + ps} {
		if code := get(host, "/artifacts/shot.png"); code != http.StatusOK {
			t.Errorf("artifact with Host %s: %d, want 200", host, code)
		}
		if code := get(host, "/status"); code != http.StatusOK {
			t.Errorf("/status with Host %s: %d, want 200", host, code)
		}
	}
}

// vmHWM is the peak resident memory of a process, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("cannot read process memory: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	t.Skip("no VmHWM in /proc status")
	return 0
}

// TestHostileDeepAndHugeJSON sends the real infer serve deeply nested and
// oversized frames after authenticating: nested frames are dropped and the
// connection carries on, an oversized message is refused with a notice,
// an oversized frame closes the connection with 1009, and memory stays
// bounded throughout.
func TestHostileDeepAndHugeJSON(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the infer binary")
	}
	home, token := initHome(t)
	p := startServe(t, home, t.TempDir())
	c, sub := connect(t, p.url, token)
	ctx := testCtx(t)
	const depth = 100_000
	arrays := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	objects := strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
	for name, frame := range map[string]string{
		"arrays in user_message":       `{"type":"user_message","content":` + arrays + `}`,
		"objects in user_message":      `{"type":"user_message","content":` + objects + `}`,
		"arrays in an unknown frame":   `{"type":"from_the_future","payload":` + arrays + `}`,
		"arrays in browser_result":     `{"type":"browser_result","id":"r1","tabs":` + arrays + `}`,
		"arrays in browser_result ev.": `{"type":"browser_result","id":"r2","events":` + arrays + `}`,
		"objects in tool_request":      `{"type":"tool_request","id":"t1","tool_name":"Bash","tool_args":` + objects + `}`,
		"unclosed arrays":              `{"type":"user_message","content":` + strings.Repeat("[", depth) + `}`,
	} {
		if err := c.SendRaw(ctx, []byte(frame)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := c.ListHistory(ctx); err != nil {
			t.Fatalf("after %s the connection no longer answers: %v", name, err)
		}
	}
	if n := c.Connects(); n != 1 {
		t.Fatalf("nested frames cost the connection (%d connects)", n)
	}

	// A 60 MiB message fits a frame but not the workspace: refused, and
	// the panel is told. Moving 60 MiB through the race detector takes
	// seconds on a loaded machine, so this part has a guard of its own
	// rather than what is left of the nested frames'.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	huge := strings.Repeat("a", 60<<20)
	if err := c.SendRaw(ctx, wire.MustEncode(wire.UserMessage{Content: huge})); err != nil {
		t.Fatal(err)
	}
	ev, err := sim.WaitFor(ctx, sub, func(f wire.ChatEvent) bool { return strings.Contains(string(f.Event), agui.RefusedEvent) })
	if err != nil {
		t.Fatalf("no refusal notice for the 60 MiB message: %v", err)
	}
	var refusal struct {
		Value struct {
			Reason string `json:"reason"`
			Bytes  int    `json:"bytes"`
		} `json:"value"`
	}
	if err := json.Unmarshal(ev.Event, &refusal); err != nil || refusal.Value.Bytes != len(huge) || !strings.Contains(refusal.Value.Reason, "too large") {
		t.Fatalf("refusal %s: %v", ev.Event, err)
	}
	if len(ev.Event) > 64<<10 {
		t.Errorf("the refusal echoes %d bytes back", len(ev.Event))
	}
	h, err := c.ListHistory(ctx)
	if err != nil || len(h.History) != 0 {
		t.Fatalf("history after the refused message: %d entries, %v", len(h.History), err)
	}

	// A 70 MiB frame is over the 64 MiB limit: closed with 1009; the
	// extension reconnects. Its own guard again: the step above may have
	// used most of its own on a loaded machine (it once took 62 s).
	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c.SendRaw(ctx, []byte(`{"type":"user_message","content":"`+strings.Repeat("b", 70<<20)+`"}`))
	for c.Connects() < 2 {
		if ctx.Err() != nil {
			t.Fatalf("the extension never reconnected after the oversized frame; last error %v", c.LastError())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.LastError(); err == nil || !strings.Contains(err.Error(), "1009") {
		t.Errorf("connection ended with %v, want close code 1009", err)
	}
	if _, err := c.ListHistory(ctx); err != nil {
		t.Fatalf("after reconnecting: %v", err)
	}
	select {
	case <-p.done:
		t.Fatal("infer serve exited")
	default:
	}
	peak := vmHWM(t, p.cmd.Process.Pid)
	t.Logf("infer serve's peak resident memory: %d MiB", peak>>20)
	if peak > 768<<20 {
		t.Errorf("infer serve's memory peaked at %d MiB for 64 MiB frames", peak>>20)
	}
}

// refusedContent returns the content of a message refusal notice.
func refusedContent(f wire.ChatEvent) (string, bool) {
	var e struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Value struct {
			Content string `json:"content"`
		} `json:"value"`
	}
	if json.Unmarshal(f.Event, &e) != nil || e.Type != "CUSTOM" || e.Name != agui.RefusedEvent {
		return "", false
	}
	return e.Value.Content, true
}

// TestHostilePanelFloodOfUserMessages sends 10,000 user_message frames as
// fast as it can while the agent waits on an approval: the connection
// stays up, browser commands keep being answered, the first 100 wait
// (session.DefaultMaxQueued) and run, and each of the rest is refused with
// a notice. No message is lost silently.
func TestHostilePanelFloodOfUserMessages(t *testing.T) {
	r := newHostileRig(t, rigOptions{session: func(o *session.Options) {
		o.Catalog = demoOnly{&demo.Model{Delay: 0}}
	}})
	// One guard covers 10,000 frames and 100 turns: under the race
	// detector on a busy 2-vCPU machine that took longer than the 10 s
	// meant for a single step (the flaky-test hunt saw it twice).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// A turn waiting on an approval keeps the agent busy while the
	// flood arrives, so exactly the cap is accepted.
	if err := r.client.SendUserMessage(ctx, "run touch held.txt"); err != nil {
		t.Fatal(err)
	}
	approval, err := sim.WaitFor[wire.ApprovalRequest](ctx, r.frames, nil)
	if err != nil {
		t.Fatal(err)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stopSampling:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	loop := startDriverLoop(r.srv)

	const flood = 10_000
	sent := make([]string, flood)
	for i := range sent {
		sent[i] = fmt.Sprintf("flood message %05d", i)
		if err := r.client.SendRaw(ctx, wire.MustEncode(wire.UserMessage{Content: sent[i]})); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	// Frames are handled in order: once this is answered, every message
	// was accepted or refused.
	if _, err := r.client.ListHistory(ctx); err != nil {
		t.Fatalf("the connection no longer answers after the flood: %v", err)
	}
	loop.finish(t)
	close(stopSampling)
	<-sampled

	refused := map[string]bool{}
	for len(refused) < flood-session.DefaultMaxQueued {
		f, err := sim.WaitFor[wire.ChatEvent](ctx, r.frames, func(f wire.ChatEvent) bool { _, ok := refusedContent(f); return ok })
		if err != nil {
			t.Fatalf("%d refusal notices, want %d: %v", len(refused), flood-session.DefaultMaxQueued, err)
		}
		content, _ := refusedContent(f)
		if refused[content] {
			t.Fatalf("%q refused twice", content)
		}
		refused[content] = true
	}
	r.client.Reject(ctx, approval.RequestID)
	for r.ws.Busy() || len(r.ws.Queue()) > 0 {
		if ctx.Err() != nil {
			t.Fatalf("the accepted messages never ran: %d still waiting", len(r.ws.Queue()))
		}
		time.Sleep(20 * time.Millisecond)
	}

	conv, err := r.store.Load(r.ws.ActiveConversation())
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for _, m := range conv.Messages {
		if m.Role == "user" {
			stored = append(stored, m.Content)
		}
	}
	accepted := sent[:session.DefaultMaxQueued]
	if got, want := strings.Join(stored, "|"), strings.Join(append([]string{"run touch held.txt"}, accepted...), "|"); got != want {
		t.Fatalf("stored user messages:\n%.300s…\nwant:\n%.300s…", got, want)
	}
	for _, s := range sent[session.DefaultMaxQueued:] {
		if !refused[s] {
			t.Fatalf("%q was neither run nor refused", s)
		}
	}
	if got, want := strings.Join(r.hist.List(), "|"), strings.Join(append([]string{"run touch held.txt"}, accepted...), "|"); got != want {
		t.Fatalf("input history does not hold exactly the accepted messages")
	}
	if n := r.client.Connects(); n != 1 {
		t.Errorf("the flood cost the connection (%d connects)", n)
	}
	grew := int64(peak.Load()) - int64(before.HeapInuse)
	t.Logf("heap in use grew by at most %d MiB during the flood", grew>>20)
	if grew > 256<<20 {
		t.Errorf("the heap grew by %d MiB during a flood of short messages", grew>>20)
	}
	r.close()
	logs := r.logs.String()
	if n := strings.Count(logs, "panel: refused a message"); n < 1 || n > 3 {
		t.Errorf("%d log lines for single refusals, want a first line per interval", n)
	}
	if !strings.Contains(logs, "refused more messages") {
		t.Errorf("the refusals are not summed up in the log:\n%.2000s", logs)
	}
}

// TestHostileApprovalResponsesForIDsNeverIssued answers approvals that do
// not exist or were already answered: nothing happens, and the real
// pending approval is unaffected.
func TestHostileApprovalResponsesForIDsNeverIssued(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	s := serveInProcess(t, "", "")
	s.client.SendUserMessage(s.ctx(), "run touch first.txt")
	first := s.nextApproval()
	s.client.Approve(s.ctx(), first.RequestID)
	s.runUntilEnd()
	if _, err := os.Stat(filepath.Join(s.project, "first.txt")); err != nil {
		t.Fatal("the first approval did not run")
	}

	s.client.SendUserMessage(s.ctx(), "run touch second.txt")
	pending := s.nextApproval()
	later := s.client.Subscribe()
	defer later.Close()
	for _, frame := range []string{
		`{"type":"approval_response","request_id":"` + first.RequestID + `","action":"approve"}`,
		`{"type":"approval_response","request_id":"` + first.RequestID + `","action":"reject"}`,
		`{"type":"approval_response","request_id":"00000000-0000-0000-0000-000000000000","action":"approve"}`,
		`{"type":"approval_response","request_id":"","action":"approve"}`,
		`{"type":"approval_response","action":"approve"}`,
		`{"type":"approval_response","request_id":"` + strings.Repeat("x", 50_000) + `","action":"approve"}`,
		`{"type":"approval_response","request_id":42,"action":"approve"}`,
		`{"type":"approval_response","request_id":["` + pending.RequestID + `"],"action":"approve"}`,
		`{"type":"approval_response","request_id":"` + strings.ToUpper(pending.RequestID) + `","action":"approve"}`,
		`{"type":"approval_response","request_id":" ` + pending.RequestID + `","action":"approve"}`,
	} {
		if err := s.client.SendRaw(s.ctx(), []byte(frame)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.client.ListHistory(s.ctx()); err != nil {
		t.Fatalf("the connection no longer answers: %v", err)
	}
	p := s.app.Workspace.PendingApprovals()
	if len(p) != 1 || p[0].ID != pending.RequestID {
		t.Fatalf("pending approvals after the bogus answers: %+v", p)
	}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		f, err := later.Next(ctx)
		cancel()
		if err != nil {
			break
		}
		if res, ok := f.(wire.ApprovalResolved); ok {
			t.Fatalf("approval_resolved %s after a bogus answer", res.RequestID)
		}
	}
	if _, err := os.Stat(filepath.Join(s.project, "second.txt")); err == nil {
		t.Fatal("a bogus answer ran the pending call")
	}
	// The real answer still works.
	s.client.Approve(s.ctx(), pending.RequestID)
	if _, err := sim.WaitFor(s.ctx(), s.frames, func(f wire.ApprovalResolved) bool { return f.RequestID == pending.RequestID }); err != nil {
		t.Fatal(err)
	}
	s.runUntilEnd()
	if _, err := os.Stat(filepath.Join(s.project, "second.txt")); err != nil {
		t.Fatal("the real approval did not run")
	}
	if n := s.client.Connects(); n != 1 {
		t.Errorf("bogus answers cost the connection (%d connects)", n)
	}
}

// TestHostileReusedToolRequestIDs reuses a tool_request id while the
// first request runs (ignored) and after it finished (runs again): one
// tool_result per accepted request.
func TestHostileReusedToolRequestIDs(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	s := serveInProcess(t, "", "")
	s.setMode("auto")
	results := s.client.Subscribe()
	defer results.Close()
	request := func(id, command string) {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"command": command})
		if err := s.client.SendRaw(s.ctx(), wire.MustEncode(wire.ToolRequest{ID: id, ToolName: "Bash", ToolArgs: string(args)})); err != nil {
			t.Fatal(err)
		}
	}
	const id = "reused-id"
	request(id, "sleep 2; echo first")
	// Were it run, the duplicate would answer well before the first.
	request(id, "sleep 0.2; echo duplicate")
	first, err := sim.WaitFor(s.ctx(), results, func(f wire.ToolResult) bool { return f.ID == id })
	if err != nil {
		t.Fatal(err)
	}
	if !first.Success || strings.TrimSpace(first.Output) != "first" {
		t.Fatalf("first result: %+v (the duplicate ran?)", first)
	}
	// Finished: the same id is a new request now.
	request(id, "echo again")
	second, err := sim.WaitFor(s.ctx(), results, func(f wire.ToolResult) bool { return f.ID == id })
	if err != nil {
		t.Fatal(err)
	}
	if !second.Success || strings.TrimSpace(second.Output) != "again" {
		t.Fatalf("second result: %+v", second)
	}
	if _, err := s.client.ListHistory(s.ctx()); err != nil {
		t.Fatal(err)
	}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		f, err := results.Next(ctx)
		cancel()
		if err != nil {
			break
		}
		if res, ok := f.(wire.ToolResult); ok && res.ID == id {
			t.Fatalf("a third tool_result for the id: %+v", res)
		}
	}
}

// TestHostileWrongTokensAreSlowedButNeverLockOutTheRightOne floods wrong
// tokens from the loopback: answers to them are held back more and more,
// while the right token still gets in at once, on /ws and on /status.
func TestHostileWrongTokensAreSlowedButNeverLockOutTheRightOne(t *testing.T) {
	t.Parallel()
	const burst, first, most = 3, 100 * time.Millisecond, 3 * time.Second
	r := newHostileRig(t, rigOptions{noClient: true, bridge: func(o *bridge.Options) {
		o.AuthFailureBurst = burst
		o.AuthBackoff = first
		o.AuthBackoffMax = most
	}})

	// Slowed: past the burst each answer takes at least twice as long as
	// the one before (a lower bound: the server waits on purpose).
	for i := range burst + 3 {
		start := time.Now()
		code, err := wrongTokenHello(r.addr(), "guess")
		if err != nil || code != websocket.ClosePolicyViolation {
			t.Fatalf("attempt %d: %d %v", i+1, code, err)
		}
		took := time.Since(start)
		if over := i + 1 - burst; over > 0 {
			if want := first << (over - 1); took < want {
				t.Fatalf("attempt %d answered after %v, want at least %v", i+1, took, want)
			}
		}
		t.Logf("wrong token %d answered after %v", i+1, took.Round(time.Millisecond))
	}

	// A flood keeps going from four sockets, each attempt now held back
	// for seconds. Each worker shows when its attempt in flight began.
	const workers = 4
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var began [workers]atomic.Int64
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				began[w].Store(time.Now().UnixNano())
				wrongTokenHello(r.addr(), "guess")
				began[w].Store(0)
			}
		}()
	}
	var stopOnce sync.Once
	stopFlood := func() { stopOnce.Do(func() { close(stop); r.close(); wg.Wait() }) }
	defer stopFlood()
	// Every worker's hello is being held back before the right one goes.
	for deadline := time.Now().Add(hostileGuard); r.srv.HeldBack() < workers; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d flooding hellos are held back", r.srv.HeldBack(), workers)
		}
	}

	// The right token meanwhile: a real extension connects while wrong
	// attempts sent before it are still waiting for their answer.
	start := time.Now()
	r.client, r.frames = r.connect()
	took := time.Since(start)
	t.Logf("the right token got in after %v during the flood", took.Round(time.Millisecond))
	overtaken := 0
	for w := range workers {
		if b := began[w].Load(); b != 0 && b < start.UnixNano() {
			overtaken++
		}
	}
	if overtaken == 0 {
		t.Errorf("the right token was answered only after every wrong one sent before it (took %v)", took)
	}
	if _, err := r.client.ListHistory(guardCtx(t)); err != nil {
		t.Fatal(err)
	}

	// /status: a wrong bearer is held back too, the right one is not.
	status := func(bearer string, sent chan<- struct{}) int {
		req, _ := http.NewRequest(http.MethodGet, "http://"+r.addr()+"/status", nil)
		if sent != nil {
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
				WroteRequest: func(httptrace.WroteRequestInfo) { close(sent) },
			}))
		}
		req.Header.Set("Authorization", "Bearer "+bearer)
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	wrong, sent := make(chan int, 1), make(chan struct{})
	go func() { wrong <- status("guess", sent) }()
	select {
	case <-sent: // the wrong bearer is on the wire before the right one
	case <-time.After(hostileGuard):
		t.Fatal("the wrong /status request was never sent")
	}
	if code := status(r.token, nil); code != http.StatusOK {
		t.Errorf("/status with the right token during the flood: %d", code)
	}
	select {
	case code := <-wrong:
		t.Errorf("a wrong /status bearer was answered (%d) before the right one", code)
	default:
	}

	logs := r.logs.String()
	if n := strings.Count(logs, "tried a wrong token"); n != 1 {
		t.Errorf("%d log lines about wrong tokens so far, want the first one only (the rest are summed up)", n)
	}
	stopFlood()
	if code := <-wrong; code != http.StatusUnauthorized && code != 0 {
		t.Errorf("held-back /status ended with %d", code)
	}
	if !strings.Contains(r.logs.String(), "kind=token") {
		t.Errorf("the wrong-token flood is not summed up in the log:\n%.2000s", r.logs.String())
	}
}

// TestHostilePanelRaisesTheModeAndRunsACommand is the security review's
// case: a web page drives the extension to switch infer to auto and then
// run a command. Both must be in the log and in the conversation file, not
// only in the status bar, and neither may reach the panel's copy of the
// conversation, which is what the model reads.
func TestHostilePanelRaisesTheModeAndRunsACommand(t *testing.T) {
	t.Parallel()
	r := newHostileRig(t, rigOptions{})
	ctx := guardCtx(t)
	if m, err := r.client.SetMode(ctx, "auto"); err != nil || m.Mode != "auto" {
		t.Fatalf("set_mode auto: %+v %v", m, err)
	}
	res, err := r.client.ToolRequest(ctx, "Bash", `{"command":"touch X && id"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Success {
		t.Fatalf("tool_result %+v", res)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "X")); err != nil {
		t.Fatal("the command did not run")
	}

	logs := r.logs.String()
	var raised, requested bool
	for line := range strings.Lines(logs) {
		raised = raised || (strings.Contains(line, "level=WARN") && strings.Contains(line, "from=standard") &&
			strings.Contains(line, "to=auto") && strings.Contains(line, "origin=panel"))
		requested = requested || (strings.Contains(line, "level=INFO") && strings.Contains(line, "origin=panel") &&
			strings.Contains(line, "tool=Bash") && strings.Contains(line, "touch X && id"))
	}
	if !raised || !requested {
		t.Fatalf("raise logged %v, request logged %v:\n%s", raised, requested, logs)
	}

	id := r.ws.ActiveConversation()
	if id == "" {
		t.Fatal("nothing was recorded in a conversation")
	}
	data, err := os.ReadFile(r.store.Path(id))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"switched the mode from standard to auto", `asked to run Bash in auto mode: {\"command\":\"touch X && id\"}`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the conversation file lacks %q:\n%s", want, data)
		}
	}
	c, err := r.store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Notices) != 2 || len(c.Messages) != 0 {
		t.Fatalf("stored notices %+v, messages %+v", c.Notices, c.Messages)
	}
	snap, err := r.client.Resume(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Messages) != 0 {
		t.Fatalf("the panel's snapshot carries the notices: %+v", snap.Messages)
	}
}
