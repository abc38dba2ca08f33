package toolfmt

import (
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

func TestShort(t *testing.T) {
	for _, tc := range []struct{ name, args, want string }{
		{"Bash", `{"command":"ls\n -la"}`, "ls -la"},
		{"BrowserNavigate", `{"url":"https://x"}`, "https://x"},
		{"BrowserType", `{"text":"hi","selector":"#q","press_enter":true}`, `"hi" into #q ⏎`},
		{"BrowserRead", `{}`, "whole page"},
		{"Edit", `{"path":"a.go","old_string":"x"}`, "a.go"},
		{"Custom", `{"b":"2","a":"1","n":3}`, "a=1 b=2"},
		{"Bash", `not json`, "not json"},
	} {
		if got := Short(tc.name, tc.args); got != tc.want {
			t.Errorf("Short(%s, %s) = %q, want %q", tc.name, tc.args, got, tc.want)
		}
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		820 * time.Millisecond: "820ms", 4200 * time.Millisecond: "4.2s", 65 * time.Second: "1m05s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}

// A summary cut to fit keeps whole words and, above all, a path's file
// name: "…/20260902-140305.png", never "artifacts/screensh…".
func TestFitCutsAtSensiblePlaces(t *testing.T) {
	const shot = "Screenshot of Example Domain (https://example.com/) saved to artifacts/screenshots/20260902-140305.png (320×200 PNG, 1234 bytes)."
	for _, tc := range []struct {
		s    string
		w    int
		want string
	}{
		{"short enough", 20, "short enough"},
		{shot, 200, shot},
		{shot, 100, "Screenshot of Example Domain (https://example.com/) saved to …/20260902-140305.png (320×200 PNG, …"},
		{shot, 90, "Screenshot of Example Domain (https://example.com/) saved to …/20260902-140305.png …"},
		{shot, 60, "Screenshot of Example Domain (https://example.com/) saved …"},
		{"read (/home/me/src/project/main.go).", 20, "read (…/main.go)."},
		{"https://example.com/a/very/long/path/index.html is open", 30, "https://example.com/a/very/lo…"},
		{"aVeryLongWordWithNoSpacesAtAll", 10, "aVeryLong…"},
		{"x y", 1, "x"},
		{"anything", 0, ""},
	} {
		got := Fit(tc.s, tc.w)
		if got != tc.want {
			t.Errorf("Fit(%q, %d) = %q, want %q", tc.s, tc.w, got, tc.want)
		}
		if n := ansi.StringWidth(got); n > tc.w {
			t.Errorf("Fit(%q, %d) is %d cells", tc.s, tc.w, n)
		}
	}
}
