package fakebrowser

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
)

// TestOpenTaskRecordingReplay replays the browser commands of the opentask
// 1.12.1 recording (sim/recording/testdata/opentask-1.12.1.jsonl) against a
// reconstruction of its test page, served from memory at the recorded
// address, and compares each result with the extension's recorded frame.
// Results that depended on the page's JavaScript ("clicked 1") or on the
// real browser's other tabs are left out.
func TestOpenTaskRecordingReplay(t *testing.T) {
	t.Parallel()
	// The recorded page handled its form in script, so typing with Enter
	// did not navigate; here the fields sit in a div for the same effect.
	page := strings.Replace(strings.Replace(recordedPage, `<form id="f">`, `<div id="f">`, 1), "</form>", "</div>", 1)
	pages := map[string]string{"/page.html": page, "/page2.html": "<title>Second Page</title><p>two</p>"}
	b := newTestBrowser(t, Options{
		Profile: ProfileOpenTask,
		Hosts:   map[string]http.Handler{"127.0.0.1": fixtures(pages)},
	}, nil)

	steps := []struct {
		cmd  string // the recorded browser_command frame
		want string // the recorded browser_result frame, without its type
	}{
		{`{"id":"a8ab","action":"navigate","url":"http://127.0.0.1:52790/page.html","timeout_ms":30000}`,
			`{"id":"a8ab","url":"http://127.0.0.1:52790/page.html","title":"OTX Test Page","content":"","events":[],"error":""}`},
		{`{"id":"288b","action":"read","selector":"","timeout_ms":30000}`,
			`{"id":"288b","url":"http://127.0.0.1:52790/page.html","title":"OTX Test Page","content":"Hello from the test page\n\nSome visible paragraph text.\n\n    Search\nClick me\nnot clicked\nnot submitted","events":[],"error":""}`},
		{`{"id":"7223","action":"read","selector":"#pw","timeout_ms":30000}`,
			`{"id":"7223","url":"http://127.0.0.1:52790/page.html","title":"OTX Test Page","content":"[redacted]","events":[],"error":""}`},
		{`{"id":"19a0","action":"read","selector":"#apitoken","timeout_ms":30000}`,
			`{"id":"19a0","url":"http://127.0.0.1:52790/page.html","title":"OTX Test Page","content":"[redacted]","events":[],"error":""}`},
		{`{"id":"ce69","action":"read","selector":"#otp","timeout_ms":30000}`,
			`{"id":"ce69","url":"http://127.0.0.1:52790/page.html","title":"OTX Test Page","content":"[redacted]","events":[],"error":""}`},
		{`{"id":"c551","action":"read","selector":"#q","timeout_ms":30000}`,
			`{"id":"c551","url":"http://127.0.0.1:52790/page.html","title":"OTX Test Page","content":"initial","events":[],"error":""}`},
		{`{"id":"ad12","action":"click","selector":"#btn","timeout_ms":30000}`,
			`{"id":"ad12","url":"http://127.0.0.1:52790/page.html","title":"OTX Test Page","content":"","events":[],"error":""}`},
		{`{"id":"0090","action":"type","selector":"#q","text":"hello world","press_enter":true,"timeout_ms":30000}`,
			`{"id":"0090","url":"http://127.0.0.1:52790/page.html","title":"OTX Test Page","content":"","events":[],"error":""}`},
		{`{"id":"8ab1","action":"read","selector":"#q","timeout_ms":30000}`,
			`{"id":"8ab1","url":"http://127.0.0.1:52790/page.html","title":"OTX Test Page","content":"hello world","events":[],"error":""}`},
		{`{"id":"17bd","action":"click","selector":"#does-not-exist","timeout_ms":30000}`,
			`{"id":"17bd","url":"http://127.0.0.1:52790/page.html","title":"OTX Test Page","content":"","events":[],"error":""}`},
		{`{"id":"e7c5","action":"read","selector":"#does-not-exist","timeout_ms":30000}`,
			`{"id":"e7c5","url":"http://127.0.0.1:52790/page.html","title":"OTX Test Page","content":null,"events":[],"error":""}`},
		{`{"id":"4702","action":"type","selector":"#does-not-exist","text":"x","timeout_ms":30000}`,
			`{"id":"4702","url":"http://127.0.0.1:52790/page.html","title":"OTX Test Page","content":"","events":[],"error":""}`},
		{`{"id":"7b37","action":"read","selector":"h1","timeout_ms":30000}`,
			`{"id":"7b37","url":"http://127.0.0.1:52790/page.html","title":"OTX Test Page","content":"Hello from the test page","events":[],"error":""}`},
		{`{"id":"9610","action":"read","selector":"#para","timeout_ms":30000}`,
			`{"id":"9610","url":"http://127.0.0.1:52790/page.html","title":"OTX Test Page","content":"Some visible paragraph text.","events":[],"error":""}`},
		{`{"id":"dae1","action":"scroll","selector":"body","timeout_ms":30000}`,
			`{"id":"dae1","url":"","title":"","content":"","events":[],"error":"unknown action: scroll"}`},
		{`{"id":"9cd5","action":"navigate","timeout_ms":30000}`,
			`{"id":"9cd5","url":"","title":"","content":"","events":[],"error":"navigate requires url"}`},
		{`{"id":"50ec","action":"navigate","url":"http://127.0.0.1:52790/page2.html","timeout_ms":30000}`,
			`{"id":"50ec","url":"http://127.0.0.1:52790/page2.html","title":"Second Page","content":"","events":[],"error":""}`},
	}
	for _, step := range steps {
		var cmd wire.BrowserCommand
		if err := json.Unmarshal([]byte(step.cmd), &cmd); err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(run(t, b, cmd))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != step.want {
			t.Errorf("%s\n got %s\nwant %s", step.cmd, got, step.want)
		}
	}

	// The recorded screenshot and tabs frames, in shape.
	shot := run(t, b, wire.BrowserCommand{ID: "dfcd", Action: browser.Screenshot})
	if shot.Error != "" || shot.ImageMIMEType != "image/png" || shot.Image == "" || shot.Title != "Second Page" {
		t.Errorf("screenshot: error %q mime %q title %q", shot.Error, shot.ImageMIMEType, shot.Title)
	}
	tabs := run(t, b, wire.BrowserCommand{ID: "793b", Action: browser.Tabs}).Tabs
	last := tabs[len(tabs)-1]
	if last.URL != "http://127.0.0.1:52790/page2.html" || last.Title != "Second Page" || !last.Active || last.Controlled {
		t.Errorf("tabs: %+v", tabs)
	}
}
