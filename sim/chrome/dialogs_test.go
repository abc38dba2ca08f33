package chrome

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
)

// dialogsPage opens each kind of dialog from a button, and shows what the
// page got back.
const dialogsPage = `<!doctype html><title>Dialogs</title>
<button id="save" onclick="alert('Saved!'); document.getElementById('out').textContent = 'after alert'">Save</button>
<button id="delete" onclick="document.getElementById('out').textContent = confirm('Delete everything?') ? 'deleted' : 'kept'">Delete</button>
<button id="name" onclick="document.getElementById('out').textContent = 'name: ' + prompt('Your name?', 'Ada')">Name</button>
<p id="out">nothing yet</p>`

func dialogsOf(t *testing.T, res wire.BrowserResult) []browser.DialogEvent {
	t.Helper()
	var raw []string
	for _, e := range res.Events {
		raw = append(raw, string(e))
	}
	return browser.Dialogs(raw)
}

// TestDialogsAreAnsweredAndReported: a click on a button that calls
// alert() completes (it once waited out its 30 s, and the next read and
// screenshot with it), and its result names the dialog; a confirm and a
// prompt are cancelled, so the page commits nothing the person did not.
func TestDialogsAreAnsweredAndReported(t *testing.T) {
	b := newBrowser(t, Options{})
	mustDo(t, b, wire.BrowserCommand{Action: browser.Navigate, URL: site.URL + "/dialogs.html"})
	for _, c := range []struct {
		button string
		want   browser.DialogEvent
		after  string
	}{
		{"#save", browser.DialogEvent{Type: "dialog", Dialog: "alert", Message: "Saved!", Answer: "accepted"}, "after alert"},
		{"#delete", browser.DialogEvent{Type: "dialog", Dialog: "confirm", Message: "Delete everything?", Answer: "dismissed"}, "kept"},
		{"#name", browser.DialogEvent{Type: "dialog", Dialog: "prompt", Message: "Your name?", Answer: "dismissed"}, "name: null"},
	} {
		res := mustDo(t, b, wire.BrowserCommand{Action: browser.Click, Selector: c.button})
		if got := dialogsOf(t, res); !slices.Equal(got, []browser.DialogEvent{c.want}) {
			raw, _ := json.Marshal(res.Events)
			t.Errorf("click %s: dialogs %+v (events %s), want %+v", c.button, got, raw, c.want)
		}
		if out := read(t, b, "#out"); out == nil || *out != c.after {
			t.Errorf("after %s the page shows %v, want %q", c.button, out, c.after)
		}
	}
	// Nothing is left open: a screenshot and a read work, and report no
	// dialog of their own.
	shot := mustDo(t, b, wire.BrowserCommand{Action: browser.Screenshot})
	if shot.Image == "" || len(dialogsOf(t, shot)) != 0 {
		t.Errorf("screenshot after the dialogs: image %d bytes, events %s", len(shot.Image), shot.Events)
	}
	if out := read(t, b, "title"); out == nil || !strings.Contains(*out, "Dialogs") {
		t.Errorf("title %v", out)
	}
}
