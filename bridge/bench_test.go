package bridge

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/sim"
)

// The bridge benchmarks measure one browser command through the driver
// API, over loopback, to a sim.Client and back. Each sits beside a raw
// gorilla echo of the same number of bytes as the bridge's result frame,
// which is the floor any WebSocket protocol pays.

// benchContent is about 1 KiB of page text.
var benchContent = strings.Repeat("Some visible paragraph text. ", 36)[:1024]

// benchImage is a 1 MiB screenshot, already base64-encoded as the
// extension would send it.
var benchImage = func() string {
	raw := make([]byte, 1<<20)
	rand.Read(raw)
	return base64.StdEncoding.EncodeToString(raw)
}()

// staticBrowser answers every command with the same result.
type staticBrowser wire.BrowserResult

func (b staticBrowser) Do(context.Context, wire.BrowserCommand) wire.BrowserResult {
	return wire.BrowserResult(b)
}

func readResult() wire.BrowserResult {
	c := benchContent
	return wire.BrowserResult{URL: "https://example.com/", Title: "Example", Content: &c}
}

func screenshotResult() wire.BrowserResult {
	empty := ""
	return wire.BrowserResult{URL: "https://example.com/", Title: "Example", Content: &empty, Image: benchImage, ImageMIMEType: "image/png"}
}

// resultFrameSize is the size of the frame the bridge receives for r.
func resultFrameSize(r wire.BrowserResult) int {
	r.ID = "00000000-0000-0000-0000-000000000000"
	return len(wire.MustEncode(r))
}

func benchBridge(b *testing.B, result wire.BrowserResult, cmd browser.Command, check func(browser.Result) bool) {
	srv, err := Listen(Options{Token: testToken})
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(context.Background())
	defer srv.Close()
	client := sim.NewClient(sim.ClientOptions{URL: srv.URL(), Token: testToken, Browser: staticBrowser(result)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); client.Run(ctx) }()
	defer func() { cancel(); <-done }()
	wctx, wcancel := context.WithTimeout(ctx, guard)
	defer wcancel()
	if err := client.WaitConnected(wctx); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(resultFrameSize(result)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := srv.Do(ctx, cmd)
		if err != nil || !check(res) {
			b.Fatalf("Do: %v", err)
		}
	}
}

func BenchmarkBridgeCommandRoundTrip(b *testing.B) {
	benchBridge(b, readResult(), browser.Command{Action: browser.Read}, func(r browser.Result) bool {
		return len(r.Content) == len(benchContent)
	})
}

func BenchmarkBridgeCommandRoundTripScreenshot1MiB(b *testing.B) {
	benchBridge(b, screenshotResult(), browser.Command{Action: browser.Screenshot}, func(r browser.Result) bool {
		return len(r.Image) == 1<<20
	})
}

// benchEcho measures a gorilla client sending size bytes to a gorilla
// server that sends them back, on loopback. With handoff, the client
// reads on a goroutine of its own and passes each echo to the sender over
// a channel, as any client that must keep reading between requests does
// (the bridge reads pongs and panel frames while no command waits): the
// echo plus that one goroutine hand-off.
func benchEcho(b *testing.B, size int, handoff bool) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	up := websocket.Upgrader{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		ws.SetReadLimit(64 << 20)
		for {
			typ, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			if err := ws.WriteMessage(typ, msg); err != nil {
				return
			}
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()
	ws, _, err := websocket.DefaultDialer.Dial("ws://"+ln.Addr().String()+"/", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	ws.SetReadLimit(64 << 20)
	readSocket := func() (int, error) {
		_, msg, err := ws.ReadMessage()
		return len(msg), err
	}
	read := readSocket
	if handoff {
		type echo struct {
			n   int
			err error
		}
		echoes := make(chan echo, 1)
		readerDone := make(chan struct{})
		go func() {
			defer close(readerDone)
			for {
				n, err := readSocket()
				echoes <- echo{n, err}
				if err != nil {
					return
				}
			}
		}()
		defer func() { <-readerDone }() // after the close below ends the reader
		read = func() (int, error) {
			e := <-echoes
			return e.n, e.err
		}
	}
	payload := bytes.Repeat([]byte{'x'}, size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := ws.WriteMessage(websocket.TextMessage, payload); err != nil {
			b.Fatal(err)
		}
		if n, err := read(); err != nil || n != size {
			b.Fatalf("echo: %d bytes, %v", n, err)
		}
	}
	b.StopTimer()
	ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
}

func BenchmarkWebSocketEchoBaseline(b *testing.B) {
	benchEcho(b, resultFrameSize(readResult()), false)
}

func BenchmarkWebSocketEchoBaseline1MiB(b *testing.B) {
	benchEcho(b, resultFrameSize(screenshotResult()), false)
}

// BenchmarkWebSocketEchoHandoff is the 1 KiB echo with the reply read on
// its own goroutine: not a target's baseline, but the floor of any design
// that keeps reading while no command waits, which the bridge must.
func BenchmarkWebSocketEchoHandoff(b *testing.B) {
	benchEcho(b, resultFrameSize(readResult()), true)
}
