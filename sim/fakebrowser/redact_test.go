package fakebrowser

import (
	"fmt"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/bridge/wire"
)

func TestReadRedactsEverySecretRule(t *testing.T) {
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

	plain := []string{
		`<input data-t="p0" name="q" value="visible">`,
		`<input data-t="p1" id="username" autocomplete="username" value="visible">`,
		`<input data-t="p2" aria-label="Search the site" value="visible">`,
		`<input data-t="p3" type="email" name="email" autocomplete="email" value="visible">`,
		// The contract's rule covers input elements only.
		`<textarea data-t="p4" name="secret_notes">visible</textarea>`,
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
	res := mustOK(t, b, wire.BrowserCommand{Action: wire.ActionRead, Selector: "form"})
	if strings.Contains(*res.Content, "hunter2") || strings.Contains(*res.Content, "424242") {
		t.Errorf("form text leaks a secret: %q", *res.Content)
	}
}
