package fakebrowser

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/assets"
	"github.com/infer-workspace/infer/internal/testreq"
)

// innerTextProbe is injected into each page served to Chromium: once the
// page has loaded it removes itself and stores document.body.innerText on
// the root element, where --dump-dom prints it.
const innerTextProbe = `<script id="fb-probe">window.addEventListener("load", () => {
document.getElementById("fb-probe").remove();
document.documentElement.setAttribute("data-inner-text", JSON.stringify(document.body.innerText));
});</script>`

// withProbe serves h with the probe added to HTML responses, plus
// /probe-all?page=... which loads each page in an iframe and gathers their
// probe results, so that one Chromium run checks every page.
func withProbe(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/probe-all" {
			var b strings.Builder
			b.WriteString("<!doctype html><html><head><title>probe</title></head><body>")
			for _, p := range r.URL.Query()["page"] {
				b.WriteString(`<iframe src="/` + html.EscapeString(p) + `"></iframe>`)
			}
			b.WriteString(`<script>window.addEventListener("load", () => {
const out = [...document.querySelectorAll("iframe")].map(f => f.contentDocument.documentElement.getAttribute("data-inner-text"));
document.documentElement.setAttribute("data-all", JSON.stringify(out));
});</script></body></html>`)
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, b.String())
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
			body = bytes.Replace(body, []byte("</head>"), []byte(innerTextProbe+"</head>"), 1)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

var allAttr = regexp.MustCompile(`data-all="([^"]*)"`)

// TestDemoSiteReadsLikeChromium loads every demo page in headless Chromium
// (when one is installed) and in the fake browser, and requires the same
// body text from both. The demo site keeps its layout rules out of the
// style sheet's display properties precisely so that this holds.
func TestDemoSiteReadsLikeChromium(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: skipping the comparison with Chromium")
	}
	chromium := testreq.Program(t, testreq.Chromium)
	pages := []string{
		"", "search.html", "login.html", "article.html", "table.html", "forms.html",
		"search?q=sea", "search?q=", "echo?a=1&b=two+words&api_token=x", "account", "nope.html",
	}
	srv := httptest.NewServer(withProbe(assets.DemoSiteHandler()))
	defer srv.Close()
	q := url.Values{"page": pages}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--dump-dom", srv.URL+"/probe-all?"+q.Encode()).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	m := allAttr.FindSubmatch(out)
	if m == nil {
		t.Fatalf("chromium: no probe result in its DOM:\n%s", out)
	}
	var texts []*string
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &texts); err != nil || len(texts) != len(pages) {
		t.Fatalf("probe result %q: %v", m[1], err)
	}
	b := newTestBrowser(t, Options{}, nil)
	for i, path := range pages {
		var want string
		if texts[i] == nil || json.Unmarshal([]byte(*texts[i]), &want) != nil {
			t.Errorf("/%s: chromium gave no text", path)
			continue
		}
		open(t, b, assets.DemoOrigin+path)
		if got := read(t, b, ""); got != want {
			t.Errorf("/%s\nfake     %q\nchromium %q", path, got, want)
		}
	}
}
