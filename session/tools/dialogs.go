package tools

import (
	"strings"

	"github.com/infer-workspace/infer/session/browser"
)

// timeoutText is a timed-out browser command's error. A page's alert(),
// confirm() or prompt() blocks it until someone answers, and an extension
// that leaves the dialog open (opentask does) makes this command and every
// later one wait out their budget with no other sign of why: the text
// names that cause and its fix, for the model and the person alike.
const timeoutText = "the browser did not answer in time. The page may be slow or stuck, " +
	"or blocked by a JavaScript dialog (alert, confirm or prompt) waiting for an answer: " +
	"ask the person to close any dialog in the browser, then try again, or take a screenshot to see the page's state"

// withDialogs adds to a browser tool's text the JavaScript dialogs the
// browser reports having answered during the command, so the model knows
// what the page said and that, say, a confirm was cancelled.
func withDialogs(text string, res browser.Result) string {
	ds := browser.Dialogs(res.Events)
	if len(ds) == 0 {
		return text
	}
	var b strings.Builder
	b.WriteString(text)
	for _, d := range ds {
		b.WriteString("\n")
		b.WriteString(d.String())
	}
	return b.String()
}
