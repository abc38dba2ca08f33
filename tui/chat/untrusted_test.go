package chat

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestNeutralizeRefs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"no refs", "no refs"},
		{"a &amp; b &lt; c &copy; &#169; &#x1F389; &Tab; &#10;", "a &amp; b &lt; c &copy; &#169; &#x1F389; &Tab; &#10;"},
		{"&#27;[8m hidden &#x1b;[0m", `\x1b[8m hidden \x1b[0m`},
		{"&#0000027; &#X1B; &#7; &#13; &#x9b; &#x85;", `\x1b \x1b \a \r \u009b \u0085`},
		{"&#x202e;evil&#x202C; &lrm;&rlm; &#1564; &#x2066;", `\u202eevil\u202c \u200e\u200f \u061c \u2066`},
		{"`&#27;` in code too", "`\\x1b` in code too"},
		// Not references, or ones Markdown makes U+FFFD of: left alone.
		{"&#; &#x; &#12345678; &#x1234567; &#0; &#xd800; &LRM; &rlm &#27", "&#; &#x; &#12345678; &#x1234567; &#0; &#xd800; &LRM; &rlm &#27"},
		{"&&#27;&", `&\x1b&`},
	} {
		if got := neutralizeRefs(tc.in); got != tc.want {
			t.Errorf("neutralizeRefs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestExpandTabs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"none", "none"},
		{"\tx", "    x"},
		{"a\tb\tc", "a   b   c"},
		{"abcd\te", "abcd    e"},
		{"日本\tx", "日本    x"}, // two wide characters fill a tab stop
		{"a\tb\n\tc", "a   b\n    c"},
		{"\x1b[1mab\x1b[m\tc", "\x1b[1mab\x1b[m  c"}, // styles take no cells
	} {
		if got := expandTabs(tc.in); got != tc.want {
			t.Errorf("expandTabs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Wrap("col\tumn", 20); len(got) != 1 || got[0] != "col umn" {
		t.Errorf("Wrap drops or keeps the tab: %q", got)
	}
}

// TestMarkdownRendersHostileTextInert: whatever the source holds, what
// Glamour returns has only its own styling; the rest is shown escaped.
func TestMarkdownRendersHostileTextInert(t *testing.T) {
	md := newMarkdown("dark")
	src := "# T\x1b]0;x\x07itle\n\nraw \x1b[8mhid\x1b[0m &#27;[8mref &rlm;mark\r\n\n" +
		"- item \u009b2J\n\n```\ncode\t\x1b[31mred\u202e\n```\n\n[link](http://e/\x1b[8m)"
	lines := md.Render(src, 60)
	out := strings.Join(lines, "\n")
	// (A BEL may end Glamour's own OSC 8 hyperlinks, so it is not looked
	// for; the title's OSC is.)
	for _, bad := range []string{"\x1b[8m", "\x1b[31m", "\x1b]0;", "\u009b", "\u202e", "\u200f", "\r", "\t"} {
		if strings.Contains(out, bad) {
			t.Errorf("rendered Markdown holds %q:\n%q", bad, out)
		}
	}
	text := ansi.Strip(out)
	for _, want := range []string{`T\x1b]0;x\aitle`, `raw \x1b[8mhid\x1b[0m \x1b[8mref \u200fmark\r`, `item \u009b2J`, `code    \x1b[31mred\u202e`} {
		if !strings.Contains(text, want) {
			t.Errorf("rendered Markdown lacks %q:\n%s", want, text)
		}
	}
	// Ordinary text comes through.
	if got := ansi.Strip(strings.Join(md.Render("Grüße 日本語 🎉👩‍💻", 60), "\n")); !strings.Contains(got, "Grüße 日本語 🎉👩‍💻") {
		t.Errorf("ordinary text changed: %q", got)
	}
}
