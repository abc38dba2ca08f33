package chrome

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
)

// A page's alert(), confirm() or prompt() stops its scripts, and
// Chromium's with them, until someone answers: a command evaluating
// page.js, and every later one, would wait out its whole budget. A careful
// extension answers the dialog at once as browser.DialogAccepts says (OK
// for an alert, Cancel for a confirm or prompt) and reports it in the
// result's events, as the Playwright and chrome-devtools MCP servers
// report theirs; that is what this browser does. The real extension
// (opentask) leaves it open, which infer's timeout message allows for.

// dialogLog collects the dialogs a tab answered until a command takes
// them.
type dialogLog struct {
	mu   sync.Mutex
	seen []browser.DialogEvent
}

func (l *dialogLog) add(d browser.DialogEvent) {
	l.mu.Lock()
	l.seen = append(l.seen, d)
	l.mu.Unlock()
}

// take returns the dialogs answered since the last take. A dialog a page
// opens between commands (a timer's alert) goes with the next command.
func (l *dialogLog) take() []browser.DialogEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := l.seen
	l.seen = nil
	return seen
}

// answerDialogs answers every JavaScript dialog of tab t as it opens and
// logs it. The answer is sent from a goroutine of its own: the listener
// runs on the tab's event loop, which must not wait on the browser.
func (b *Browser) answerDialogs(t *tab) {
	err := chromedp.Listen(t.ctx, func(ev any) {
		e, ok := ev.(*page.EventJavascriptDialogOpening)
		if !ok {
			return
		}
		kind := string(e.Type)
		accept := browser.DialogAccepts(kind)
		d := browser.DialogEvent{Type: browser.DialogEventType, Dialog: kind, Message: e.Message, Answer: browser.DialogDismissed}
		if accept {
			d.Answer = browser.DialogAccepted
		}
		t.dialogs.add(d)
		b.bg.Go(func() {
			_, err := chromedp.Call(t.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: accept})
			if err != nil && t.ctx.Err() == nil {
				b.log.Warn("chrome: answering a JavaScript dialog", "dialog", kind, "err", err)
			}
		})
		b.log.Info("chrome: answered a JavaScript dialog", "dialog", kind, "answer", d.Answer)
	})
	if err != nil {
		b.log.Warn("chrome: JavaScript dialogs will not be answered", "err", err)
	}
}

// withDialogs puts the dialogs answered during a command in its result:
// as events, and in its error when it failed, since an error result's
// events may not be read.
func withDialogs(res wire.BrowserResult, dialogs []browser.DialogEvent) wire.BrowserResult {
	if len(dialogs) == 0 {
		return res
	}
	var said []string
	for _, d := range dialogs {
		raw, err := json.Marshal(d)
		if err != nil {
			continue
		}
		res.Events = append(res.Events, raw)
		said = append(said, d.String())
	}
	if res.Error != "" {
		res.Error += " (" + strings.Join(said, " ") + ")"
	}
	return res
}
