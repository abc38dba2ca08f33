package browserpane

import (
	"image"
	"image/color"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/tui/theme"
)

func TestParseTabs(t *testing.T) {
	text := "3 open tabs:\n0. Example — Domain — https://example.com/ [controlled, focused]\n1. Docs — https://docs.example.com/\n2. (untitled) — about:blank [focused]\n"
	tabs, ok := ParseTabs(text)
	if !ok || len(tabs) != 3 {
		t.Fatalf("ok %v, %d tabs", ok, len(tabs))
	}
	want := []browser.Tab{
		{Index: 0, Title: "Example — Domain", URL: "https://example.com/", Controlled: true, Active: true},
		{Index: 1, Title: "Docs", URL: "https://docs.example.com/"},
		{Index: 2, Title: "", URL: "about:blank", Active: true},
	}
	for i := range want {
		if tabs[i] != want[i] {
			t.Errorf("tab %d: %+v, want %+v", i, tabs[i], want[i])
		}
	}
	if tabs, ok := ParseTabs("No tabs are open."); !ok || len(tabs) != 0 {
		t.Fatal("no tabs is a valid list")
	}
	if _, ok := ParseTabs("no browser extension is connected"); ok {
		t.Fatal("an error text is not a tab list")
	}
}

func TestScreenshotPath(t *testing.T) {
	text := "Screenshot of Example (https://example.com/) saved to /home/p/.infer/projects/x/artifacts/screenshots/20260902-1.png (800×600 PNG, 5 bytes). Show it to the person with ![screenshot](/artifacts/screenshots/20260902-1.png)."
	if got := ScreenshotPath(text); got != "/home/p/.infer/projects/x/artifacts/screenshots/20260902-1.png" {
		t.Fatalf("path %q", got)
	}
	if got := ScreenshotPath("the browser returned an empty screenshot; try again"); got != "" {
		t.Fatalf("no path, got %q", got)
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
