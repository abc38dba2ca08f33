package fakebrowser

import (
	"context"
	"net/url"
	"testing"
)

// textOf reads sel ("" for body) from an inline document the way the read
// command does.
func textOf(t *testing.T, src, sel string) string {
	t.Helper()
	u, _ := url.Parse("http://fixture.test/")
	p := newPage(u, parseDoc(t, src), "GET")
	el := p.body()
	if sel != "" {
		var err error
		el, err = p.querySelector(sel)
		if err != nil || el == nil {
			t.Fatalf("querySelector(%q) = %v, %v", sel, el, err)
		}
	}
	s, err := p.readElement(context.Background(), el)
	if err != nil {
		t.Fatalf("readElement: %v", err)
	}
	return s
}

// recordedPage is a reconstruction of the page opentask 1.12.1 read in the
// recording; its body text there was recordedBody.
const recordedPage = `<!doctype html>
<html><head><title>OTX Test Page</title><style>#x{color:red}</style></head>
<body>
  <h1>Hello from the test page</h1>
  <p id="para">Some visible paragraph text.</p>
  <p id="hidden" style="display:none">This paragraph is hidden.</p>
  <form id="f">
    <input id="q" name="q" value="initial">
    <input id="pw" type="password" value="hunter2">
    <input id="apitoken" value="tok_abc">
    <input id="otp" autocomplete="one-time-code" value="123456">
    <button type="submit">Search</button>
  </form>
  <button id="btn">Click me</button>
  <div id="out">not clicked</div>
  <div id="out2">not submitted</div>
  <div id="keys"></div>
  <script>document.getElementById('btn').onclick = () => {};</script>
</body></html>`

const recordedBody = "Hello from the test page\n\nSome visible paragraph text.\n\n    Search\nClick me\nnot clicked\nnot submitted"

func TestInnerTextMatchesRecordedChrome(t *testing.T) {
	t.Parallel()
	if got := textOf(t, recordedPage, ""); got != recordedBody {
		t.Fatalf("body text\n got %q\nwant %q", got, recordedBody)
	}
	for sel, want := range map[string]string{
		"h1": "Hello from the test page", "#para": "Some visible paragraph text.",
		"#out": "not clicked", "#q": "initial", "#pw": "[redacted]",
		"#apitoken": "[redacted]", "#otp": "[redacted]",
	} {
		if got := textOf(t, recordedPage, sel); got != want {
			t.Errorf("read %s = %q, want %q", sel, got, want)
		}
	}
}

func TestInnerText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, sel, want string
	}{
		{"collapses white space", "<p>  Hello   <b>big</b>\n world  </p>", "", "Hello big world"},
		{"space across inline edges", "<p>a <b> b</b> c</p>", "", "a b c"},
		{"br", "<p>one<br>two<br>three</p>", "", "one\ntwo\nthree"},
		{"br at start is kept", "<p><br>x</p>", "", "\nx"},
		{"paragraphs", "<p>a</p><p>b</p>", "", "a\n\nb"},
		{"divs", "<div>a</div><div>b</div>", "", "a\nb"},
		{"p inside div", "<div>a<p>b</p>c</div>", "", "a\n\nb\n\nc"},
		{"outer breaks trimmed", "<div><p>x</p></div>", "", "x"},
		{"heading and list", "<h1>T</h1><ul><li>one</li><li>two</li></ul>", "", "T\none\ntwo"},
		{"nested list", "<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>", "", "a\nb\nc"},
		{"sections", "<header>h</header><nav>n</nav><main><article><section>s</section></article></main><footer>f</footer>", "", "h\nn\ns\nf"},
		{"table", "<table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>", "", "A\tB\n1\t2"},
		{"table sections", "<table><thead><tr><th>A</th><th>B</th></tr></thead>\n<tbody>\n<tr> <td> 1 </td> <td>2</td> </tr>\n</tbody></table>", "", "A\tB\n1\t2"},
		{"table empty cell", "<table><tr><td>a</td><td></td><td>b</td></tr></table>", "", "a\t\tb"},
		{"table hidden last row", "<table><tr><td>a</td></tr><tr style='display:none'><td>b</td></tr></table><p>z</p>", "", "a\n\nz"},
		{"caption", "<table><caption>Cap</caption><tr><td>x</td></tr></table>", "", "Cap\nx"},
		{"pre keeps white space", "<p>x</p><pre>  a\n    b  </pre><p>y</p>", "", "x\n\n  a\n    b  \n\ny"},
		{"pre-wrap inline style", "<div style='white-space: pre-wrap'>a   b</div>", "", "a   b"},
		{"pre-line", "<div style='white-space:pre-line'>a   b\n  c</div>", "", "a b\nc"},
		{"nbsp is not collapsed", "<p>a&nbsp;&nbsp;b</p>", "", "a\u00a0\u00a0b"},
		{"hidden attribute", "<p>a<span hidden>X</span>b</p>", "", "ab"},
		{"display none", "<div style='display: none'>X</div><div>y</div>", "", "y"},
		{"display none important", "<div style='color:red;DISPLAY:NONE !important'>X</div><div>y</div>", "", "y"},
		{"visibility hidden with visible child", "<div style='visibility:hidden'>X <span style='visibility:visible'>Y</span></div>", "", "Y"},
		{"hidden text keeps its space out", "<p>is <span style='visibility:hidden'>not</span> x</p>", "", "is  x"},
		{"hidden text between words", "<p>Sign-in is <span style='visibility:hidden'>not </span>encrypted.</p>", "", "Sign-in is encrypted."},
		{"template script style noscript", "<p>a</p><template><p>T</p></template><script>var x</script><style>p{}</style><noscript>N</noscript>", "", "a"},
		{"hidden input", "<p>a<input type=hidden name=h value=v>b</p>", "", "ab"},
		{"closed dialog", "<p>a</p><dialog><p>D</p></dialog><dialog open><p>E</p></dialog>", "", "a\n\nE"},
		{"button is trimmed inline block", "<p>Press <button>  Go  </button> now</p>", "", "Press Go now"},
		{"input values are not text", "<p>Name: <input value='Bob'> ok</p>", "", "Name:  ok"},
		{"textarea is not text", "<p>a<textarea>zzz</textarea>b</p>", "", "ab"},
		{"select options are lines", "<p>a <select><option>x</option></select> b</p>", "", "a \nx\n b"},
		{"span made block", "<span>a</span><span style='display:block'>b</span><span>c</span>", "", "a\nb\nc"},
		{"div made inline", "<div style='display:inline'>a</div> <div style='display:inline'>b</div>", "", "a b"},
		{"display contents", "<div style='display:contents'><p>a</p></div>b", "", "a\n\nb"},
		{"inline-flex", "<span>x</span><div style='display:inline-flex'> y </div><span>z</span>", "", "xyz"},
		{"flex items are blockified", "<div style='display:flex'><span>a</span> <span>b</span><button>c</button></div>", "", "a\nb\nc"},
		{"grid items too", "<div style='display: inline-grid'><b>a</b><i>b</i></div>", "", "a\nb"},
		{"closed details shows summary", "<details><summary>More</summary><p>inside</p></details>", "", "More"},
		{"open details", "<details open><summary>More</summary><p>inside</p></details>", "", "More\n\ninside"},
		{"comments", "<p>a<!-- hidden -->b</p>", "", "ab"},
		{"image has no text", "<p>a <img alt='pic' src='x.png'> b</p>", "", "a  b"},
		{"read one element", "<div id=d>\n  <p>x</p>\n  <p>y</p>\n</div><p>z</p>", "#d", "x\n\ny"},
		{"read hidden element gives textContent", "<div id=h style='display:none'>  Hidden   <b>text</b> </div>", "#h", "  Hidden   text "},
		{"read inside hidden ancestor", "<div hidden><p id=c> a  b </p></div>", "#c", " a  b "},
		{"read title gives textContent", "<p>x</p>", "title", "T"},
		{"read textarea value", "<textarea id=t>\nline1\nline2</textarea>", "#t", "line1\nline2"},
		{"read select", "<select id=s><option>One</option><option selected>  Two  </option></select>", "#s", "One\nTwo"},
		{"read checkbox value", "<input type=checkbox id=c>", "#c", "on"},
		{"read image", "<img id=i alt=x>", "#i", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := textOf(t, "<!doctype html><html><head><title>T</title></head><body>"+tc.body+"</body></html>", tc.sel)
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestInnerTextMatchesChromium holds cases whose expected text is what
// headless Chromium 156 returned for the same markup (innerText, or value for
// an input or textarea), to pin the fake browser to the real one at the
// edges: selects, replaced elements, floats, SVG, tables, white space. The
// cases of TestInnerText were checked the same way.
func TestInnerTextMatchesChromium(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, body, sel, want string
	}{
		{"select block", "<p>a</p><select style='display:block'><option>x</option><option>y</option></select><p>b</p>", "", "a\n\nx\ny\n\nb"},
		{"select optgroup", "<p>a <select><optgroup label=G><option>x</option></optgroup><option> y  z </option></select> b</p>", "", "a \nx\ny z\n b"},
		{"select multiple", "<select id=s multiple><option>x</option><option selected>y</option></select>", "#s", "x\ny"},
		{"option label attr", "<select id=s><option label=L>x</option></select>", "#s", "x"},
		{"option hidden", "<select id=s><option hidden>h</option><option>v</option></select>", "#s", "h\nv"},
		{"read option", "<select><option id=o> a  b </option></select>", "#o", " a  b "},
		{"datalist", "<p>a<datalist><option>x</option></datalist>b</p>", "", "ab"},
		{"input submit", "<p>a <input type=submit value=Go> b</p>", "", "a  b"},
		{"input button", "<p>a<input type=button value=Go>b</p>", "", "ab"},
		{"button value", "<p>a<button value=v></button>b</p>", "", "ab"},
		{"q element", "<p>He said <q>hi</q>.</p>", "", "He said hi."},
		{"ruby", "<p><ruby>漢<rt>kan</rt></ruby></p>", "", "漢kan"},
		{"hr", "<p>a</p><hr><p>b</p>", "", "a\n\nb"},
		{"ol", "<ol><li>a</li><li>b</li></ol>", "", "a\nb"},
		{"inline-block with blocks", "<p>x <span style='display:inline-block'><div>a</div><div>b</div></span> y</p>", "", "x \n\na\nb\ny"},
		{"nested table", "<table><tr><td><table><tr><td>a</td><td>b</td></tr></table></td><td>c</td></tr></table>", "", "a\tb\n\tc"},
		{"td with p", "<table><tr><td><p>a</p></td><td>b</td></tr></table>", "", "a\n\n\tb"},
		{"table-cell style", "<div style='display:table-row'><span style='display:table-cell'>a</span><span style='display:table-cell'>b</span></div>", "", "a\tb"},
		{"tfoot first", "<table><tfoot><tr><td>f</td></tr></tfoot><tbody><tr><td>b</td></tr></tbody></table>", "", "f\nb"},
		{"br then block", "<div>a<br></div><div>b</div>", "", "a\n\nb"},
		{"br in p end", "<p>a<br></p><p>b</p>", "", "a\n\n\nb"},
		{"float", "<div>a<span style='float:left'>f</span>b</div>", "", "a\nf\nb"},
		{"position abs", "<div>a<span style='position:absolute'>p</span>b</div>", "", "a\np\nb"},
		{"text-transform", "<p style='text-transform:uppercase'>abc</p>", "", "ABC"},
		{"svg text", "<p>a<svg><text>S</text></svg>b</p>", "", "a\nS\nb"},
		{"iframe", "<p>a<iframe>fallback</iframe>b</p>", "", "ab"},
		{"video fallback", "<p>a<video>v</video>b</p>", "", "ab"},
		{"canvas fallback", "<p>a<canvas>c</canvas>b</p>", "", "ab"},
		{"object fallback", "<p>a<object>o</object>b</p>", "", "aob"},
		{"meter", "<p>a<meter value=1>m</meter>b</p>", "", "ab"},
		{"progress", "<p>a<progress>p</progress>b</p>", "", "ab"},
		{"noscript", "<p>a<noscript>n</noscript>b</p>", "", "ab"},
		{"tab char", "<p>a\tb</p>", "", "a b"},
		{"leading nbsp", "<p>&nbsp;a</p>", "", "\u00a0a"},
		{"pre leading newline", "<pre>\n\nx</pre>", "", "\nx"},
		{"list-item style", "<span style='display:list-item'>a</span><span>b</span>", "", "a\nb"},
		{"hidden until found", "<p>a<span hidden=until-found>x</span>b</p>", "", "axb"},
		{"display contents read", "<div id=d style='display:contents'><p>a</p></div>", "#d", "a"},
		{"read br", "<p>a<br id=b>c</p>", "#b", ""},
		{"label", "<p><label>Name <input></label> next</p>", "", "Name  next"},
		{"dl", "<dl><dt>t</dt><dd>d</dd></dl>", "", "t\nd"},
		{"fieldset legend", "<fieldset><legend>L</legend>x</fieldset>", "", "L\nx"},
		{"empty p", "<p>a</p><p></p><p>b</p>", "", "a\n\nb"},
		{"space only inline", "<p>a<span> </span>b</p>", "", "a b"},
		{"visibility collapse row", "<table><tr><td>a</td></tr><tr style='visibility:collapse'><td>b</td></tr><tr><td>c</td></tr></table>", "", "a\nc"},
		{"textarea read", "<textarea id=t>  a\n b</textarea>", "#t", "  a\n b"},
		{"img read", "<p>a<img id=i alt=x>b</p>", "#i", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := textOf(t, "<!doctype html><html><head><meta charset=utf-8><title>T</title></head><body>"+tc.body+"</body></html>", tc.sel)
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestInnerTextHonoursContext(t *testing.T) {
	t.Parallel()
	var src []byte
	src = append(src, "<body>"...)
	for range 20000 {
		src = append(src, "<p>x</p>"...)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	u, _ := url.Parse("http://fixture.test/")
	p := newPage(u, parseDoc(t, string(src)), "GET")
	if _, err := innerText(ctx, p.body()); err == nil {
		t.Fatal("innerText of a large page with a cancelled context succeeded")
	}
}
