package browser

import (
	"encoding/json"
	"fmt"
	"strings"
)

// DialogEvent is the notice a browser puts in a result's events when a
// page opened a JavaScript dialog (alert, confirm, prompt, beforeunload)
// and the browser answered it. A dialog the browser leaves open blocks the
// page: every later click, read and screenshot waits on it until the
// command's budget runs out, so a careful extension answers it at once and
// says so; the model then learns what the page wanted to tell the person.
// The contract leaves events free-form; this is their shape for dialogs,
// {"type": "dialog", "dialog": "alert", "message": "…", "answer": "accepted"}.
type DialogEvent struct {
	// Type is always "dialog".
	Type string `json:"type"`
	// Dialog is the kind: "alert", "confirm", "prompt" or "beforeunload".
	Dialog string `json:"dialog"`
	// Message is the text the page showed.
	Message string `json:"message"`
	// Answer is "accepted" (OK, or Leave for beforeunload) or "dismissed"
	// (Cancel).
	Answer string `json:"answer"`
}

// DialogEventType is DialogEvent.Type.
const DialogEventType = "dialog"

// Dialog answers.
const (
	DialogAccepted  = "accepted"
	DialogDismissed = "dismissed"
)

// DialogAccepts is how a browser that answers dialogs itself answers a
// dialog of kind: an alert has only OK, and leaving a page is what the
// navigate that triggered beforeunload asked for; a confirm or prompt is
// cancelled, since OK may commit something only the person should.
func DialogAccepts(kind string) bool {
	return kind == "alert" || kind == "beforeunload"
}

// Dialogs returns the dialog events among events, in order; others
// (console lines, unknown notices) are skipped.
func Dialogs(events []string) []DialogEvent {
	var out []DialogEvent
	for _, raw := range events {
		var d DialogEvent
		if json.Unmarshal([]byte(raw), &d) == nil && d.Type == DialogEventType && d.Dialog != "" {
			out = append(out, d)
		}
	}
	return out
}

// maxDialogMessage bounds how much of a dialog's text is repeated: a page
// chooses it, and it goes to the model.
const maxDialogMessage = 300

// String describes the dialog for the model and the person: `The page
// showed an alert "Saved!", which the browser accepted.`
func (d DialogEvent) String() string {
	msg := []rune(strings.TrimSpace(d.Message))
	cut := ""
	if len(msg) > maxDialogMessage {
		msg, cut = msg[:maxDialogMessage], "…"
	}
	kind := d.Dialog
	article := "a"
	if strings.ContainsAny(kind[:1], "aeiou") {
		article = "an"
	}
	answer := d.Answer
	if answer == "" {
		answer = "answered"
	}
	if len(msg) == 0 {
		return fmt.Sprintf("The page showed %s %s dialog, which the browser %s.", article, kind, answer)
	}
	return fmt.Sprintf("The page showed %s %s dialog %q, which the browser %s.", article, kind, string(msg)+cut, answer)
}
