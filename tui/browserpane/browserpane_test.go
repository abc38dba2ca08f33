package browserpane

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/tui/theme"
)

func TestPageFollowsTheControlledTab(t *testing.T) {
	m := New(theme.New(true, true), 0)
	m.SetSize(60, 20)
	m.SetTabs([]browser.Tab{{Title: "Old", URL: "https://old", Controlled: true}, {Title: "Other", URL: "https://other"}})
	m.SetPage("https://new.example/", "New page")
	v := m.View()
	if !strings.Contains(v, "page New page — https://new.example/") {
		t.Fatalf("the page line is missing:\n%s", v)
	}
	if !strings.Contains(v, "▶  New page") || strings.Contains(v, "Old") || !strings.Contains(v, "Other") {
		t.Fatalf("the controlled tab should follow the page, the others stay:\n%s", v)
	}
}

// TestPageFollowsAFreshTabList: a tab list that marks the controlled tab
// is newer than the page line, which follows it; a list without the mark
// (opentask 1.12.1 sends none) leaves the page line as it was.
func TestPageFollowsAFreshTabList(t *testing.T) {
	m := New(theme.New(true, true), 0)
	m.SetSize(60, 20)
	m.SetPage("http://demo.infer.localhost/", "Tidewater Library")
	m.SetTabs([]browser.Tab{{Title: "Docs", URL: "https://docs.example/", Controlled: true}})
	if v := m.View(); !strings.Contains(v, "page Docs — https://docs.example/") {
		t.Fatalf("the controlled tab's page is not shown:\n%s", v)
	}
	m.SetTabs([]browser.Tab{{Title: "Docs", URL: "https://docs.example/", Active: true}})
	if v := m.View(); !strings.Contains(v, "page Docs — https://docs.example/") {
		t.Fatalf("a list without the mark must not clear the page line:\n%s", v)
	}
}

func TestOffShowsWhyInsteadOfPairing(t *testing.T) {
	m := New(theme.New(true, true), 0)
	m.SetSize(60, 12)
	m.SetOff("~/.infer/browser_use.yaml does not exist: run `infer init`, then start infer again.")
	v := m.View()
	if !strings.Contains(v, "○ browser use is off") || !strings.Contains(v, "does not exist: run `infer") || strings.Contains(v, "infer pair") {
		t.Fatalf("view:\n%s", v)
	}
	if !m.Off() {
		t.Fatal("Off")
	}
}

func TestDecodePreviewRefusesBadBytes(t *testing.T) {
	if _, err := DecodePreview(nil); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("empty: %v", err)
	}
	if _, err := DecodePreview([]byte("not an image")); err == nil || !strings.Contains(err.Error(), "decoding the screenshot") {
		t.Fatalf("garbage: %v", err)
	}
	img := image.NewRGBA(image.Rect(0, 0, 1000, 500))
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	p, err := DecodePreview(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if b := p.Bounds(); b.Dx() != previewMax || b.Dy() != previewMax/2 {
		t.Fatalf("preview %v keeps the aspect within %d px", b, previewMax)
	}
}

func TestScreenshotErrorIsShown(t *testing.T) {
	m := New(theme.New(true, true), 0)
	m.SetSize(60, 20)
	m.SetScreenshot(nil, "https://a.example/", time.Date(2026, 9, 2, 14, 3, 5, 0, time.UTC), errors.New("decoding the screenshot: bad"))
	v := m.View()
	if !strings.Contains(v, "Screenshot · 14:03:05 · https://a.example/") || !strings.Contains(v, "⚠ decoding the screenshot: bad") {
		t.Fatalf("view:\n%s", v)
	}
}

func TestHalfBlocksDrawTopAndBottomPixels(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for y := 0; y < 4; y++ {
		for x := 0; x < 4; x++ {
			c := color.RGBA{255, 0, 0, 255} // red top half
			if y >= 2 {
				c = color.RGBA{0, 0, 255, 255} // blue bottom half
			}
			img.SetRGBA(x, y, c)
		}
	}
	lines := HalfBlocks(img, 4, 2)
	if len(lines) != 2 {
		t.Fatalf("%d rows for 4 pixel rows", len(lines))
	}
	for _, l := range lines {
		if ansi.StringWidth(l) != 4 || strings.Count(l, "▀") != 4 {
			t.Fatalf("row %q", l)
		}
	}
	if !strings.Contains(lines[0], "38;2;255;0;0;48;2;255;0;0m▀") {
		t.Fatalf("top row should be red over red: %q", lines[0])
	}
	if !strings.Contains(lines[1], "38;2;0;0;255;48;2;0;0;255m▀") {
		t.Fatalf("bottom row should be blue over blue: %q", lines[1])
	}
	if s := Shades(img, 4, 2); len(s) != 2 || strings.Contains(strings.Join(s, ""), "\x1b") {
		t.Fatalf("shades %q", s)
	}
}

func TestViewFitsAndMarksTabs(t *testing.T) {
	m := New(theme.New(true, false), 52789)
	m.SetSize(50, 20)
	m.SetTabs([]browser.Tab{{Title: "A", URL: "https://a", Controlled: true}, {Title: "B", URL: "https://b", Active: true}})
	m.SetStatus(browser.Status{State: browser.Connected})
	lines := strings.Split(m.View(), "\n")
	if len(lines) != 20 {
		t.Fatalf("%d lines", len(lines))
	}
	v := ansi.Strip(m.View())
	if !strings.Contains(v, "▶  A") || !strings.Contains(v, " • B") {
		t.Fatalf("controlled and focused tabs are marked by symbols:\n%s", v)
	}
}

// TestPairingHintsPointToSlashPair: the pane names this infer's port and
// /pair, which shows it; `infer pair` reads browser_use.yaml's port, which
// --port may have overridden, and could report another infer's extension.
func TestPairingHintsPointToSlashPair(t *testing.T) {
	m := New(theme.New(true, true), 44219)
	m.SetSize(60, 14)
	v := ansi.Strip(m.View())
	if !strings.Contains(v, "type /pair (port 44219)") || strings.Contains(v, "infer pair") {
		t.Fatalf("waiting:\n%s", v)
	}
	m.SetStatus(browser.Status{State: browser.Disconnected, Reason: "replaced by a newer connection"})
	v = ansi.Strip(m.View())
	if !strings.Contains(v, "if not, type /pair.") || strings.Contains(v, "infer pair") {
		t.Fatalf("disconnected:\n%s", v)
	}
}

// TestFlappingIsSaidPlainly: two browsers taking turns show as a warning
// under the connected line, and the warning goes once they stop.
func TestFlappingIsSaidPlainly(t *testing.T) {
	m := New(theme.New(true, true), 52789)
	m.SetSize(60, 14)
	m.SetStatus(browser.Status{State: browser.Connected, ExtensionVersion: "1.12.1", Flapping: 12})
	v := ansi.Strip(m.View())
	flat := strings.Join(strings.Fields(strings.ReplaceAll(v, "│", " ")), " ")
	if !strings.Contains(flat, "⚠ two browsers with the extension and this token keep replacing each other (12 times lately), so browser commands are paused: disconnect it in one of them.") {
		t.Fatalf("no flapping warning:\n%s", v)
	}
	m.SetStatus(browser.Status{State: browser.Disconnected, Reason: "replaced by a newer connection", Flapping: 13})
	if v := ansi.Strip(m.View()); !strings.Contains(v, "(13 times lately)") {
		t.Fatalf("no flapping warning while disconnected:\n%s", v)
	}
	m.SetStatus(browser.Status{State: browser.Connected, ExtensionVersion: "1.12.1"})
	if v := ansi.Strip(m.View()); strings.Contains(v, "replacing each other") {
		t.Fatalf("the warning outlived the flapping:\n%s", v)
	}
}

// TestGuestSaysWhoseBrowser: an infer using another's browser says whose
// it is while connected, and stops saying so once it holds the port.
func TestGuestSaysWhoseBrowser(t *testing.T) {
	m := New(theme.New(true, true), 52789)
	m.SetSize(70, 14)
	m.SetStatus(browser.Status{State: browser.Connected, Via: "infer serve in ~/src/app (pid 4242)"})
	flat := strings.Join(strings.Fields(strings.ReplaceAll(ansi.Strip(m.View()), "│", " ")), " ")
	if !strings.Contains(flat, "through infer serve in ~/src/app (pid 4242), which holds the port") {
		t.Fatalf("the pane does not say whose browser it is:\n%s", m.View())
	}
	m.SetStatus(browser.Status{State: browser.Connected})
	if v := ansi.Strip(m.View()); strings.Contains(v, "through") {
		t.Fatalf("the pane still names another holder after taking the port over:\n%s", v)
	}
}
