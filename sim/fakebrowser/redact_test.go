package fakebrowser

import (
	"fmt"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
)

func TestReadRedactsEverySecretRule(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-value"
	var inputs []string
	var secretIDs []string
	add := func(attrs string) {
		id := fmt.Sprintf("f%d", len(inputs))
		inputs = append(inputs, fmt.Sprintf(`<input data-t="%s" %s value="%s">`, id, attrs, secret))
		secretIDs = append(secretIDs, id)
	}
	add(`type="password"`)
	add(`type="PASSWORD"`)
	add(`type=" password "`)
	for _, ac := range []string{"current-password", "new-password", "one-time-code", "One-Time-Code", "section-login current-password", "shipping new-password"} {
		add(fmt.Sprintf(`autocomplete="%s"`, ac))
	}
	// Each word of the pattern, in each attribute, in several cases.
	for _, word := range []string{"pass", "secret", "token", "otp", "cvc", "card"} {
		for _, key := range []string{"name", "id", "aria-label"} {
			for _, v := range []string{word, strings.ToUpper(word), "my_" + strings.ToUpper(word[:1]) + word[1:] + "_field"} {
				add(fmt.Sprintf(`%s="%s"`, key, v))
			}
		}
	}
	// Hidden inputs carry tokens too.
	add(`type="hidden" name="csrf_token"`)
	// Names that say secret as a word, not as a substring of the
	// protocol's pattern.
	for _, v := range []string{"pwd", "user_pwd", "pin", "userPin", "PIN code", "api_key", "apiKey", "X-API-Key", "cvv", "ssn", "security-code", "2fa"} {
		add(fmt.Sprintf(`type="text" name="%s"`, v))
	}
	for _, ac := range []string{"cc-number", "cc-csc"} {
		add(fmt.Sprintf(`autocomplete="%s"`, ac))
	}

	plain := []string{
		`<input data-t="p0" name="q" value="visible">`,
		`<input data-t="p1" id="username" autocomplete="username" value="visible">`,
		`<input data-t="p2" aria-label="Search the site" value="visible">`,
		`<input data-t="p3" type="email" name="email" autocomplete="email" value="visible">`,
		// Words that merely contain a secret word are not secret.
		`<input data-t="p4" name="shipping_option" value="visible">`,
		`<input data-t="p5" name="keyword" value="visible">`,
		`<input data-t="p6" id="spinner" aria-label="Your opinion" value="visible">`,
		`<textarea data-t="p7" name="notes">visible</textarea>`,
	}
	page := "<html><body><form>" + strings.Join(inputs, "\n") + strings.Join(plain, "\n") + "</form></body></html>"
	b := newTestBrowser(t, Options{}, map[string]string{"/": page})
	open(t, b, "http://fixture.test/")

	for _, id := range secretIDs {
		if got := read(t, b, fmt.Sprintf(`[data-t="%s"]`, id)); got != redacted {
			t.Errorf("%s: read %q, want %q", inputs[indexOf(secretIDs, id)], got, redacted)
		}
	}
	for i := range plain {
		if got := read(t, b, fmt.Sprintf(`[data-t="p%d"]`, i)); got != "visible" {
			t.Errorf("%s: read %q, want the value", plain[i], got)
		}
	}
	if body := read(t, b, ""); strings.Contains(body, secret) {
		t.Errorf("body text leaks a secret: %q", body)
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

func TestTypedSecretsStayRedacted(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, map[string]string{"/": `<form>
		<input id="user" name="user">
		<input id="pw" type="password" name="pw">
		<input id="code" name="code" autocomplete="one-time-code">
	</form>`})
	open(t, b, "http://fixture.test/")
	typeInto(t, b, "#user", "alice", false)
	typeInto(t, b, "#pw", "hunter2", false)
	typeInto(t, b, "#code", "424242", false)
	if got := read(t, b, "#user"); got != "alice" {
		t.Errorf("#user = %q, want alice", got)
	}
	for _, sel := range []string{"#pw", "#code", "input[type=password]"} {
		if got := read(t, b, sel); got != redacted {
			t.Errorf("%s = %q, want %q", sel, got, redacted)
		}
	}
	res := mustOK(t, b, wire.BrowserCommand{Action: browser.Read, Selector: "form"})
	if strings.Contains(*res.Content, "hunter2") || strings.Contains(*res.Content, "424242") {
		t.Errorf("form text leaks a secret: %q", *res.Content)
	}
}

// A textarea or editable region named like a secret is as secret as a
// password input: read by selector, or as part of the page.
func TestReadRedactsSecretTextareasAndEditableRegions(t *testing.T) {
	t.Parallel()
	const page = `<html><body>
<form>
<textarea id="ta" name="password">hunter2</textarea>
<input id="pwd" type="text" name="pwd" value="tr0ub4dor">
<textarea id="notes" name="notes">plain notes</textarea>
</form>
<p>Key: <span id="ce" contenteditable aria-label="API key">sk-live-abc123</span> (keep it safe)</p>
<div id="box" contenteditable="true" name="recovery_code"><p id="inner">first line 9f8e</p><p>second line 7d6c</p></div>
<div id="tb" role="textbox" aria-label="One-time PIN">482913</div>
<div id="draft" contenteditable>an ordinary draft</div>
<div id="off" contenteditable="false" name="token">shown: not editable</div>
<div id="hidden" style="display:none"><textarea name="secret">hidden-secret-42</textarea> and <span contenteditable name="otp">hidden-otp-77</span></div>
<div id="passage">password: innerText never includes input values</div>
</body></html>`
	b := newTestBrowser(t, Options{}, map[string]string{"/": page})
	open(t, b, "http://fixture.test/")
	for sel, want := range map[string]string{
		"#ta": redacted, "#pwd": redacted, "#ce": redacted, "#box": redacted, "#inner": redacted, "#tb": redacted,
		"#notes": "plain notes", "#draft": "an ordinary draft", "#off": "shown: not editable",
		"#passage": "password: innerText never includes input values",
	} {
		if got := read(t, b, sel); got != want {
			t.Errorf("read %s = %q, want %q", sel, got, want)
		}
	}
	// Typed into, they stay secret.
	typeInto(t, b, "#ta", "correct horse", false)
	typeInto(t, b, "#ce", "sk-live-typed", false)
	if got := read(t, b, "#ta"); got != redacted {
		t.Errorf("typed textarea = %q", got)
	}
	body := read(t, b, "")
	for _, secret := range []string{"hunter2", "correct horse", "tr0ub4dor", "sk-live", "9f8e", "7d6c", "482913"} {
		if strings.Contains(body, secret) {
			t.Errorf("the page text holds the secret %q:\n%s", secret, body)
		}
	}
	for _, shown := range []string{"Key: [redacted] (keep it safe)", "an ordinary draft", "shown: not editable", "password: innerText"} {
		if !strings.Contains(body, shown) {
			t.Errorf("the page text lacks %q:\n%s", shown, body)
		}
	}
	// An element that is not rendered reads as its textContent, which
	// holds a textarea's initial text.
	if got := read(t, b, "#hidden"); strings.Contains(got, "hidden-secret-42") || strings.Contains(got, "hidden-otp-77") || !strings.Contains(got, " and ") {
		t.Errorf("read #hidden = %q", got)
	}

	// The screenshot masks them too.
	shot, err := layoutPage(testCtx(t), b.controlled.page, DefaultViewport)
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, line := range shot.lines {
		for _, it := range line {
			all.WriteString(it.text)
			if it.control != nil {
				all.WriteString(it.control.label)
			}
		}
	}
	for _, secret := range []string{"correct horse", "tr0ub4dor", "sk-live", "9f8e", "482913"} {
		if strings.Contains(all.String(), secret) {
			t.Errorf("the screenshot draws the secret %q", secret)
		}
	}
	if !strings.Contains(all.String(), "an ordinary draft") {
		t.Errorf("the screenshot lacks the ordinary draft: %q", all.String())
	}
}
