package fakebrowser

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
	"golang.org/x/net/html"
)

// fixtureHost is the in-memory host the tests serve inline pages from.
const fixtureHost = "fixture.test"

// fixtures serves a fixed set of pages by path; "/" style keys, HTML unless
// the key's value starts with a "Content-Type:" line.
func fixtures(pages map[string]string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		ct := "text/html; charset=utf-8"
		if strings.HasPrefix(body, "Content-Type: ") {
			line, rest, _ := strings.Cut(body, "\n")
			ct, body = strings.TrimPrefix(line, "Content-Type: "), rest
		}
		w.Header().Set("Content-Type", ct)
		_, _ = w.Write([]byte(body))
	})
}

// newTestBrowser makes a browser serving pages at http://fixture.test/.
func newTestBrowser(t testing.TB, opts Options, pages map[string]string) *Browser {
	t.Helper()
	if pages != nil {
		if opts.Hosts == nil {
			opts.Hosts = map[string]http.Handler{}
		}
		opts.Hosts[fixtureHost] = fixtures(pages)
	}
	b, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// testCtx is a generous "it did not hang" guard, not a performance check.
// 10 s was not generous enough: the flaky-test hunt saw a 5 MiB page take
// longer to parse under the race detector on a busy 2-vCPU machine.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func run(t testing.TB, b *Browser, cmd wire.BrowserCommand) wire.BrowserResult {
	t.Helper()
	if cmd.ID == "" {
		cmd.ID = "test-id"
	}
	return b.Do(testCtx(t), cmd)
}

// mustOK runs cmd and fails the test on an error result.
func mustOK(t testing.TB, b *Browser, cmd wire.BrowserCommand) wire.BrowserResult {
	t.Helper()
	res := run(t, b, cmd)
	if res.Error != "" {
		t.Fatalf("%s %q: unexpected error %q", cmd.Action, cmd.URL+cmd.Selector, res.Error)
	}
	return res
}

func open(t testing.TB, b *Browser, url string) wire.BrowserResult {
	t.Helper()
	return mustOK(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: url})
}

func click(t testing.TB, b *Browser, sel string) wire.BrowserResult {
	t.Helper()
	return mustOK(t, b, wire.BrowserCommand{Action: browser.Click, Selector: sel})
}

func typeInto(t testing.TB, b *Browser, sel, text string, enter bool) wire.BrowserResult {
	t.Helper()
	return mustOK(t, b, wire.BrowserCommand{Action: browser.Type, Selector: sel, Text: text, PressEnter: enter})
}

// read returns the content of a successful read, failing on null.
func read(t testing.TB, b *Browser, sel string) string {
	t.Helper()
	res := mustOK(t, b, wire.BrowserCommand{Action: browser.Read, Selector: sel})
	if res.Content == nil {
		t.Fatalf("read %q: content is null", sel)
	}
	return *res.Content
}

// parseDoc parses an HTML fixture for tests of the DOM-level functions.
func parseDoc(t testing.TB, src string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return doc
}
