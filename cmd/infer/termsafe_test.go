package main

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostileText holds what a terminal must never receive raw: an OSC that
// retitles the window ended by BEL, a clear-screen CSI, a colour, an 8-bit
// CSI (U+009B, a C1 control), NEL (U+0085), DEL, a carriage return, and a
// byte that is not UTF-8.
const hostileText = "T\x1b]0;pwned\x07\x1b[2J\x1b[31mRED\u009b2J\u0085\x7f\rX\xffY"

// ordinaryText is text that must come through byte for byte.
const ordinaryText = "Grüße, ça va? 日本語のテキスト 🎉👩‍💻 «quotes» \\x1b-as-text"

// assertTerminalSafe fails when out holds a byte that acts on a terminal:
// a C0 control other than newline and tab, DEL, a C1 control, or invalid
// UTF-8.
func assertTerminalSafe(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s: output is not valid UTF-8: %q", what, out)
	}
	for i, r := range out {
		if r == '\n' || r == '\t' {
			continue
		}
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			t.Errorf("%s: raw control %U at byte %d in %q", what, r, i, out)
			return
		}
	}
}

func TestTermsafeEscapesControls(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, text, line string }{
		{"T\x1b]0;pwned\x07\x1b[2J", `T\x1b]0;pwned\a\x1b[2J`, `T\x1b]0;pwned\a\x1b[2J`},
		{"a\nb\tc", "a\nb\tc", `a\nb\tc`},
		{"crlf\r\n", "crlf\r\n", `crlf\r\n`},
		{"over\rwrite", `over\rwrite`, `over\rwrite`},
		{"cr\r\r\n", "cr\\r\r\n", `cr\r\r\n`},
		{"nul\x00del\x7f", `nul\x00del\x7f`, `nul\x00del\x7f`},
		{"c1\u0085\u009b", `c1\u0085\u009b`, `c1\u0085\u009b`},
		{"raw c1 byte \x9b, bad \xff\xfe, cut \xe6\x97", `raw c1 byte \x9b, bad \xff\xfe, cut \xe6\x97`, `raw c1 byte \x9b, bad \xff\xfe, cut \xe6\x97`},
		{"real replacement char \ufffd", "real replacement char \ufffd", "real replacement char \ufffd"},
		{ordinaryText, ordinaryText, ordinaryText},
		{"", "", ""},
	}
	for _, c := range cases {
		if got := termSafeText(c.in); got != c.text {
			t.Errorf("termSafeText(%q) = %q, want %q", c.in, got, c.text)
		}
		if got := termSafeLine(c.in); got != c.line {
			t.Errorf("termSafeLine(%q) = %q, want %q", c.in, got, c.line)
		}
		assertTerminalSafe(t, "termSafeLine", termSafeLine(c.in))
		if strings.Contains(termSafeLine(c.in), "\n") {
			t.Errorf("termSafeLine(%q) keeps a newline", c.in)
		}
	}
}

// TestTermsafeMatchesRenameConfirmation checks the escapes are the ones %q
// shows in `conversations rename`, minus the quotes %q adds.
func TestTermsafeMatchesRenameConfirmation(t *testing.T) {
	t.Parallel()
	in := "T\x1b]0;pwned\x07\x1b[2J\u009b\n"
	if got, want := `"`+termSafeLine(in)+`"`, fmt.Sprintf("%q", in); got != want {
		t.Fatalf("termSafeLine %s, %%q %s", got, want)
	}
}

// TestTermsafeHeadlessTextOutput runs a Bash command whose output is full
// of terminal escapes through `infer headless` and checks the text output
// shows them escaped on stdout and stderr alike.
func TestTermsafeHeadlessTextOutput(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	hlProject(t)
	// printf writes ESC, BEL, the 8-bit CSI (C1, as UTF-8 \302\233), a byte
	// that is not UTF-8 and ordinary Unicode; the tool line and the model's
	// summary both carry it.
	cmd := `run printf 'A\033[2JB\033[31mRED\007\302\233x\377y Grüße 日本 🎉'`
	out, errOut, code := runHL(t, "", "--mode", "auto", cmd)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%q\nstderr:\n%q", code, out, errOut)
	}
	assertTerminalSafe(t, "headless stdout", out)
	assertTerminalSafe(t, "headless stderr", errOut)
	for _, want := range []string{
		`✓ Bash (`,
		`): A\x1b[2JB\x1b[31mRED\a\u009bx`, // the tool line, escaped
		"- Bash: A\\x1b[2JB",               // the model's summary, escaped
		"Grüße 日本 🎉",                       // ordinary text unchanged
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	// The byte that is not UTF-8 is shown, as \xff or as the replacement
	// character a JSON hop makes of it, never raw.
	if !strings.Contains(out, `x\xffy`) && !strings.Contains(out, "x\ufffdy") {
		t.Errorf("the invalid byte is neither escaped nor replaced:\n%q", out)
	}

	// The machine-readable formats are untouched: JSON still carries the
	// control characters themselves, in its own escapes.
	out, _, code = runHL(t, "", "-o", "json", "--mode", "auto", cmd)
	if code != 0 || !strings.Contains(out, `\u001b[2J`) || strings.Contains(out, `\\x1b`) {
		t.Fatalf("json output changed: exit %d\n%s", code, out)
	}
}

// TestTermsafeTextOutputSink drives textOutput directly with hostile model
// text, reasoning, tool calls, results and approvals.
func TestTermsafeTextOutputSink(t *testing.T) {
	t.Parallel()
	var out, errOut strings.Builder
	o := newTextOutput(&out, &errOut, true)
	steps := []error{
		o.text("m1", "answer "+hostileText+"\n"+ordinaryText),
		o.textEnd("m1"),
		o.reasoning("r1", "thinking "+hostileText),
		o.reasoningEnd("r1"),
		o.toolCall("c1", "Bash\x1b[2J", `{"command":"x"`+"\x07"),
		o.toolResult(toolOutcome{Name: "Bash", OK: true, Output: "\n" + hostileText}),
		o.ended(runEnd{Finished: true, seen: true}),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	assertTerminalSafe(t, "stdout", out.String())
	assertTerminalSafe(t, "stderr", errOut.String())
	for _, want := range []string{
		`answer T\x1b]0;pwned\a\x1b[2J\x1b[31mRED\u009b2J\u0085\x7f\rX\xffY` + "\n" + ordinaryText + "\n",
		`→ Bash\x1b[2J {"command":"x"\a`,
		`✓ Bash: T\x1b]0;pwned\a`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errOut.String(), `thinking T\x1b]0;pwned\a`) {
		t.Errorf("stderr: %q", errOut.String())
	}
}

// TestTextOutputExpandsTabs: a command's output with tabs (columns, as
// printf or git print them) reads as columns on the result line, not as
// \t, which looked like a mistake; other control characters stay escaped.
func TestTextOutputExpandsTabs(t *testing.T) {
	t.Parallel()
	var out, errOut strings.Builder
	o := newTextOutput(&out, &errOut, true)
	if err := o.toolResult(toolOutcome{Name: "Bash", OK: true, Output: "a\tbc\tdef\x07\n"}); err != nil {
		t.Fatal(err)
	}
	if want := "✓ Bash: a       bc      def\\a\n"; out.String() != want {
		t.Errorf("result line %q, want %q", out.String(), want)
	}
	assertTerminalSafe(t, "stdout", out.String())
}
