package fakebrowser

import (
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/infer-workspace/infer/assets"
	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
)

// recorded is one request a recorder host received.
type recorded struct {
	method, uri, contentType, body, referer, origin string
}

// recorder serves page at GET / and records every other request, answering
// with a small page titled "got".
type recorder struct {
	page string
	mu   sync.Mutex
	reqs []recorded
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html")
	if r.Method == "GET" && r.URL.Path == "/" && r.URL.RawQuery == "" {
		_, _ = io.WriteString(w, rc.page)
		return
	}
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.reqs = append(rc.reqs, recorded{r.Method, r.URL.RequestURI(), r.Header.Get("Content-Type"), string(body), r.Header.Get("Referer"), r.Header.Get("Origin")})
	rc.mu.Unlock()
	_, _ = io.WriteString(w, "<title>got</title><p id=done>received</p>")
}

func (rc *recorder) last(t *testing.T) recorded {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.reqs) == 0 {
		t.Fatal("no request was sent")
	}
	return rc.reqs[len(rc.reqs)-1]
}

func (rc *recorder) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.reqs)
}

// formBrowser serves page at http://form.test/ with a recorder.
func formBrowser(t *testing.T, page string) (*Browser, *recorder) {
	t.Helper()
	rc := &recorder{page: page}
	b := newTestBrowser(t, Options{Hosts: map[string]http.Handler{"form.test": rc}}, nil)
	open(t, b, "http://form.test/")
	return b, rc
}

func TestDemoFormLabGetSubmission(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, nil)
	open(t, b, assets.DemoOrigin+"forms.html")
	res := click(t, b, "#preview")
	want := assets.DemoOrigin + "echo?name=Ada&size=medium&extra=guide&branch=hill&note=Leave+at+the+desk.&action=preview"
	if res.URL != want {
		t.Fatalf("url = %s\nwant %s", res.URL, want)
	}
	if res.Title != "Echo · Tidewater Library" {
		t.Errorf("title = %q", res.Title)
	}
	if got := read(t, b, "#request"); got != "GET /echo" {
		t.Errorf("request = %q", got)
	}
}

func TestDemoFormLabChangesThenSubmitterOverride(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, nil)
	open(t, b, assets.DemoOrigin+"forms.html")
	typeInto(t, b, "#name", "Grace Hopper", false)
	click(t, b, "#extra-map")        // check
	click(t, b, "#extra-guide")      // uncheck
	click(t, b, "label[for=size-l]") // a label clicks its radio
	typeInto(t, b, "#branch", "mobile", false)
	typeInto(t, b, "#note", "line one\nline two", false)

	for sel, checked := range map[string]bool{"#extra-map": true, "#extra-guide": false, "#size-l": true, "#size-m": false} {
		res := mustOK(t, b, wire.BrowserCommand{Action: browser.Read, Selector: sel + ":checked"})
		if (res.Content != nil) != checked {
			t.Errorf("%s:checked matched = %v, want %v", sel, res.Content != nil, checked)
		}
	}

	res := click(t, b, "#save")
	if want := assets.DemoOrigin + "echo?via=formaction"; res.URL != want {
		t.Fatalf("url = %s, want %s", res.URL, want)
	}
	if got := read(t, b, "#request"); got != "POST /echo · application/x-www-form-urlencoded" {
		t.Errorf("request = %q", got)
	}
	want := "From\tName\tValue\n" +
		"query\tvia\tformaction\n" +
		"body\tname\tGrace Hopper\n" +
		"body\tsize\tlarge\n" +
		"body\textra\tmap\n" +
		"body\tbranch\tmobile\n" +
		"body\tnote\tline one line two\n" + // a table cell collapses the CRLF

		"body\taction\tsave"
	if got := read(t, b, "#fields"); got != want {
		t.Errorf("fields\n got %q\nwant %q", got, want)
	}
}

func TestDemoFormLabReset(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, nil)
	open(t, b, assets.DemoOrigin+"forms.html")
	typeInto(t, b, "#name", "Changed", false)
	click(t, b, "#extra-map")
	click(t, b, "#size-s")
	typeInto(t, b, "#branch", "harbour", false)
	click(t, b, "#reset")
	if got := read(t, b, "#name"); got != "Ada" {
		t.Errorf("name after reset = %q", got)
	}
	if got := read(t, b, "#branch option:checked"); got != "Hill" {
		t.Errorf("branch after reset = %q", got)
	}
	res := click(t, b, "#preview")
	if !strings.Contains(res.URL, "size=medium&extra=guide&branch=hill") {
		t.Errorf("after reset the form submitted %s", res.URL)
	}
}

func TestDemoMultipartUpload(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, nil)
	open(t, b, assets.DemoOrigin+"forms.html")
	typeInto(t, b, "#caption", "Spine & cover", false)
	click(t, b, "#upload-submit")
	if got := read(t, b, "#request"); got != "POST /echo · multipart/form-data" {
		t.Errorf("request = %q", got)
	}
	want := "From\tName\tValue\nbody\tcaption\tSpine & cover\nbody\tphoto\tfile (none), 0 bytes"
	if got := read(t, b, "#fields"); got != want {
		t.Errorf("fields\n got %q\nwant %q", got, want)
	}
}

func TestMultipartEncodingOnTheWire(t *testing.T) {
	t.Parallel()
	b, rc := formBrowser(t, `<form method=post action=/up enctype="multipart/form-data">
		<input name="title" value="a&quot;b">
		<input type=file name=f>
		<textarea name=t>x
y</textarea>
		<button name=go value=1>Send</button></form>`)
	click(t, b, "button")
	got := rc.last(t)
	mt, params, err := mime.ParseMediaType(got.contentType)
	if err != nil || mt != "multipart/form-data" {
		t.Fatalf("content type %q: %v", got.contentType, err)
	}
	mr := multipart.NewReader(strings.NewReader(got.body), params["boundary"])
	var parts []string
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		data, _ := io.ReadAll(p)
		parts = append(parts, p.FormName()+"|"+p.FileName()+"|"+string(data))
	}
	want := []string{"title||a\"b", "f||", "t||x\r\ny", "go||1"}
	if strings.Join(parts, ",") != strings.Join(want, ",") {
		t.Fatalf("parts = %q, want %q", parts, want)
	}
	if !strings.Contains(got.body, `name="f"; filename=""`) {
		t.Errorf("file part lacks an empty filename: %q", got.body)
	}
}

func TestFormEncodingAndOverrides(t *testing.T) {
	t.Parallel()
	page := `<html><head><base href="/sub/"></head><body>
	<form id=main method=post action="post-here">
		<input name="q" value="a b&c=d~*é">
		<input type=hidden name=_charset_>
		<input type=checkbox name=c1 value=yes checked>
		<input type=checkbox name=c2>
		<input type=radio name=r value=1><input type=radio name=r value=2 checked>
		<select name=m multiple><option selected>x</option><option>y</option><option selected value=z2>z</option></select>
		<select name=d><option disabled>skip</option><option>first-enabled</option></select>
		<fieldset disabled><input name=off value=1><legend><input name=inlegend value=1></legend></fieldset>
		<textarea name=t>x
y</textarea>
		<input name=dir value=v dirname=dir.dir>
		<input type=image name=pic alt=Go id=pic>
		<button id=plain>Plain</button>
		<button id=get formmethod=get formaction="/elsewhere?drop=me#frag">Get</button>
		<button id=text formenctype="text/plain" name=b value=t>Text</button>
		<button id=dialog formmethod=dialog>Close</button>
		<button id=nv type=submit formnovalidate formaction="/nv">NV</button>
	</form>
	<input form=main name=outside value=o>
	</body></html>`
	b, rc := formBrowser(t, page)

	click(t, b, "#plain")
	got := rc.last(t)
	// The first legend of a disabled fieldset stays enabled.
	wantBody := "q=a+b%26c%3Dd%7E*%C3%A9&_charset_=UTF-8&c1=yes&r=2&m=x&m=z2&d=first-enabled&inlegend=1&t=x%0D%0Ay&dir=v&dir.dir=ltr&outside=o"
	if got.method != "POST" || got.uri != "/sub/post-here" || got.contentType != "application/x-www-form-urlencoded" || got.body != wantBody {
		t.Fatalf("plain submit = %+v\nwant POST /sub/post-here body %s", got, wantBody)
	}
	if got.referer != "http://form.test/" || got.origin != "http://form.test" {
		t.Errorf("referer %q origin %q", got.referer, got.origin)
	}

	open(t, b, "http://form.test/")
	res := click(t, b, "#get")
	if want := "http://form.test/elsewhere?" + wantBody + "#frag"; res.URL != want {
		t.Errorf("formmethod=get url = %s\nwant %s", res.URL, want)
	}
	if got := rc.last(t); got.method != "GET" || got.body != "" {
		t.Errorf("formmethod=get sent %+v", got)
	}

	open(t, b, "http://form.test/")
	click(t, b, "#text")
	got = rc.last(t)
	if got.contentType != "text/plain" || !strings.HasPrefix(got.body, "q=a b&c=d~*é\r\n_charset_=UTF-8\r\n") || !strings.HasSuffix(got.body, "b=t\r\noutside=o\r\n") {
		t.Errorf("text/plain submit = %+v", got)
	}

	open(t, b, "http://form.test/")
	click(t, b, "#pic")
	if got := rc.last(t); !strings.HasSuffix(got.body, "&dir.dir=ltr&pic.x=0&pic.y=0&outside=o") {
		t.Errorf("image submitter body = %q", got.body)
	}

	open(t, b, "http://form.test/")
	before := rc.count()
	res = click(t, b, "#dialog")
	if rc.count() != before || res.URL != "http://form.test/" {
		t.Errorf("method=dialog navigated to %s", res.URL)
	}
}

func TestRequiredFieldBlocksSubmission(t *testing.T) {
	t.Parallel()
	b, rc := formBrowser(t, `<form action=/go><input name=need required><button id=s>Go</button>
		<button id=skip formnovalidate>Skip</button></form>`)
	res := click(t, b, "#s")
	if rc.count() != 0 || res.URL != "http://form.test/" {
		t.Fatalf("a form with an empty required field was submitted: %s", res.URL)
	}
	res = click(t, b, "#skip")
	if res.URL != "http://form.test/go?need=" {
		t.Fatalf("formnovalidate submit went to %s", res.URL)
	}
	open(t, b, "http://form.test/")
	typeInto(t, b, "input[name=need]", "x", false)
	if res := click(t, b, "#s"); res.URL != "http://form.test/go?need=x" {
		t.Fatalf("after filling in, submit went to %s", res.URL)
	}
}

func TestPressEnterImplicitSubmission(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, nil)

	// The search page's default button (no name) submits the form.
	open(t, b, assets.DemoOrigin+"search.html")
	res := typeInto(t, b, "#q", "sea", true)
	if want := assets.DemoOrigin + "search?q=sea&field=any"; res.URL != want {
		t.Fatalf("enter in search went to %s, want %s", res.URL, want)
	}
	if got := read(t, b, "#summary"); got != "4 results for “sea”" {
		t.Errorf("summary = %q", got)
	}

	// A form with one field and no button submits without a submitter.
	open(t, b, assets.DemoOrigin+"forms.html")
	res = typeInto(t, b, "#quick-note", "hello there", true)
	if res.URL != assets.DemoOrigin+"echo" {
		t.Fatalf("quick note went to %s", res.URL)
	}
	if got := read(t, b, "#fields"); got != "From\tName\tValue\nbody\tquick\thello there" {
		t.Errorf("quick note fields = %q", got)
	}

	// Two blocking fields and no button: Enter does nothing.
	open(t, b, assets.DemoOrigin+"forms.html")
	res = typeInto(t, b, "#first", "one", true)
	if res.URL != assets.DemoOrigin+"forms.html" {
		t.Fatalf("enter in a two-field form went to %s", res.URL)
	}
	if got := read(t, b, "#first"); got != "one" {
		t.Errorf("typed value lost: %q", got)
	}

	// Enter in a textarea does not submit.
	res = typeInto(t, b, "#note", "text", true)
	if res.URL != assets.DemoOrigin+"forms.html" {
		t.Fatalf("enter in a textarea went to %s", res.URL)
	}
}

func TestPressEnterUsesDefaultButton(t *testing.T) {
	t.Parallel()
	b, rc := formBrowser(t, `<form action=/a>
		<input name=q id=q><input name=other id=o>
		<button type=button>Not it</button>
		<button name=which value=first formaction=/first>First</button>
		<button name=which value=second>Second</button></form>
		<form action=/b><input name=x id=x><button disabled>Off</button></form>`)
	typeInto(t, b, "#q", "v", true)
	if got := rc.last(t); got.uri != "/first?q=v&other=&which=first" {
		t.Fatalf("enter submitted %s", got.uri)
	}
	open(t, b, "http://form.test/")
	before := rc.count()
	res := typeInto(t, b, "#x", "v", true)
	if rc.count() != before || res.URL != "http://form.test/" {
		t.Fatalf("enter with a disabled default button submitted: %s", res.URL)
	}
}

func TestClickActivation(t *testing.T) {
	t.Parallel()
	b, rc := formBrowser(t, `<form action=/f>
		<label id=lab><input type=checkbox name=c id=c> Check me</label>
		<label for=c id=lab2>Also</label>
		<button type=button id=nothing>Nothing</button>
		<button id=dis disabled>Disabled</button>
		<button id=nest><span id=inner>Nested</span></button>
	</form>
	<details id=d><summary id=sum>More</summary><p id=in>Inside</p></details>`)
	click(t, b, "#lab") // the label toggles its checkbox
	if res := run(t, b, wire.BrowserCommand{Action: browser.Read, Selector: "#c:checked"}); res.Content == nil {
		t.Fatal("clicking the label did not check the box")
	}
	click(t, b, "#lab2") // and again, through for=
	if res := run(t, b, wire.BrowserCommand{Action: browser.Read, Selector: "#c:checked"}); res.Content != nil {
		t.Fatal("clicking the second label did not uncheck the box")
	}
	click(t, b, "#c")
	click(t, b, "#nothing")
	click(t, b, "#dis")
	if rc.count() != 0 {
		t.Fatalf("a type=button or disabled button submitted: %+v", rc.last(t))
	}
	if got := read(t, b, "#d"); got != "More" {
		t.Errorf("closed details reads %q", got)
	}
	click(t, b, "#sum")
	if got := read(t, b, "#d"); got != "More\n\nInside" {
		t.Errorf("opened details reads %q", got)
	}
	click(t, b, "#inner") // a click on a span inside a button submits
	if got := rc.last(t); got.uri != "/f?c=on" {
		t.Errorf("nested click submitted %s", got.uri)
	}
}

func TestLinks(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, nil)
	open(t, b, assets.DemoOrigin)
	cases := []struct{ sel, want string }{
		{"#link-search", assets.DemoOrigin + "search.html"},   // root-relative
		{"#link-article", assets.DemoOrigin + "article.html"}, // relative
		{"#link-table", assets.DemoOrigin + "table.html"},     // dot-relative
	}
	for _, tc := range cases {
		open(t, b, assets.DemoOrigin)
		res := click(t, b, tc.sel)
		if res.URL != tc.want {
			t.Errorf("%s went to %s, want %s", tc.sel, res.URL, tc.want)
		}
	}

	pages := map[string]string{
		"/dir/page.html": `<a id=rel href="../other.html">r</a>
			<a id=abs href="http://demo.infer.localhost/table.html" target="_blank">a</a>
			<a id=frag href="#sec">f</a>
			<a id=js href="javascript:alert(1)">j</a>
			<a id=dl href="/file.bin" download>d</a>
			<a id=nohref>n</a>
			<a id=span href=" /other.html?x=1 "><span id=inner>nested</span></a>`,
		"/other.html": `<title>Other</title>`,
	}
	b = newTestBrowser(t, Options{}, pages)
	start := "http://fixture.test/dir/page.html"
	for _, tc := range []struct{ sel, want string }{
		{"#rel", "http://fixture.test/other.html"},
		{"#abs", assets.DemoOrigin + "table.html"},
		{"#frag", start + "#sec"},
		{"#js", start},
		{"#dl", start},
		{"#nohref", start},
		{"#inner", "http://fixture.test/other.html?x=1"},
	} {
		open(t, b, start)
		if res := click(t, b, tc.sel); res.URL != tc.want {
			t.Errorf("%s went to %s, want %s", tc.sel, res.URL, tc.want)
		}
	}
}
