package perf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/sim"
)

// closePeer is an extension in the benchmark process that answers browser
// commands with the minimal browser and, when infer closes the connection,
// answers the close frame and then either hangs up at once or, as Chromium
// does (RFC 6455 §7.1.1 lets a client wait for the server to close TCP
// first), keeps TCP open until infer closes it.
type closePeer struct {
	hold  bool
	ready chan struct{} // closed once the hello is acknowledged
	done  chan struct{} // closed when the peer has finished
	err   error         // why it failed, read after done
}

// runClosePeer dials url until infer listens, then serves the connection
// until infer closes it.
func runClosePeer(ctx context.Context, url, token string, hold bool) *closePeer {
	p := &closePeer{hold: hold, ready: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		p.err = p.serve(ctx, url, token)
	}()
	return p
}

func (p *closePeer) serve(ctx context.Context, url, token string) error {
	header := http.Header{"Origin": {"chrome-extension://perfclosepeer"}}
	var ws *websocket.Conn
	for {
		var err error
		ws, _, err = (&websocket.Dialer{HandshakeTimeout: guard}).DialContext(ctx, url, header)
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("infer's bridge never answered: %w", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	defer ws.Close()
	stop := context.AfterFunc(ctx, func() { ws.NetConn().Close() })
	defer stop()
	if err := ws.WriteMessage(websocket.TextMessage, wire.MustEncode(wire.BrowserHello{Token: token, ExtensionVersion: "perf-close"})); err != nil {
		return err
	}
	if _, data, err := ws.ReadMessage(); err != nil || !strings.Contains(string(data), (wire.BrowserHelloAck{}).FrameType()) {
		return fmt.Errorf("no browser_hello_ack: %q %v", data, err)
	}
	close(p.ready)
	browser := &sim.Minimal{}
	for {
		_, data, err := ws.ReadMessage()
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			break // gorilla's close handler has answered the close frame
		}
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		f, err := wire.Decode(data)
		if err != nil {
			return err
		}
		if cmd, ok := f.(wire.BrowserCommand); ok {
			res := browser.Do(ctx, cmd)
			res.ID = cmd.ID
			if err := ws.WriteMessage(websocket.TextMessage, wire.MustEncode(res)); err != nil {
				return err
			}
		}
	}
	if !p.hold {
		return nil
	}
	var one [1]byte
	if _, err := ws.NetConn().Read(one[:]); !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("waiting for infer to close TCP: %w", err)
	}
	return nil
}

// runOneCallHeadless times one `infer headless` run, from exec to exit,
// that makes one BrowserRead call through a closePeer.
func runOneCallHeadless(tb testing.TB, bins binaries, hold bool) time.Duration {
	tb.Helper()
	model := newScriptedModel(1, sim.MinimalPageText)
	srv := httptest.NewServer(model)
	defer srv.Close()
	sb := newSandbox(tb, loopConfig(srv.URL))
	project := tb.TempDir()
	port := strconv.Itoa(freePort(tb))
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()

	began := time.Now()
	hl := start(tb, sb.env, project, bins.infer, "headless", "--port", port, "--mode", "auto", "--model", "scripted/loop", "Read the page once.")
	peer := runClosePeer(ctx, "ws://127.0.0.1:"+port+"/ws", sb.token, hold)
	select {
	case <-peer.ready:
	case <-peer.done:
		tb.Fatalf("the extension never connected: %v\nstderr:\n%s", peer.err, hl.stderr)
	}
	close(model.release)
	err := hl.wait(tb)
	took := time.Since(began)
	if err != nil {
		tb.Fatalf("infer headless: %v\nstderr:\n%s\nstdout:\n%s", err, hl.stderr, hl.stdout)
	}
	<-peer.done
	if peer.err != nil {
		tb.Fatalf("the extension (hold=%v): %v", hold, peer.err)
	}
	if _, err := model.gaps(); err != nil {
		tb.Fatal(err)
	}
	if !strings.Contains(hl.stdout.String(), "Read the page 1 times.") {
		tb.Fatalf("infer headless did not print the final answer:\n%s", hl.stdout)
	}
	return took
}

// closeRunsPerIteration is how many runs of each kind one iteration of
// BenchmarkHeadlessClose times (make bench runs this package at 1x).
const closeRunsPerIteration = 5

// BenchmarkHeadlessClose times a one-call `infer headless` run, exec to
// exit, against an extension that keeps TCP open after answering infer's
// close frame, as Chromium does, beside the same run against one that
// hangs up at once. The two take turns going first. A server that waits
// for the peer to hang up spends its whole close grace (1 s) on the
// first; the target is held/hang-up within 1.2× (close-ratio).
func BenchmarkHeadlessClose(b *testing.B) {
	bins := programs(b)
	runOneCallHeadless(b, bins, false) // a cold page cache is paid once
	var held, hung time.Duration
	b.ResetTimer()
	for i := 0; i < b.N*closeRunsPerIteration; i++ {
		if i%2 == 0 {
			held += runOneCallHeadless(b, bins, true)
			hung += runOneCallHeadless(b, bins, false)
		} else {
			hung += runOneCallHeadless(b, bins, false)
			held += runOneCallHeadless(b, bins, true)
		}
	}
	b.StopTimer()
	n := float64(b.N * closeRunsPerIteration)
	b.ReportMetric(float64(held.Nanoseconds())/n, "held-ns/run")
	b.ReportMetric(float64(hung.Nanoseconds())/n, "hangup-ns/run")
	b.ReportMetric(float64(held)/float64(hung), "close-ratio")
}

// TestHeadlessCloseHarness runs each kind of peer once through the
// benchmark's harness: the call reaches the peer's browser (the scripted
// model checks the result), and the holding peer sees infer close TCP.
func TestHeadlessCloseHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the infer binary")
	}
	bins := programs(t)
	for _, hold := range []bool{true, false} {
		if took := runOneCallHeadless(t, bins, hold); took <= 0 {
			t.Errorf("hold=%v: took %v", hold, took)
		}
	}
}
