package wire

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"syscall"
	"testing"

	"github.com/infer-workspace/infer/session/browser"
)

// The codec's share of a browser command's round trip: the bridge encodes
// the command and the extension decodes it; the extension encodes its
// result and the bridge decodes that. Each benchmark reports cpu-ns/op,
// the process's CPU time per operation, beside the wall time, because the
// machines these run on are shared and CPU time swings much less.

var benchCommand = BrowserCommand{ID: "6f1c2a9e-3b7d-4e52-9a10-2f8c4d6b7e31", Action: browser.Read, Selector: "#main", TimeoutMS: 30000}

var frameSink Frame

func cpuNanos(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func reportCPU(b *testing.B, start int64) {
	b.ReportMetric(float64(cpuNanos(b)-start)/float64(b.N), "cpu-ns/op")
}

func BenchmarkCommandCodec(b *testing.B) {
	b.ReportAllocs()
	var buf []byte
	start := cpuNanos(b)
	defer reportCPU(b, start)
	for b.Loop() {
		buf = AppendCommand(buf[:0], benchCommand)
		f, err := Decode(buf)
		if err != nil {
			b.Fatal(err)
		}
		frameSink = f
	}
}

func benchResultCodec(b *testing.B, r BrowserResult) {
	b.SetBytes(int64(len(MustEncode(r))))
	b.ReportAllocs()
	var buf []byte
	start := cpuNanos(b)
	defer reportCPU(b, start)
	for b.Loop() {
		var err error
		if buf, err = AppendResult(buf[:0], r); err != nil {
			b.Fatal(err)
		}
		f, err := Decode(buf)
		if err != nil {
			b.Fatal(err)
		}
		frameSink = f
	}
}

// BenchmarkResultCodec1KiB is the result of a read of about 1 KiB of
// page text, the bridge round trip's own case.
func BenchmarkResultCodec1KiB(b *testing.B) {
	content := strings.Repeat("Some visible paragraph text. ", 36)[:1024]
	benchResultCodec(b, BrowserResult{ID: benchCommand.ID, URL: "https://example.com/", Title: "Example", Content: &content, Events: []json.RawMessage{}})
}

// BenchmarkResultCodec1MiB is a 1 MiB screenshot, base64-encoded as the
// extension sends it.
func BenchmarkResultCodec1MiB(b *testing.B) {
	raw := make([]byte, 1<<20)
	rand.Read(raw)
	empty := ""
	benchResultCodec(b, BrowserResult{ID: benchCommand.ID, URL: "https://example.com/", Title: "Example", Content: &empty, Events: []json.RawMessage{}, Image: base64.StdEncoding.EncodeToString(raw), ImageMIMEType: "image/png"})
}
