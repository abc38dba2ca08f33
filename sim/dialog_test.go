package sim

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/internal/infertest"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/tools"
)

// dialogBrowser answers every command as a browser that met an alert on
// the way and accepted it.
type dialogBrowser struct{ Minimal }

func (b *dialogBrowser) Do(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult {
	res := b.Minimal.Do(ctx, cmd)
	ev, _ := json.Marshal(browser.DialogEvent{Type: browser.DialogEventType, Dialog: "alert", Message: "Saved!", Answer: browser.DialogAccepted})
	res.Events = append(res.Events, ev)
	return res
}

// connectTo runs a client with browser b (and faults f) against in.
func connectTo(t *testing.T, in *infertest.Infer, b Browser, f *Faults) {
	t.Helper()
	c := NewClient(ClientOptions{URL: in.URL, Token: in.Token, Browser: b, Faults: f, MinBackoff: 10 * time.Millisecond})
	runClient(t, c)
	if err := c.WaitConnected(ctxGuard(t)); err != nil {
		t.Fatal(err)
	}
}

// TestDialogEventsReachTheModel: a dialog the browser reports in a
// result's events is named in the tool's result, with its text and how it
// was answered.
func TestDialogEventsReachTheModel(t *testing.T) {
	t.Parallel()
	in := infertest.Start(t, infertest.Options{Mode: tools.Auto})
	connectTo(t, in, &dialogBrowser{}, nil)
	for _, call := range []struct{ name, args string }{
		{"BrowserNavigate", `{"url":"https://example.com/"}`},
		{"BrowserClick", `{"selector":"#save"}`},
		{"BrowserRead", `{}`},
	} {
		out := in.Workspace.RunTool(ctxGuard(t), "t-"+call.name, call.name, call.args, tools.OriginTerminal)
		if !out.Success || !strings.Contains(out.Output, `The page showed an alert dialog "Saved!", which the browser accepted.`) {
			t.Errorf("%s: %+v", call.name, out)
		}
	}
}

// TestTimedOutCommandNamesADialog: an extension that leaves a page's
// alert() open never answers; the error says a dialog may be the cause and
// what to do, where it once said only that the browser did not answer.
func TestTimedOutCommandNamesADialog(t *testing.T) {
	t.Parallel()
	in := infertest.Start(t, infertest.Options{Mode: tools.Auto, CommandTimeout: 200 * time.Millisecond})
	connectTo(t, in, &Minimal{}, &Faults{DropResults: 1})
	out := in.Workspace.RunTool(ctxGuard(t), "t1", "BrowserClick", `{"selector":"#save"}`, tools.OriginTerminal)
	if out.Success {
		t.Fatalf("a command nobody answers succeeded: %+v", out)
	}
	for _, want := range []string{"did not answer in time", "JavaScript dialog (alert, confirm or prompt)", "close any dialog in the browser"} {
		if !strings.Contains(out.Output, want) {
			t.Errorf("the error %q does not say %q", out.Output, want)
		}
	}
}
