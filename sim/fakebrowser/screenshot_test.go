package fakebrowser

import (
	"bytes"
	"encoding/base64"
	"flag"
	"image"
	"image/png"
	"os"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/assets"
	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
)

// -shot-dir writes the screenshots the tests take, for a person to look at.
var shotDir = flag.String("shot-dir", "", "write test screenshots to this directory")

func screenshot(t *testing.T, b *Browser, name string) image.Image {
	t.Helper()
	res := mustOK(t, b, wire.BrowserCommand{Action: browser.Screenshot})
	if res.ImageMIMEType != "image/png" {
		t.Fatalf("mime type %q", res.ImageMIMEType)
	}
	data, err := base64.StdEncoding.DecodeString(res.Image)
	if err != nil {
		t.Fatalf("image is not base64: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("image is not a PNG: %v", err)
	}
	if *shotDir != "" {
		_ = os.WriteFile(*shotDir+"/"+name+".png", data, 0o644)
	}
	return img
}

// inkIn counts dark pixels in r: drawn text.
func inkIn(img image.Image, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if cr < 0x8000 && cg < 0x8000 && cb < 0x8000 {
				n++
			}
		}
	}
	return n
}

func TestScreenshotIsAPNGOfTheViewport(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, map[string]string{"/empty": "<title>Empty</title>"})
	open(t, b, assets.DemoOrigin+"article.html")
	img := screenshot(t, b, "article")
	if img.Bounds() != image.Rect(0, 0, 1280, 800) {
		t.Fatalf("bounds %v, want 1280x800", img.Bounds())
	}
	content := image.Rect(0, chromeH, 1280, 800)
	article := inkIn(img, content)
	if title := inkIn(img, image.Rect(0, 0, 400, 34)); title == 0 {
		t.Error("the tab strip shows no title")
	}
	if addr := inkIn(img, image.Rect(0, 34, 1280, chromeH)); addr == 0 {
		t.Error("the toolbar shows no address")
	}

	open(t, b, "http://fixture.test/empty")
	if empty := inkIn(screenshot(t, b, "empty"), content); empty != 0 || article < 20000 {
		t.Errorf("ink in the content area: article %d, empty page %d", article, empty)
	}

	small := newTestBrowser(t, Options{Viewport: image.Point{X: 640, Y: 360}}, nil)
	open(t, small, assets.DemoOrigin)
	if got := screenshot(t, small, "small").Bounds(); got != image.Rect(0, 0, 640, 360) {
		t.Errorf("custom viewport gave %v", got)
	}
}

func TestScreenshotMasksSecrets(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, nil)
	open(t, b, assets.DemoOrigin+"login.html")
	typeInto(t, b, "#username", "alice", false)
	typeInto(t, b, "#password", "hunter2", false)
	typeInto(t, b, "#otp", "424242", false)
	typeInto(t, b, "#api-token", "tok_live_123", false)
	click(t, b, "#remember")
	screenshot(t, b, "login")

	shot, err := layoutPage(testCtx(t), b.controlled.page, DefaultViewport)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	var all strings.Builder
	for _, line := range shot.lines {
		for _, it := range line {
			all.WriteString(it.text)
			if it.control != nil {
				labels = append(labels, it.control.label)
				all.WriteString(it.control.label)
			}
		}
	}
	for _, secret := range []string{"hunter2", "424242", "tok_live_123"} {
		if strings.Contains(all.String(), secret) {
			t.Errorf("the screenshot draws the secret %q", secret)
		}
	}
	for _, want := range []string{"alice", "•••••••", "••••••", "••••••••••••", "Sign in"} {
		if !containsString(labels, want) {
			t.Errorf("no control shows %q; controls: %q", want, labels)
		}
	}
	if strings.Contains(all.String(), "Debug") || strings.Contains(all.String(), "Signing you in") {
		t.Error("the screenshot draws hidden elements")
	}
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestToASCII(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain":          "plain",
		"café naïve":     "cafe naive",
		"“quoted” — yes": `"quoted" - yes`,
		"a…":             "a...",
		"• item":         "• item",
		"日本":             "\uFFFD\uFFFD",
	} {
		if got := toASCII(in); got != want {
			t.Errorf("toASCII(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWrapBreaksAtSpaces(t *testing.T) {
	t.Parallel()
	lines := [][]shotItem{{{text: "aaaa bbbb cccc"}}, {{text: strings.Repeat("x", 25)}}}
	rows := wrap(lines, 10*glyphW)
	var got []string
	for _, r := range rows {
		var b strings.Builder
		for _, p := range r.items {
			b.WriteString(p.text)
		}
		got = append(got, b.String())
	}
	want := []string{"aaaa bbbb ", "cccc", "xxxxxxxxxx", "xxxxxxxxxx", "xxxxx"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("rows = %q, want %q", got, want)
	}
}

// TestWriteDemoScreenshots only draws the demo site's pages into -shot-dir,
// for a person to look at how the screenshots read.
func TestWriteDemoScreenshots(t *testing.T) {
	t.Parallel()
	if *shotDir == "" {
		t.Skip("set -shot-dir to write the demo site's screenshots")
	}
	b := newTestBrowser(t, Options{}, nil)
	for name, path := range map[string]string{
		"demo-index": "", "demo-forms": "forms.html", "demo-table": "table.html",
		"demo-search": "search?q=sea", "demo-notes": "notes.txt",
	} {
		open(t, b, assets.DemoOrigin+path)
		screenshot(t, b, name)
	}
}
