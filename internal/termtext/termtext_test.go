package termtext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// ordinary is text that must come through every form byte for byte:
// accents, CJK (two cells wide), emoji with a ZWJ sequence and a flag, a
// combining mark, the replacement character itself, and backslash escapes
// written as text.
const ordinary = "Grüße, ça va? 日本語のテキスト 🎉👩‍💻🇫🇷 e\u0301 «quotes» \ufffd \\x1b-as-text ‹›"

func TestOrdinaryTextUnchanged(t *testing.T) {
	for _, s := range []string{"", "plain ascii ~!@#$%^&*()", ordinary} {
		for name, f := range forms {
			if got := f(s); got != s {
				t.Errorf("%s(%q) = %q, want it unchanged", name, s, got)
			}
		}
	}
	// Newline and tab are the text's own layout where the form keeps it.
	layout := "col1\tcol2\nrow2\t日本\n"
	if got := Text(layout); got != layout {
		t.Errorf("Text(%q) = %q", layout, got)
	}
	if got := Stream(layout); got != layout {
		t.Errorf("Stream(%q) = %q", layout, got)
	}
	if got, want := Line(layout), `col1\tcol2\nrow2\t日本\n`; got != want {
		t.Errorf("Line(%q) = %q, want %q", layout, got, want)
	}
}

var forms = map[string]func(string) string{"Text": Text, "Line": Line, "Stream": Stream}

func TestSequencesAreShownNotActedOn(t *testing.T) {
	cases := []struct{ name, in, want string }{
		// 7-bit forms: ESC is escaped, the rest of the sequence stays as
		// text, so nothing is hidden and nothing acts.
		{"CSI conceal", "echo hello \x1b[8m&& touch X\x1b[0m", `echo hello \x1b[8m&& touch X\x1b[0m`},
		{"CSI clear", "a\x1b[2Jb", `a\x1b[2Jb`},
		{"CSI cursor", "x\x1b[1A\x1b[2K", `x\x1b[1A\x1b[2K`},
		{"OSC title BEL", "\x1b]0;pwned\x07", `\x1b]0;pwned\a`},
		{"OSC 52 ST", "\x1b]52;c;ZXZpbA==\x1b\\", `\x1b]52;c;ZXZpbA==\x1b\`},
		{"OSC 8 link", "\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", `\x1b]8;;http://evil\x1b\click\x1b]8;;\x1b\`},
		{"DCS", "\x1bPtmux;\x1b\x1b]0;x\x07\x1b\\", `\x1bPtmux;\x1b\x1b]0;x\a\x1b\`},
		{"APC", "\x1b_Gf=100;AAAA\x1b\\", `\x1b_Gf=100;AAAA\x1b\`},
		{"PM", "\x1b^private\x1b\\", `\x1b^private\x1b\`},
		{"SOS", "\x1bXstring\x1b\\", `\x1bXstring\x1b\`},
		{"ESC Fs reset", "\x1bc", `\x1bc`},
		// 8-bit (C1) forms, as UTF-8 characters.
		{"C1 CSI", "\u009b31m", `\u009b31m`},
		{"C1 OSC", "\u009d0;t\u009c", `\u009d0;t\u009c`},
		{"C1 DCS APC PM SOS", "\u0090\u009f\u009e\u0098", `\u0090\u009f\u009e\u0098`},
		{"C1 NEL", "a\u0085b", `a\u0085b`},
		// 8-bit forms as raw bytes (not UTF-8).
		{"raw C1 byte", "a\x9b2Jb", `a\x9b2Jb`},
		{"invalid and cut UTF-8", "\xff\xfe \xe6\x97", `\xff\xfe \xe6\x97`},
	}
	for _, c := range cases {
		for name, f := range forms {
			got := f(c.in)
			if got != c.want {
				t.Errorf("%s: %s(%q) = %q, want %q", c.name, name, c.in, got, c.want)
			}
			assertInert(t, name+" "+c.name, got, name != "Line")
		}
	}
}

func TestControlCharacters(t *testing.T) {
	cases := []struct{ in, text, line, stream string }{
		{"bell\x07", `bell\a`, `bell\a`, `bell\a`},
		{"nul\x00del\x7f", `nul\x00del\x7f`, `nul\x00del\x7f`, `nul\x00del\x7f`},
		{"bs\bvt\vff\f", `bs\bvt\vff\f`, `bs\bvt\vff\f`, `bs\bvt\vff\f`},
		{"so\x0esi\x0fsub\x1a", `so\x0esi\x0fsub\x1a`, `so\x0esi\x0fsub\x1a`, `so\x0esi\x0fsub\x1a`},
		// The carriage return: always visible in Text and Line; Stream
		// keeps a CRLF line end only.
		{"over\rwrite", `over\rwrite`, `over\rwrite`, `over\rwrite`},
		{"crlf\r\n", "crlf\\r\n", `crlf\r\n`, "crlf\r\n"},
		{"cr\r\r\n", "cr\\r\\r\n", `cr\r\r\n`, "cr\\r\r\n"},
		{"end\r", `end\r`, `end\r`, `end\r`},
	}
	for _, c := range cases {
		if got := Text(c.in); got != c.text {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.text)
		}
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := Stream(c.in); got != c.stream {
			t.Errorf("Stream(%q) = %q, want %q", c.in, got, c.stream)
		}
	}
	// Every C0 and C1 control but newline and tab, one by one.
	for r := rune(0); r <= 0x9f; r++ {
		if r >= 0x20 && r < 0x7f {
			continue
		}
		s := "<" + string(r) + ">"
		want := r == '\n' || r == '\t'
		if got := Text(s) == s; got != want {
			t.Errorf("Text(%q) = %q: kept %v, want %v", s, Text(s), got, want)
		}
		if Line(s) == s {
			t.Errorf("Line(%q) kept the control", s)
		}
	}
}

func TestBidiControlsAreShown(t *testing.T) {
	bidi := []rune{0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c}
	for _, r := range bidi {
		in := "rm -rf " + string(r) + "x"
		for name, f := range forms {
			got := f(in)
			if strings.ContainsRune(got, r) || !strings.Contains(got, `\u`) {
				t.Errorf("%s(%q) = %q: the bidi control %U is not escaped", name, in, got, r)
			}
		}
	}
	if got, want := Text("a\u202eevil\u202c"), `a\u202eevil\u202c`; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
	// Neighbours of the bidi ranges are ordinary text: the joiners emoji
	// need, the zero-width non-joiner, Arabic letters.
	for _, s := range []string{"\u200d", "\u200c", "\u2060", "\u2065", "\u206a", "\u2029", "عربي", "\u061b"} {
		if got := Text(s); got != s {
			t.Errorf("Text(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestCleanStringIsNotCopied(t *testing.T) {
	s := strings.Repeat(ordinary, 10)
	if n := testing.AllocsPerRun(10, func() { _ = Text(s) }); n != 0 {
		t.Errorf("Text of clean text allocates %v times", n)
	}
}

// assertInert fails when out holds anything a terminal would act on.
func assertInert(t *testing.T, what, out string, keepLayout bool) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s: not valid UTF-8: %q", what, out)
	}
	for i, r := range out {
		if keepLayout && (r == '\n' || r == '\t') {
			continue
		}
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) || isBidiControl(r) {
			t.Errorf("%s: raw %U at byte %d in %q", what, r, i, out)
			return
		}
	}
}

func FuzzForms(f *testing.F) {
	for _, s := range []string{ordinary, "\x1b[8mx\x1b[0m", "a\r\nb\rc", "\xff\u202e\u009b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, fn := range forms {
			out := fn(s)
			if name == "Stream" {
				// The one raw \r Stream keeps ends a line.
				out = strings.ReplaceAll(out, "\r\n", "\n")
			}
			assertInert(t, name, out, name != "Line")
			if name == "Line" && strings.ContainsAny(out, "\n\t") {
				t.Errorf("Line(%q) = %q keeps layout", s, out)
			}
		}
	})
}
