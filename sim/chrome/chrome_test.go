package chrome

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/internal/leaks"
	"github.com/infer-workspace/infer/internal/testreq"
	"github.com/infer-workspace/infer/session/browser"

	"github.com/infer-workspace/infer/assets"
	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/sim/fakebrowser"
)

// guard bounds waits that should end almost at once: a "did not hang"
// check, never a speed check.
const guard = 20 * time.Second

var (
	shared     *Browser
	sharedErr  error
	sharedOnce sync.Once
	site       *httptest.Server
)

func TestMain(m *testing.M) {
	site = httptest.NewServer(testSite())
	code := m.Run()
	if shared != nil {
		if err := shared.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "closing the shared browser:", err)
			code = 1
		}
		if _, err := os.Stat(shared.UserDataDir()); !os.IsNotExist(err) {
			fmt.Fprintln(os.Stderr, "the temporary profile was not removed:", shared.UserDataDir())
			code = 1
		}
	}
	site.Close()
	if code == 0 {
		// Every goroutine chromedp started must be gone with its browsers.
		if err := goleak.Find(leaks.Options()...); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left behind:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// testSite is the demo site plus pages for redaction and slow loads.
func testSite() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", assets.DemoSiteHandler())
	mux.HandleFunc("GET /secrets.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, secretsPage)
	})
	mux.HandleFunc("GET /dialogs.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, dialogsPage)
	})
	mux.HandleFunc("GET /hang", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	})
	return mux
}

// secretsPage has one input per clause of the redaction rule, and some
// that look secret but are not.
const secretsPage = `<!doctype html><title>Secrets</title>
<input id="pw" type="password" value="hunter2">
<input id="pw-upper" type=" PASSWORD" value="x1">
<input id="cur" autocomplete="current-password" value="x2">
<input id="new" autocomplete="section-a new-password" value="x3">
<input id="otc" autocomplete="one-time-code" value="x4">
<input id="a" name="api_token" value="x5">
<input id="mySecretField" value="x6">
<input id="b" aria-label="Card number" value="x7">
<input id="cvc2" value="x8">
<input id="c" name="otpcode" value="x9">
<input id="user" name="username" value="ada">
<input id="search" type="search" value="lighthouse">
<textarea id="notes" name="notes">plain notes</textarea>
<div id="passage">password: innerText never includes input values</div>
<textarea id="ta" name="password">x10</textarea>
<input id="pwd" type="text" name="pwd" value="x11">
<input id="pin" name="userPin" value="x12">
<input id="key" name="X-API-Key" value="x13">
<input id="ship" name="shipping" value="by sea">
<p id="para">Key: <span id="ce" contenteditable aria-label="API key">sk-live-x14</span> (keep it safe)</p>
<div id="tb" role="textbox" aria-label="One-time PIN"><b id="tbb">x15 x15b</b></div>
<div id="draft" contenteditable>an ordinary draft</div>
<div id="hide" style="display:none"><textarea name="secret">x16</textarea> and <span contenteditable name="otp">x17</span></div>`

// browserForTest is one Chromium shared by the package's tests.
func browserForTest(t testing.TB) *Browser {
	t.Helper()
	testreq.Program(t, testreq.Chromium)
	sharedOnce.Do(func() {
		shared, sharedErr = New(context.Background(), Options{})
	})
	if sharedErr != nil {
		t.Fatalf("starting Chromium: %v", sharedErr)
	}
	return shared
}

// newBrowser starts a browser of the test's own.
func newBrowser(t *testing.T, opts Options) *Browser {
	t.Helper()
	testreq.Program(t, testreq.Chromium)
	b, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func do(t testing.TB, b *Browser, cmd wire.BrowserCommand) wire.BrowserResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if cmd.ID == "" {
		cmd.ID = "t"
	}
	return b.Do(ctx, cmd)
}

func mustDo(t testing.TB, b *Browser, cmd wire.BrowserCommand) wire.BrowserResult {
	t.Helper()
	res := do(t, b, cmd)
	if res.Error != "" {
		t.Fatalf("%s %s%s: %s", cmd.Action, cmd.URL, cmd.Selector, res.Error)
	}
	return res
}

func read(t testing.TB, b *Browser, sel string) *string {
	t.Helper()
	return mustDo(t, b, wire.BrowserCommand{Action: browser.Read, Selector: sel}).Content
}

func TestNavigateTypeEnterAndReadTheResultPage(t *testing.T) {
	b := browserForTest(t)
	res := mustDo(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: site.URL + "/search.html"})
	if res.URL != site.URL+"/search.html" || res.Title != "Search the catalog · Tidewater Library" {
		t.Fatalf("after navigate: %q %q", res.URL, res.Title)
	}
	res = mustDo(t, b, wire.BrowserCommand{Action: browser.Type, Selector: "#q", Text: "sea", PressEnter: true})
	if !strings.Contains(res.URL, "/search?q=sea") {
		t.Fatalf("Enter did not submit the form: the tab shows %q", res.URL)
	}
	if h1 := read(t, b, "h1"); h1 == nil || *h1 != "Search results" {
		t.Fatalf("h1 of the result page = %v", h1)
	}
	if sum := read(t, b, "#summary"); sum == nil || !strings.Contains(*sum, "for “sea”") {
		t.Fatalf("summary = %v", sum)
	}
	// The search box on the result page holds the query: reading an input
	// gives its value.
	if q := read(t, b, "#q"); q == nil || *q != "sea" {
		t.Fatalf("#q = %v", q)
	}
}

func TestClickFollowsALinkAndWaitsForTheLoad(t *testing.T) {
	b := browserForTest(t)
	mustDo(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: site.URL + "/search.html"})
	res := mustDo(t, b, wire.BrowserCommand{Action: browser.Click, Selector: `a[href="/article.html"]`})
	if res.URL != site.URL+"/article.html" || !strings.HasPrefix(res.Title, "The keepers of the light") {
		t.Fatalf("after the click: %q %q", res.URL, res.Title)
	}
	// A click that loads nothing returns at once with the same page.
	res = mustDo(t, b, wire.BrowserCommand{Action: browser.Click, Selector: "h1"})
	if res.URL != site.URL+"/article.html" {
		t.Fatalf("a click on a heading moved the tab to %q", res.URL)
	}
}

func TestMissingElementsAndBadSelectors(t *testing.T) {
	b := browserForTest(t)
	mustDo(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: site.URL + "/"})
	res := do(t, b, wire.BrowserCommand{Action: browser.Read, Selector: "#nope"})
	if res.Error != "" || res.Content != nil {
		t.Fatalf("read of a missing element: %+v, want content null and no error", res)
	}
	for _, action := range []browser.Action{browser.Click, browser.Type} {
		res := do(t, b, wire.BrowserCommand{Action: action, Selector: "#nope", Text: "x"})
		if res.Error != "no element matches selector '#nope'" {
			t.Errorf("%s of a missing element: error %q", action, res.Error)
		}
	}
	res = do(t, b, wire.BrowserCommand{Action: browser.Read, Selector: "a[["})
	if !strings.Contains(res.Error, "is not a valid selector") {
		t.Errorf("bad selector: %q", res.Error)
	}
	res = do(t, b, wire.BrowserCommand{Action: browser.Type, Selector: "h1", Text: "x"})
	if !strings.HasPrefix(res.Error, "cannot type into <h1>") {
		t.Errorf("typing into a heading: %q", res.Error)
	}
	if res := do(t, b, wire.BrowserCommand{Action: browser.Navigate}); res.Error != "navigate requires url" || res.URL != "" {
		t.Errorf("navigate without url: %+v", res)
	}
	if res := do(t, b, wire.BrowserCommand{Action: "scroll"}); res.Error != "unknown action: scroll" {
		t.Errorf("unknown action: %+v", res)
	}
}

func TestNavigationErrorsAreReportedLikeChromium(t *testing.T) {
	b := browserForTest(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/"
	l.Close()
	res := do(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: closed})
	if res.Error != "net::ERR_CONNECTION_REFUSED at "+closed || res.URL != closed {
		t.Fatalf("refused connection: %+v", res)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res = b.Do(ctx, wire.BrowserCommand{ID: "slow", Action: browser.Navigate, URL: site.URL + "/hang"})
	if res.Error != "navigate timed out: the command's timeout_ms ran out" {
		t.Fatalf("hanging page: %+v", res)
	}
	// The tab still works afterwards.
	mustDo(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: site.URL + "/"})
}

func TestANavigateGivenUpOnDoesNotSpoilTheNext(t *testing.T) {
	b := browserForTest(t)
	mustDo(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: site.URL + "/"})
	// A navigate whose command gives up within milliseconds leaves its
	// navigation starting in the tab: its document request is sent, then
	// aborted by the next navigate, while that one waits. The next
	// navigate must report its own page, not the abort. How far the old
	// navigation got varies, so several cut-off points are tried; the
	// timeouts are inputs, nothing here is timed.
	for i := range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(5+5*(i%4))*time.Millisecond)
		b.Do(ctx, wire.BrowserCommand{ID: "given-up", Action: browser.Navigate, URL: site.URL + "/hang"})
		cancel()
		res := mustDo(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: site.URL + "/article.html"})
		if res.URL != site.URL+"/article.html" {
			t.Fatalf("after a navigate given up on, navigate showed %q", res.URL)
		}
	}
}

func TestReadRedactsSecretInputsInThePage(t *testing.T) {
	b := browserForTest(t)
	fake, err := fakebrowser.New(fakebrowser.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	url := site.URL + "/secrets.html"
	mustDo(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: url})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	fake.Do(ctx, wire.BrowserCommand{ID: "n", Action: browser.Navigate, URL: url})
	want := map[string]string{
		"#pw": "[redacted]", "#pw-upper": "[redacted]", "#cur": "[redacted]", "#new": "[redacted]",
		"#otc": "[redacted]", "#a": "[redacted]", "#mySecretField": "[redacted]", "#b": "[redacted]",
		"#cvc2": "[redacted]", "#c": "[redacted]",
		"#user": "ada", "#search": "lighthouse", "#notes": "plain notes",
		"#passage": "password: innerText never includes input values",
		// Secret textareas, words and editable regions.
		"#ta": "[redacted]", "#pwd": "[redacted]", "#pin": "[redacted]",
		"#key": "[redacted]", "#ce": "[redacted]", "#tb": "[redacted]",
		"#tbb": "[redacted]", "#ship": "by sea", "#draft": "an ordinary draft",
		"#para": "Key: [redacted] (keep it safe)", "#hide": "[redacted] and [redacted]",
	}
	for sel, w := range want {
		got := read(t, b, sel)
		if got == nil || *got != w {
			t.Errorf("chromium read %s = %v, want %q", sel, got, w)
		}
		fr := fake.Do(ctx, wire.BrowserCommand{ID: "r", Action: browser.Read, Selector: sel})
		if fr.Content == nil || got == nil || *fr.Content != *got {
			t.Errorf("fake browser read %s = %v, chromium %v", sel, fr.Content, got)
		}
	}
	// Typing a password and reading it back still redacts.
	mustDo(t, b, wire.BrowserCommand{Action: browser.Type, Selector: "#pw", Text: "correct horse"})
	if got := read(t, b, "#pw"); got == nil || *got != "[redacted]" {
		t.Errorf("typed password read back as %v", got)
	}
	body := read(t, b, "")
	fb := fake.Do(ctx, wire.BrowserCommand{ID: "b", Action: browser.Read})
	if body == nil || fb.Content == nil || *fb.Content != *body {
		t.Errorf("the page text differs:\nchromium %v\nfake     %v", deref(body), deref(fb.Content))
	}
	for _, secret := range []string{"hunter2", "correct horse", "x5", "x10", "x11", "x14", "x15", "x16", "x17"} {
		if body != nil && strings.Contains(*body, secret) {
			t.Errorf("the page text holds the secret %q:\n%s", secret, *body)
		}
	}
}

func TestScreenshotIsAPNGOfTheControlledTab(t *testing.T) {
	b := browserForTest(t)
	mustDo(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: site.URL + "/table.html"})
	res := mustDo(t, b, wire.BrowserCommand{Action: browser.Screenshot})
	if res.ImageMIMEType != "image/png" || res.URL != site.URL+"/table.html" {
		t.Fatalf("screenshot result %q %q", res.ImageMIMEType, res.URL)
	}
	raw, err := base64.StdEncoding.DecodeString(res.Image)
	if err != nil {
		t.Fatalf("image is not base64: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("image is not a PNG: %v", err)
	}
	if sz := img.Bounds().Size(); sz.X < 100 || sz.Y < 100 {
		t.Fatalf("screenshot is only %v", sz)
	}
}

func TestTabsListsPagesAndFlagsTheControlledOne(t *testing.T) {
	b := browserForTest(t)
	mustDo(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: site.URL + "/forms.html"})
	res := mustDo(t, b, wire.BrowserCommand{Action: browser.Tabs})
	if res.URL != site.URL+"/forms.html" {
		t.Errorf("tabs result describes %q, want the controlled tab", res.URL)
	}
	var controlled []wire.Tab
	for i, tab := range res.Tabs {
		if tab.Index != i {
			t.Errorf("tab %d has index %d", i, tab.Index)
		}
		if tab.Controlled {
			controlled = append(controlled, tab)
		}
	}
	if len(res.Tabs) < 2 || len(controlled) != 1 || controlled[0].URL != site.URL+"/forms.html" || !controlled[0].Active {
		t.Fatalf("tabs %+v: want the startup tab plus one controlled, focused tab", res.Tabs)
	}
	if res.Tabs[0].Controlled || res.Tabs[0].URL != "about:blank" {
		t.Errorf("the first tab should be the browser's own blank tab: %+v", res.Tabs[0])
	}
}

func TestReadMatchesTheFakeBrowserOnTheDemoSite(t *testing.T) {
	b := browserForTest(t)
	fake, err := fakebrowser.New(fakebrowser.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	for _, path := range []string{"", "search.html", "login.html", "article.html", "table.html", "forms.html", "search?q=sea", "nope.html"} {
		url := site.URL + "/" + path
		mustDo(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: url})
		fake.Do(ctx, wire.BrowserCommand{ID: "n", Action: browser.Navigate, URL: url})
		got := read(t, b, "")
		want := fake.Do(ctx, wire.BrowserCommand{ID: "r", Action: browser.Read})
		if got == nil || want.Content == nil || *got != *want.Content {
			t.Errorf("/%s\nchromium %q\nfake     %q", path, deref(got), deref(want.Content))
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

func TestOpenTaskProfileAndACrashedBrowser(t *testing.T) {
	b := newBrowser(t, Options{Profile: ProfileOpenTask})
	mustDo(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: site.URL + "/"})
	for _, action := range []browser.Action{browser.Click, browser.Type} {
		if res := do(t, b, wire.BrowserCommand{Action: action, Selector: "#nope", Text: "x"}); res.Error != "" {
			t.Errorf("opentask %s of a missing element: error %q, want none", action, res.Error)
		}
	}
	if res := do(t, b, wire.BrowserCommand{Action: browser.Type, Selector: "h1", Text: "x"}); res.Error != "" {
		t.Errorf("opentask typing into a heading: error %q, want a silent no-op", res.Error)
	}
	for _, tab := range mustDo(t, b, wire.BrowserCommand{Action: browser.Tabs}).Tabs {
		if tab.Controlled {
			t.Errorf("opentask tabs carry a controlled flag: %+v", tab)
		}
	}

	// A command in flight when the browser dies fails, and so does every
	// later one; none hangs.
	inflight := make(chan wire.BrowserResult, 1)
	go func() {
		inflight <- do(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: site.URL + "/hang"})
	}()
	time.Sleep(100 * time.Millisecond) // let the navigation start; not an assertion
	if err := b.Process().Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-inflight:
		if res.Error == "" {
			t.Errorf("the in-flight navigate succeeded after the browser died: %+v", res)
		}
	case <-time.After(guard):
		t.Fatal("the in-flight command hung after the browser died")
	}
	for _, action := range []browser.Action{browser.Read, browser.Tabs, browser.Navigate} {
		res := do(t, b, wire.BrowserCommand{Action: action, URL: site.URL + "/"})
		if !strings.Contains(res.Error, "the browser has exited") {
			t.Errorf("%s after the crash: %+v", action, res)
		}
	}
}

var devtoolsLine = regexp.MustCompile(`DevTools listening on (ws://\S+)`)

func TestAttachToARunningBrowser(t *testing.T) {
	path := testreq.Program(t, testreq.Chromium)
	dir, err := os.MkdirTemp("", "infer-sim-attach-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--remote-debugging-port=0", "--user-data-dir="+dir, "about:blank")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		// Helper processes may write to the profile for a moment longer.
		for range 20 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := devtoolsLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var url string
	select {
	case url = <-found:
	case <-time.After(guard):
		t.Fatal("Chromium printed no DevTools address")
	}
	b, err := New(context.Background(), Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.UserDataDir() != "" {
		t.Error("an attached browser got a temporary profile")
	}
	mustDo(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: site.URL + "/article.html"})
	if h1 := read(t, b, "h1"); h1 == nil || *h1 != "The keepers of the light" {
		t.Fatalf("h1 = %v", h1)
	}
	tabs := mustDo(t, b, wire.BrowserCommand{Action: browser.Tabs}).Tabs
	if len(tabs) < 2 {
		t.Fatalf("tabs %+v: want the browser's own tab and the controlled one", tabs)
	}
}

func TestNewReportsAMissingBrowser(t *testing.T) {
	_, err := New(context.Background(), Options{ExecPath: "/nonexistent/chromium"})
	if err == nil || !strings.Contains(err.Error(), "apt-get install -y chromium") {
		t.Fatalf("err = %v, want one that says how to install Chromium", err)
	}
}

// A browser infer-sim starts reaches its built-in sites by name, offline:
// the demo works with Chromium as with the fake browser, and a host the
// server does not serve says so.
func TestStartedBrowserReachesTheBuiltInSites(t *testing.T) {
	b := newBrowser(t, Options{Sites: map[string]http.Handler{assets.DemoHost: assets.DemoSiteHandler()}})
	res := mustDo(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: "http://" + assets.DemoHost + "/search.html"})
	if res.URL != "http://"+assets.DemoHost+"/search.html" || res.Title != "Search the catalog · Tidewater Library" {
		t.Fatalf("after navigate: %q %q", res.URL, res.Title)
	}
	mustDo(t, b, wire.BrowserCommand{Action: browser.Type, Selector: "#q", Text: "sea", PressEnter: true})
	if h1 := read(t, b, "h1"); h1 == nil || *h1 != "Search results" {
		t.Fatalf("h1 of the result page = %v", h1)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if b.sites == nil {
		t.Fatal("no server was started for the sites")
	}
	if _, err := http.Get("http://" + b.sitesAddr + "/"); err == nil {
		t.Fatal("the sites' server still answers after Close")
	}
}
