package chrome

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
)

// BenchmarkChromeCommandOverhead compares the backend's read command with
// the cheapest direct chromedp call that reads the same text from the same
// tab, alternating the two so that both see the same machine load. It
// reports each one's time per read and their ratio (target: within 1.2×).
func BenchmarkChromeCommandOverhead(b *testing.B) {
	br := browserForTest(b)
	ctx := context.Background()
	if res := br.Do(ctx, wire.BrowserCommand{ID: "n", Action: browser.Navigate, URL: site.URL + "/article.html"}); res.Error != "" {
		b.Fatal(res.Error)
	}
	tabCtx := br.controlled().ctx
	cmd := wire.BrowserCommand{ID: "r", Action: browser.Read, Selector: "h1"}
	direct := chromedp.Evaluate[string](`document.querySelector("h1").innerText`)
	viaBackend := func() time.Duration {
		start := time.Now()
		if res := br.Do(ctx, cmd); res.Error != "" || res.Content == nil {
			b.Fatalf("backend read: %+v", res)
		}
		return time.Since(start)
	}
	viaChromedp := func() time.Duration {
		start := time.Now()
		if _, err := chromedp.Run(tabCtx, direct); err != nil {
			b.Fatalf("direct read: %v", err)
		}
		return time.Since(start)
	}
	var backend, plain time.Duration
	odd := false
	b.ResetTimer()
	for b.Loop() {
		// Take turns going first, so neither profits from the other's
		// warm-up.
		if odd {
			backend += viaBackend()
			plain += viaChromedp()
		} else {
			plain += viaChromedp()
			backend += viaBackend()
		}
		odd = !odd
	}
	n := float64(b.N)
	b.ReportMetric(float64(backend.Nanoseconds())/n, "ns/backend-read")
	b.ReportMetric(float64(plain.Nanoseconds())/n, "ns/direct-read")
	b.ReportMetric(float64(backend)/float64(plain), "overhead-ratio")
}
