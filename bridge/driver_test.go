package bridge

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image/png"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/sim"
)

func TestNotConnectedFailsAtOnce(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	_, err := ts.Do(ctxGuard(t), browser.Command{Action: browser.Read})
	if !errors.Is(err, browser.ErrNotConnected) {
		t.Fatalf("Do with no extension: %v, want ErrNotConnected", err)
	}
}

func TestUnknownActionIsRefused(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	connectRaw(t, ts, "1")
	_, err := ts.Do(ctxGuard(t), browser.Command{Action: "scroll"})
	if err == nil || !strings.Contains(err.Error(), "unknown action") {
		t.Fatalf("Do(scroll): %v", err)
	}
}

func TestCommandsTravelWithAllTheirFields(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	x := connectRaw(t, ts, "1")
	res := doAsync(ts.Server, ctxGuard(t), browser.Command{
		Action: browser.Type, Selector: "input[name=q]", Text: "hello", PressEnter: true, Timeout: 7 * time.Second,
	})
	cmd := x.nextCommand()
	want := wire.BrowserCommand{ID: cmd.ID, Action: "type", Selector: "input[name=q]", Text: "hello", PressEnter: true, TimeoutMS: 7000}
	if cmd != want {
		t.Errorf("sent %+v, want %+v", cmd, want)
	}
	if len(cmd.ID) != 36 {
		t.Errorf("id %q is not a uuid", cmd.ID)
	}
	x.writeFrame(wire.BrowserResult{ID: cmd.ID, URL: "https://example.com/", Title: "Example"})
	o := waitOutcome(t, res)
	if o.err != nil || o.res.URL != "https://example.com/" || o.res.Title != "Example" {
		t.Fatalf("got %+v %v", o.res, o.err)
	}
}

func TestDuplicateLateAndUnknownResultsAreIgnored(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	x := connectRaw(t, ts, "1")

	// A duplicate: only the first counts.
	res := doAsync(ts.Server, ctxGuard(t), browser.Command{Action: browser.Read})
	cmd := x.nextCommand()
	first, second := "first", "second"
	x.writeFrame(wire.BrowserResult{ID: cmd.ID, Content: &first})
	x.writeFrame(wire.BrowserResult{ID: cmd.ID, Content: &second})
	if o := waitOutcome(t, res); o.err != nil || o.res.Content != "first" {
		t.Fatalf("got %+v %v, want the first result", o.res, o.err)
	}

	// A late one, after the command timed out.
	res = doAsync(ts.Server, ctxGuard(t), browser.Command{Action: browser.Read, Timeout: 50 * time.Millisecond})
	late := x.nextCommand()
	if o := waitOutcome(t, res); !errors.Is(o.err, browser.ErrTimeout) {
		t.Fatalf("unanswered command: %v, want ErrTimeout", o.err)
	}
	tooLate := "too late"
	x.writeFrame(wire.BrowserResult{ID: late.ID, Content: &tooLate})
	x.writeFrame(wire.BrowserResult{ID: "00000000-0000-0000-0000-000000000000", Content: &tooLate})

	// The next command gets its own answer, not the stray ones.
	res = doAsync(ts.Server, ctxGuard(t), browser.Command{Action: browser.Read})
	cmd = x.nextCommand()
	mine := "mine"
	x.writeFrame(wire.BrowserResult{ID: cmd.ID, Content: &mine})
	if o := waitOutcome(t, res); o.err != nil || o.res.Content != "mine" {
		t.Fatalf("got %+v %v, want %q", o.res, o.err, mine)
	}
	if ts.Status().State != browser.Connected {
		t.Error("stray results cost the connection")
	}
}

func TestConcurrentCommandsCompleteOutOfOrder(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	x := connectRaw(t, ts, "1")
	const n = 5
	outcomes := make([]<-chan doOutcome, n)
	selectors := make(map[string]string) // id -> selector
	for i := range n {
		sel := "#item" + string(rune('a'+i))
		outcomes[i] = doAsync(ts.Server, ctxGuard(t), browser.Command{Action: browser.Read, Selector: sel})
	}
	var cmds []wire.BrowserCommand
	for range n {
		cmd := x.nextCommand()
		selectors[cmd.ID] = cmd.Selector
		cmds = append(cmds, cmd)
	}
	for i := len(cmds) - 1; i >= 0; i-- { // answer newest first
		text := "text of " + cmds[i].Selector
		x.writeFrame(wire.BrowserResult{ID: cmds[i].ID, Content: &text})
	}
	for i, ch := range outcomes {
		o := waitOutcome(t, ch)
		want := "text of #item" + string(rune('a'+i))
		if o.err != nil || o.res.Content != want {
			t.Errorf("command %d: got %q %v, want %q", i, o.res.Content, o.err, want)
		}
	}
}

func TestConcurrentCommandsThroughSimClient(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	// Each command sleeps a little less than the one before it, so they
	// finish in reverse order of arrival.
	connectSim(t, ts, browserFunc(func(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult {
		d := map[string]time.Duration{"#1": 60 * time.Millisecond, "#2": 30 * time.Millisecond, "#3": 0}[cmd.Selector]
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
		text := "read " + cmd.Selector
		return wire.BrowserResult{Content: &text}
	}))
	var wg sync.WaitGroup
	for _, sel := range []string{"#1", "#2", "#3"} {
		wg.Go(func() {
			res, err := ts.Read(ctxGuard(t), sel)
			if err != nil || res.Content != "read "+sel {
				t.Errorf("Read(%s) = %q, %v", sel, res.Content, err)
			}
		})
	}
	wg.Wait()
}

func TestContentNullMeansMissing(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	x := connectRaw(t, ts, "1.12.1")

	res := doAsync(ts.Server, ctxGuard(t), browser.Command{Action: browser.Read, Selector: "#does-not-exist"})
	cmd := x.nextCommand()
	x.writeRaw(`{"type":"browser_result","id":"` + cmd.ID + `","url":"http://127.0.0.1/page.html","title":"T","content":null,"events":[],"error":""}`)
	o := waitOutcome(t, res)
	if o.err != nil || !o.res.Missing || o.res.Content != "" {
		t.Fatalf("read of a missing element: %+v %v, want Missing", o.res, o.err)
	}

	res = doAsync(ts.Server, ctxGuard(t), browser.Command{Action: browser.Read, Selector: "#empty"})
	cmd = x.nextCommand()
	x.writeRaw(`{"type":"browser_result","id":"` + cmd.ID + `","content":"","events":[],"error":""}`)
	if o := waitOutcome(t, res); o.err != nil || o.res.Missing {
		t.Fatalf("read of an empty element: %+v %v, want not Missing", o.res, o.err)
	}
}

func TestExtensionErrorIsACommandError(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	x := connectRaw(t, ts, "1")
	res := doAsync(ts.Server, ctxGuard(t), browser.Command{Action: browser.Navigate})
	cmd := x.nextCommand()
	x.writeFrame(wire.BrowserResult{ID: cmd.ID, Error: "navigate requires url"})
	o := waitOutcome(t, res)
	var ce *browser.CommandError
	if !errors.As(o.err, &ce) || ce.Message != "navigate requires url" || ce.Action != browser.Navigate {
		t.Fatalf("got %v, want a CommandError", o.err)
	}
}

func TestTimeoutMSIsSentAndEnforced(t *testing.T) {
	t.Parallel()
	ts := startServer(t, func(o *Options) { o.CommandTimeout = 30 * time.Second })
	x := connectRaw(t, ts, "1")

	res := doAsync(ts.Server, context.Background(), browser.Command{Action: browser.Navigate, URL: "http://slow.example/", Timeout: 100 * time.Millisecond})
	cmd := x.nextCommand()
	if cmd.TimeoutMS != 100 {
		t.Errorf("timeout_ms = %d, want 100", cmd.TimeoutMS)
	}
	o := waitOutcome(t, res)
	if !errors.Is(o.err, browser.ErrTimeout) {
		t.Fatalf("unanswered command: %v, want ErrTimeout", o.err)
	}

	// The default budget applies when the command has none.
	res = doAsync(ts.Server, ctxGuard(t), browser.Command{Action: browser.Tabs})
	cmd = x.nextCommand()
	if cmd.TimeoutMS > 30000 || cmd.TimeoutMS < 1 {
		t.Errorf("default timeout_ms = %d, want at most 30000", cmd.TimeoutMS)
	}
	x.writeFrame(wire.BrowserResult{ID: cmd.ID})
	waitOutcome(t, res)

	// A caller's shorter deadline is what the extension is told.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	res = doAsync(ts.Server, ctx, browser.Command{Action: browser.Tabs, Timeout: time.Minute})
	cmd = x.nextCommand()
	if cmd.TimeoutMS > 2000 {
		t.Errorf("timeout_ms = %d with a 2s caller deadline", cmd.TimeoutMS)
	}
	x.writeFrame(wire.BrowserResult{ID: cmd.ID})
	waitOutcome(t, res)
}

func TestContextCancellationEndsDo(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	x := connectRaw(t, ts, "1")
	ctx, cancel := context.WithCancel(context.Background())
	res := doAsync(ts.Server, ctx, browser.Command{Action: browser.Read})
	x.nextCommand()
	cancel()
	if o := waitOutcome(t, res); !errors.Is(o.err, context.Canceled) {
		t.Fatalf("cancelled Do: %v, want context.Canceled", o.err)
	}
}

func TestScreenshotBase64IsDecoded(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	connectSim(t, ts, &sim.Minimal{})
	res, err := ts.Screenshot(ctxGuard(t))
	if err != nil {
		t.Fatal(err)
	}
	if res.ImageMIME != "image/png" {
		t.Errorf("mime = %q", res.ImageMIME)
	}
	img, err := png.Decode(bytes.NewReader(res.Image))
	if err != nil {
		t.Fatalf("decoded image is not a PNG: %v", err)
	}
	if img.Bounds().Dx() == 0 {
		t.Error("empty image")
	}
}

func TestScreenshotImageEncodings(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	x := connectRaw(t, ts, "1")
	payload := []byte("\x89PNG fake bytes")
	b64 := base64.StdEncoding.EncodeToString(payload)
	for _, tc := range []struct {
		name, image, mime string
		wantErr           string
		wantMIME          string
	}{
		{name: "plain base64", image: b64, mime: "image/png", wantMIME: "image/png"},
		{name: "data URL", image: "data:image/jpeg;base64," + b64, wantMIME: "image/jpeg"},
		{name: "bad base64", image: "***not base64***", mime: "image/png", wantErr: "not valid base64"},
		{name: "no image", image: "", wantErr: "without an image"},
		{name: "data URL without base64", image: "data:image/png,abc", wantErr: "data URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := doAsync(ts.Server, ctxGuard(t), browser.Command{Action: browser.Screenshot})
			cmd := x.nextCommand()
			x.writeFrame(wire.BrowserResult{ID: cmd.ID, Image: tc.image, ImageMIMEType: tc.mime})
			o := waitOutcome(t, res)
			if tc.wantErr != "" {
				if o.err == nil || !strings.Contains(o.err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error containing %q", o.err, tc.wantErr)
				}
				return
			}
			if o.err != nil || !bytes.Equal(o.res.Image, payload) || o.res.ImageMIME != tc.wantMIME {
				t.Fatalf("got %q %q %v", o.res.Image, o.res.ImageMIME, o.err)
			}
		})
	}
}

func TestTabsAndEventsAreConverted(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	x := connectRaw(t, ts, "1")
	res := doAsync(ts.Server, ctxGuard(t), browser.Command{Action: browser.Tabs})
	cmd := x.nextCommand()
	x.writeRaw(`{"type":"browser_result","id":"` + cmd.ID + `","url":"","title":"","content":"","events":[{"level":"log","text":"hi"}],"error":"",` +
		`"tabs":[{"index":0,"url":"about:blank","title":"about:blank","active":false},{"index":1,"url":"https://a.example/","title":"A","active":true,"controlled":true}]}`)
	o := waitOutcome(t, res)
	if o.err != nil {
		t.Fatal(o.err)
	}
	want := []browser.Tab{{Index: 0, URL: "about:blank", Title: "about:blank"}, {Index: 1, URL: "https://a.example/", Title: "A", Active: true, Controlled: true}}
	if len(o.res.Tabs) != 2 || o.res.Tabs[0] != want[0] || o.res.Tabs[1] != want[1] {
		t.Errorf("tabs = %+v", o.res.Tabs)
	}
	if len(o.res.Events) != 1 || o.res.Events[0] != `{"level":"log","text":"hi"}` {
		t.Errorf("events = %q", o.res.Events)
	}
}

func TestTypedWrappersDriveTheMinimalBrowser(t *testing.T) {
	t.Parallel()
	ts := startServer(t, nil)
	connectSim(t, ts, &sim.Minimal{})
	ctx := ctxGuard(t)
	if res, err := ts.Navigate(ctx, "https://example.com/"); err != nil || res.URL != "https://example.com/" {
		t.Fatalf("Navigate: %+v %v", res, err)
	}
	if _, err := ts.Type(ctx, "#q", "hello", true); err != nil {
		t.Fatalf("Type: %v", err)
	}
	if res, err := ts.Read(ctx, ""); err != nil || res.Content != sim.MinimalPageText {
		t.Fatalf("Read: %+v %v", res, err)
	}
	tabs, err := ts.Tabs(ctx)
	if err != nil || len(tabs) != 1 || tabs[0].URL != "https://example.com/" {
		t.Fatalf("Tabs: %+v %v", tabs, err)
	}
}
