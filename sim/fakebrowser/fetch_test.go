package fakebrowser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
)

// server starts an httptest server that the test closes.
func server(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func TestRealHTTPRedirects(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/r1", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/r2", http.StatusFound) })
	mux.HandleFunc("/r2", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "final?x=1", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/final", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<title>Final</title><p>arrived</p>")
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/post", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" {
			http.Error(w, "want POST", 400)
			return
		}
		http.Redirect(w, r, "/final?from=post", http.StatusSeeOther)
	})
	mux.HandleFunc("/form", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<form method=post action=/post><button>Go</button></form>`)
	})
	s := server(t, mux)
	b := newTestBrowser(t, Options{MaxRedirects: 5}, nil)

	res := open(t, b, s.URL+"/r1")
	if res.URL != s.URL+"/final?x=1" || res.Title != "Final" {
		t.Fatalf("after redirects: url %s title %q", res.URL, res.Title)
	}
	if got := read(t, b, "p"); got != "arrived" {
		t.Errorf("read p = %q", got)
	}

	res = run(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: s.URL + "/loop"})
	if want := "net::ERR_TOO_MANY_REDIRECTS at " + s.URL + "/loop"; res.Error != want {
		t.Fatalf("redirect loop error = %q, want %q", res.Error, want)
	}
	if res.URL != s.URL+"/final?x=1" {
		t.Errorf("a failed load replaced the page: url %s", res.URL)
	}

	open(t, b, s.URL+"/form")
	if res := click(t, b, "button"); res.URL != s.URL+"/final?from=post" {
		t.Errorf("POST then 303 ended at %s", res.URL)
	}
}

func TestRealHTTPTimeouts(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	s := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))

	// The command's own timeout.
	b := newTestBrowser(t, Options{}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res := b.Do(ctx, wire.BrowserCommand{ID: "1", Action: browser.Navigate, URL: s.URL + "/slow"})
	if res.Error != "navigate timed out: the command's timeout_ms ran out" {
		t.Fatalf("command timeout error = %q", res.Error)
	}

	// The browser's load timeout.
	b = newTestBrowser(t, Options{LoadTimeout: 100 * time.Millisecond}, nil)
	res = run(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: s.URL + "/slow"})
	if want := "net::ERR_TIMED_OUT at " + s.URL + "/slow"; res.Error != want {
		t.Fatalf("load timeout error = %q, want %q", res.Error, want)
	}

	// An already expired context fails at once.
	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	res = b.Do(done, wire.BrowserCommand{ID: "2", Action: browser.Read})
	if !strings.HasPrefix(res.Error, "read canceled") {
		t.Fatalf("cancelled read error = %q", res.Error)
	}
}

func TestSizeCap(t *testing.T) {
	t.Parallel()
	const fiveMB = 5 << 20
	bigPage := func(n int) []byte {
		var buf bytes.Buffer
		buf.WriteString("<title>Big</title><body>")
		para := "<p>" + strings.Repeat("lorem ipsum ", 40) + "</p>\n"
		for buf.Len()+len(para)+len("<p>end</p>") < n {
			buf.WriteString(para)
		}
		buf.WriteString("<p>end</p>")
		for buf.Len() < n {
			buf.WriteByte(' ')
		}
		return buf.Bytes()
	}
	five := bigPage(fiveMB)
	over := bigPage(DefaultMaxPageBytes + 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/five", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(five) })
	mux.HandleFunc("/over", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(over) })
	mux.HandleFunc("/over-chunked", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		for i := 0; i < len(over); i += 64 << 10 {
			_, _ = w.Write(over[i:min(i+64<<10, len(over))])
			w.(http.Flusher).Flush()
		}
	})
	s := server(t, mux)
	b := newTestBrowser(t, Options{}, nil)

	open(t, b, s.URL+"/five")
	body := read(t, b, "")
	if !strings.HasSuffix(body, "lorem ipsum\n\nend") || len(body) < 4<<20 {
		t.Fatalf("5 MB page read %d bytes ending %q", len(body), body[max(0, len(body)-30):])
	}

	for _, path := range []string{"/over", "/over-chunked"} {
		res := run(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: s.URL + path})
		want := "page too large: " + s.URL + path + " is bigger than the fake browser's limit of 10 MiB (raise fakebrowser.Options.MaxPageBytes to load it)"
		if res.Error != want {
			t.Errorf("%s error = %q", path, res.Error)
		}
		if res.URL != s.URL+"/five" {
			t.Errorf("%s replaced the page: %s", path, res.URL)
		}
	}

	// A raised cap loads the same page.
	b = newTestBrowser(t, Options{MaxPageBytes: 12 << 20}, nil)
	open(t, b, s.URL+"/over")
}

func TestInMemoryHostHonoursLoadTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<p>start") // the header is out, then the body stalls
		<-release
	})
	b := newTestBrowser(t, Options{LoadTimeout: 100 * time.Millisecond, Hosts: map[string]http.Handler{"stall.test": h}}, nil)
	res := run(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: "http://stall.test/"})
	if res.Error != "net::ERR_TIMED_OUT at http://stall.test/" {
		t.Fatalf("error = %q", res.Error)
	}
}

func TestInMemoryHostPanicIsALoadError(t *testing.T) {
	t.Parallel()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	b := newTestBrowser(t, Options{Hosts: map[string]http.Handler{"panic.test": h}}, nil)
	res := run(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: "http://panic.test/"})
	if !strings.HasPrefix(res.Error, "net::ERR_FAILED at http://panic.test/") || !strings.Contains(res.Error, "boom") {
		t.Fatalf("error = %q", res.Error)
	}
}

func TestInMemoryHostSizeCapStopsHandler(t *testing.T) {
	t.Parallel()
	finished := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for {
			if _, err := w.Write(chunk); err != nil {
				finished <- err
				return
			}
		}
	})
	b := newTestBrowser(t, Options{MaxPageBytes: 1 << 20, Hosts: map[string]http.Handler{"flood.test": h}}, nil)
	res := run(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: "http://flood.test/"})
	if !strings.HasPrefix(res.Error, "page too large: http://flood.test/") {
		t.Fatalf("error = %q", res.Error)
	}
	select {
	case err := <-finished:
		if err == nil {
			t.Fatal("handler write succeeded after the cap")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the in-memory handler kept running after the load failed")
	}
}

func TestNonHTMLContent(t *testing.T) {
	t.Parallel()
	var pngBuf bytes.Buffer
	_ = png.Encode(&pngBuf, image.NewRGBA(image.Rect(0, 0, 2, 3)))
	mux := http.NewServeMux()
	mux.HandleFunc("/notes.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "line one\n  indented   line\n\nlast")
	})
	mux.HandleFunc("/data.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"a": [1, 2]}`)
	})
	mux.HandleFunc("/pic.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(pngBuf.Bytes())
	})
	mux.HandleFunc("/blob", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(make([]byte, 2048))
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=iso-8859-1")
		_, _ = w.Write([]byte("<title>caf\xe9</title><p>na\xefve</p>"))
	})
	mux.HandleFunc("/gone", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotFound) })
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<title>Not here</title><h1>Custom 404</h1>")
	})
	s := server(t, mux)
	host := strings.TrimPrefix(s.URL, "http://")
	b := newTestBrowser(t, Options{}, nil)

	res := open(t, b, s.URL+"/notes.txt")
	if res.Title != host+"/notes.txt" {
		t.Errorf("text title = %q", res.Title)
	}
	if got := read(t, b, ""); got != "line one\n  indented   line\n\nlast" {
		t.Errorf("text body = %q", got)
	}
	open(t, b, s.URL+"/data.json")
	if got := read(t, b, ""); got != `{"a": [1, 2]}` {
		t.Errorf("json body = %q", got)
	}
	res = open(t, b, s.URL+"/pic.png")
	if res.Title != "pic.png (2×3)" {
		t.Errorf("image title = %q", res.Title)
	}
	if got := read(t, b, ""); !strings.Contains(got, "pic.png: image/png image, 2×3 pixels") {
		t.Errorf("image body = %q", got)
	}
	open(t, b, s.URL+"/blob")
	if got := read(t, b, ""); got != "blob: application/octet-stream, 2.0 KiB." {
		t.Errorf("binary body = %q", got)
	}
	res = open(t, b, s.URL+"/latin1")
	if res.Title != "café" || read(t, b, "p") != "naïve" {
		t.Errorf("latin-1 page: title %q p %q", res.Title, read(t, b, "p"))
	}
	res = open(t, b, s.URL+"/gone")
	if res.Title != "127.0.0.1" || !strings.HasSuffix(read(t, b, ""), "HTTP ERROR 404") {
		t.Errorf("empty 404: title %q body %q", res.Title, read(t, b, ""))
	}
	res = open(t, b, s.URL+"/missing")
	if res.Title != "Not here" || read(t, b, "h1") != "Custom 404" {
		t.Errorf("404 with a body: title %q", res.Title)
	}
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	b := newTestBrowser(t, Options{}, nil)
	res := run(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: "http://" + addr + "/x"})
	if want := "net::ERR_CONNECTION_REFUSED at http://" + addr + "/x"; res.Error != want {
		t.Fatalf("error = %q, want %q", res.Error, want)
	}
	// The failed first navigate still opened the controlled tab, on about:blank.
	if res.URL != "about:blank" {
		t.Errorf("url after a failed first load = %q", res.URL)
	}
}

func TestUntrustedCertificate(t *testing.T) {
	t.Parallel()
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	// The test server logs the client's rejected handshake; keep it quiet.
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.StartTLS()
	t.Cleanup(s.Close)
	b := newTestBrowser(t, Options{}, nil)
	res := run(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: s.URL + "/"})
	if want := "net::ERR_CERT_AUTHORITY_INVALID at " + s.URL + "/"; res.Error != want {
		t.Fatalf("error = %q, want %q", res.Error, want)
	}
}

func TestClassifyNetworkErrors(t *testing.T) {
	t.Parallel()
	bg := context.Background()
	wrap := func(err error) error { return &url.Error{Op: "Get", URL: "http://x/", Err: err} }
	cases := []struct {
		err  error
		code string
	}{
		{wrap(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}}), "ERR_NAME_NOT_RESOLVED"},
		{wrap(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), "ERR_CONNECTION_REFUSED"},
		{wrap(&net.OpError{Op: "read", Err: syscall.ECONNRESET}), "ERR_CONNECTION_RESET"},
		{wrap(&net.OpError{Op: "dial", Err: syscall.ENETUNREACH}), "ERR_ADDRESS_UNREACHABLE"},
		{wrap(io.EOF), "ERR_EMPTY_RESPONSE"},
		{wrap(errTooManyRedirects), "ERR_TOO_MANY_REDIRECTS"},
		{wrap(errors.New("something odd")), "ERR_FAILED"},
	}
	for _, tc := range cases {
		err := classify(bg, bg, tc.err, "http://x/")
		var ne *netError
		if !errors.As(err, &ne) || ne.code != tc.code {
			t.Errorf("classify(%v) = %v, want %s", tc.err, err, tc.code)
		}
	}
	if got := classify(bg, bg, wrap(errors.New("odd")), "http://x/").Error(); got != `net::ERR_FAILED at http://x/ (Get "http://x/": odd)` {
		t.Errorf("ERR_FAILED message = %q", got)
	}
}

func TestCookiesPersistAcrossLoads(t *testing.T) {
	t.Parallel()
	s := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/set" {
			http.SetCookie(w, &http.Cookie{Name: "k", Value: "v1", Path: "/"})
		}
		c, _ := r.Cookie("k")
		v := "none"
		if c != nil {
			v = c.Value
		}
		fmt.Fprintf(w, "<p id=c>%s</p>", v)
	}))
	b := newTestBrowser(t, Options{}, nil)
	open(t, b, s.URL+"/set")
	open(t, b, s.URL+"/get")
	if got := read(t, b, "#c"); got != "v1" {
		t.Fatalf("cookie = %q", got)
	}
}

func TestDataAndAboutURLs(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, nil)
	res := open(t, b, "data:text/html,<title>Inline</title><p>Hi%20there</p>")
	if res.Title != "Inline" || read(t, b, "p") != "Hi there" {
		t.Errorf("data html: title %q", res.Title)
	}
	open(t, b, "data:text/plain;base64,aGVsbG8gd29ybGQ=")
	if got := read(t, b, ""); got != "hello world" {
		t.Errorf("base64 data = %q", got)
	}
	res = open(t, b, "about:blank")
	if res.URL != "about:blank" || res.Title != "about:blank" || read(t, b, "") != "" {
		t.Errorf("about:blank: %+v", res)
	}
	res = run(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: "data:text/plain;base64,!!!"})
	if !strings.HasPrefix(res.Error, "net::ERR_INVALID_URL") {
		t.Errorf("bad base64 error = %q", res.Error)
	}
}
