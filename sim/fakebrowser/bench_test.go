package fakebrowser

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
)

// benchPage builds an HTML page of about n bytes with the structures a real
// page mixes: headings, paragraphs with inline markup, lists, tables, a
// form, and hidden parts.
func benchPage(n int) string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><title>Bench</title><style>p{margin:0}</style></head><body>\n")
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `<section id="s%d"><h2>Section %d</h2>
<p>Some <b>bold</b> and <a href="/p%d">linked</a> text,   with   extra   spaces and&nbsp;entities &amp; more words to read.</p>
<ul><li>first item</li><li>second <em>item</em></li></ul>
<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>%d</td></tr></table>
<div hidden>hidden %d</div><p style="display:none">also hidden</p>
<form><input name="q%d" value="x"> <button>Go</button></form>
</section>
`, i, i, i, i, i, i)
	}
	b.WriteString("</body></html>")
	return b.String()
}

// BenchmarkFakeBrowserRead measures the read command on the body of a
// loaded page of about 1 MB: selector lookup, the innerText walk and the
// result. The page is parsed once, outside the loop.
func BenchmarkFakeBrowserRead(b *testing.B) {
	page := benchPage(1 << 20)
	br := newTestBrowser(b, Options{}, map[string]string{"/": page})
	open(b, br, "http://fixture.test/")
	ctx := context.Background()
	cmd := wire.BrowserCommand{ID: "bench", Action: browser.Read}
	if res := br.Do(ctx, cmd); res.Error != "" || res.Content == nil || len(*res.Content) < 100_000 {
		b.Fatalf("read failed: %q", res.Error)
	}
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		res := br.Do(ctx, cmd)
		if res.Error != "" {
			b.Fatal(res.Error)
		}
	}
}

// BenchmarkFakeBrowserNavigate measures loading and parsing the same page
// from an in-memory host.
func BenchmarkFakeBrowserNavigate(b *testing.B) {
	page := benchPage(1 << 20)
	br := newTestBrowser(b, Options{}, map[string]string{"/": page})
	ctx := context.Background()
	cmd := wire.BrowserCommand{ID: "bench", Action: browser.Navigate, URL: "http://fixture.test/"}
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		if res := br.Do(ctx, cmd); res.Error != "" {
			b.Fatal(res.Error)
		}
	}
}

// BenchmarkFakeBrowserScreenshot measures drawing and encoding the viewport.
func BenchmarkFakeBrowserScreenshot(b *testing.B) {
	br := newTestBrowser(b, Options{}, map[string]string{"/": benchPage(1 << 20)})
	open(b, br, "http://fixture.test/")
	ctx := context.Background()
	cmd := wire.BrowserCommand{ID: "bench", Action: browser.Screenshot}
	b.ReportAllocs()
	for b.Loop() {
		if res := br.Do(ctx, cmd); res.Error != "" {
			b.Fatal(res.Error)
		}
	}
}
