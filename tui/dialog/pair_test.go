package dialog

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/tui/theme"
)

// TestPairCopySaysSentNotCopied: OSC 52 gets no answer, so after c the
// card says the token was sent to the clipboard, never that it arrived,
// and where to find it when the paste is empty.
func TestPairCopySaysSentNotCopied(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	p := NewPair(theme.New(true, true), 52789, token, "connected")
	if a := p.HandleKey(press("c")); a.Kind != Copy || a.Text != token {
		t.Fatalf("c answered %+v, want a Copy of the token", a)
	}
	view := ansi.Strip(p.View(80, 30))
	if strings.Contains(view, "copied") {
		t.Errorf("the card claims the token was copied:\n%s", view)
	}
	if !strings.Contains(view, "token sent to the terminal's clipboard (OSC 52)") || !strings.Contains(view, "infer pair --show-token") {
		t.Errorf("the card does not say the token was sent, and where else to get it:\n%s", view)
	}
	if strings.Contains(view, token) {
		t.Errorf("the card shows the token in full:\n%s", view)
	}
}
