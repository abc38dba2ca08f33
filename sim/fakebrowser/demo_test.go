package fakebrowser

import (
	"strings"
	"testing"

	"github.com/infer-workspace/infer/assets"
)

func TestDemoSiteTour(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, nil)

	res := open(t, b, assets.DemoOrigin)
	if res.Title != "Tidewater Library" || res.URL != assets.DemoOrigin {
		t.Fatalf("front page: %q %q", res.URL, res.Title)
	}
	body := read(t, b, "")
	wantStart := "Tidewater Library\nSearch Reading Tides Form lab Sign in\nWelcome to Tidewater Library\n\nA small harbour library"
	if !strings.HasPrefix(body, wantStart) {
		t.Errorf("front page text starts %q", body[:min(len(body), 160)])
	}

	// Sign in, then the cookie follows to the account page.
	click(t, b, "#link-login")
	if got := read(t, b, "#debug"); got != "Debug: the last sign-in came from 10.0.0.7." {
		t.Errorf("hidden debug text by selector = %q", got) // textContent, as Chrome
	}
	if body := read(t, b, "form"); strings.Contains(body, "Debug") || strings.Contains(body, "Signing you in") || strings.Contains(body, "invisible") {
		t.Errorf("hidden elements in the form text: %q", body)
	}
	if body := read(t, b, ""); strings.Contains(body, "Template content") {
		t.Error("template content was read")
	}
	if got := read(t, b, "#ghost"); got != "" {
		t.Errorf("visibility:hidden text reads %q", got)
	}
	typeInto(t, b, "#username", "alice", false)
	typeInto(t, b, "#password", "hunter2", false)
	typeInto(t, b, "#api-token", "tok_123", false)
	click(t, b, "#remember")
	res = click(t, b, "#sign-in")
	if res.URL != assets.DemoOrigin+"login" || res.Title != "Signed in · Tidewater Library" {
		t.Fatalf("after sign-in: %q %q", res.URL, res.Title)
	}
	if got := read(t, b, "#details"); got != "Remember me: yes\nOne-time code: not given\nAPI token: received" {
		t.Errorf("sign-in details = %q", got)
	}
	click(t, b, "a[href='/account']")
	if got := read(t, b, "#who"); got != "Signed in as alice." {
		t.Errorf("account = %q", got)
	}

	// The tide table reads as tab-separated rows.
	open(t, b, assets.DemoOrigin+"table.html")
	tides := read(t, b, "#tides")
	if !strings.HasPrefix(tides, "Tidewater Harbour, first week of June\nDay\tHigh water\tHeight\tLow water\tHeight\nMonday\t05:12\t4.1 m\t11:31\t0.9 m\n") ||
		!strings.HasSuffix(tides, "Sunday\t09:30\t3.9 m\t15:49\t1.1 m\nHeights above chart datum. Times are local.") {
		t.Errorf("tides table = %q", tides)
	}
	if got := read(t, b, "#hours"); got != "Opening hours\nDays\tOpen\tClose\nMonday to Friday\t09:00\t18:00\nSaturday\t10:00\t16:00\nSunday\tClosed" {
		t.Errorf("hours table = %q", got)
	}

	// The long article keeps its paragraphs, list items and pre block.
	open(t, b, assets.DemoOrigin+"article.html")
	article := read(t, b, "#article")
	for _, want := range []string{
		"The keepers of the light\n\nHow a small harbour",
		"went like this:\n\nClimb the tower an hour before sunset and polish the lens.\nFill the reservoir",
		"Tidewater Point      Fl(2) W 15s    elevation 14 m    range 17 M\n  flash 0.5 s   eclipse 2.0 s\n",
		"Wind south-west, fresh.",
	} {
		if !strings.Contains(article, want) {
			t.Errorf("article lacks %q", want)
		}
	}
	click(t, b, "a[href='#article']")
	if res := open(t, b, assets.DemoOrigin+"notes.txt"); res.Title != "demo.infer.localhost/notes.txt" {
		t.Errorf("notes title = %q", res.Title)
	}
	if got := read(t, b, ""); !strings.Contains(got, "\n    Opening hours are on the tides page: /table.html\n") {
		t.Errorf("notes text = %q", got)
	}
	res = open(t, b, assets.DemoOrigin+"redirect?to=/search?q=verne")
	if res.URL != assets.DemoOrigin+"search?q=verne" || read(t, b, "#results") != "Twenty Thousand Leagues Under the Seas by Jules Verne (1870) · shelf F VER" {
		t.Errorf("redirected search: %s", res.URL)
	}
}
