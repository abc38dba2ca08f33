package tools

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/session/browser"
)

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestBrowserNavigateClickType(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	fb := &fakeBrowser{}
	env.Browser = fb
	out := run(t, env, "BrowserNavigate", `{"url": "https://example.com/a"}`)
	if !out.Success || out.Output != "Navigated to Page at https://example.com/a (https://example.com/a)." {
		t.Fatalf("navigate: %+v", out)
	}
	cmd := fb.last()
	if cmd.Action != browser.Navigate || cmd.URL != "https://example.com/a" || cmd.Timeout != 0 {
		t.Errorf("navigate command %+v", cmd)
	}
	if got := env.pageURL(); got != "https://example.com/a" {
		t.Errorf("last URL %q", got)
	}
	out = run(t, env, "BrowserClick", `{"selector": "button.go"}`)
	if !out.Success || out.Output != "Clicked button.go. The tab shows Page at https://example.com/a (https://example.com/a)." {
		t.Errorf("click: %+v", out)
	}
	out = run(t, env, "BrowserType", `{"selector": "input[name=q]", "text": "héllo", "press_enter": true}`)
	if !out.Success || !strings.HasPrefix(out.Output, "Typed 5 characters into input[name=q] and pressed Enter.") {
		t.Errorf("type: %+v", out)
	}
	if c := fb.last(); c.Action != browser.Type || c.Text != "héllo" || !c.PressEnter || c.Selector != "input[name=q]" {
		t.Errorf("type command %+v", c)
	}
	out = run(t, env, "BrowserNavigate", `{"url": "javascript:alert(1)"}`)
	if out.Success || !strings.Contains(out.Output, "not an absolute http or https URL") {
		t.Errorf("bad url: %+v", out)
	}
}

func TestBrowserRead(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	fb := &fakeBrowser{url: "https://example.com/", title: "Example", content: "  Hello page  "}
	env.Browser = fb
	out := run(t, env, "BrowserRead", `{}`)
	if !out.Success || out.Output != "Page: Example (https://example.com/)\n\nHello page" {
		t.Errorf("read: %q", out.Output)
	}
	fb.content = strings.Repeat("é", pageTextLimit+12345)
	out = run(t, env, "BrowserRead", `{"selector": "body"}`)
	if !out.Success || strings.Count(out.Output, "é") != pageTextLimit {
		t.Errorf("long page kept %d characters", strings.Count(out.Output, "é"))
	}
	if !strings.Contains(out.Output, "[... 12345 more characters not shown (32345 in total); read a narrower selector") {
		t.Errorf("no truncation marker: %q", out.Output[len(out.Output)-200:])
	}
	if fb.last().Selector != "body" {
		t.Errorf("selector not passed: %+v", fb.last())
	}
	fb.missing, fb.content = true, ""
	out = run(t, env, "BrowserRead", `{"selector": "#nope"}`)
	if out.Success || !strings.Contains(out.Output, `no element matches the selector "#nope" on Example (https://example.com/)`) {
		t.Errorf("missing: %+v", out)
	}
}

func TestBrowserScreenshot(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	img := pngBytes(t, 64, 48)
	env.Browser = &fakeBrowser{url: "https://example.com/", title: "Example", image: img, mime: "image/png"}
	out := run(t, env, "BrowserScreenshot", `{}`)
	if !out.Success || len(out.Artifacts) != 1 || len(out.Images) != 1 {
		t.Fatalf("screenshot: %+v", out)
	}
	rel := out.Artifacts[0]
	if !strings.HasPrefix(rel, "screenshots/20260902-103000-") || !strings.HasSuffix(rel, ".png") {
		t.Errorf("artifact path %q", rel)
	}
	abs := filepath.Join(env.ArtifactsDir, filepath.FromSlash(rel))
	data, err := os.ReadFile(abs)
	if err != nil || !bytes.Equal(data, img) {
		t.Fatalf("saved file: %v", err)
	}
	info, _ := os.Stat(abs)
	dir, _ := os.Stat(filepath.Dir(abs))
	if info.Mode().Perm() != 0o644 || dir.Mode().Perm() != 0o700 {
		t.Errorf("modes: file %v dir %v", info.Mode().Perm(), dir.Mode().Perm())
	}
	for _, want := range []string{abs, "64×48 PNG", "bytes", "/artifacts/" + rel, "Example (https://example.com/)"} {
		if !strings.Contains(out.Output, want) {
			t.Errorf("output %q lacks %q", out.Output, want)
		}
	}
	if out.Images[0].MIME != "image/png" || !bytes.Equal(out.Images[0].Data, img) {
		t.Error("image not returned to the model")
	}

	// Two screenshots in the same second get different names.
	again := run(t, env, "BrowserScreenshot", `{}`)
	if again.Artifacts[0] == rel {
		t.Error("second screenshot overwrote the first")
	}

	env.Browser = &fakeBrowser{}
	if out := run(t, env, "BrowserScreenshot", `{}`); out.Success || !strings.Contains(out.Output, "empty screenshot") {
		t.Errorf("empty image: %+v", out)
	}
	env.Browser, env.ArtifactsDir = &fakeBrowser{image: img}, ""
	if out := run(t, env, "BrowserScreenshot", `{}`); out.Success || !strings.Contains(out.Output, "no artifacts directory") {
		t.Errorf("no artifacts dir: %+v", out)
	}
}

func TestBrowserTabs(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Browser = &fakeBrowser{tabs: []browser.Tab{
		{Index: 0, URL: "https://a.example/", Title: "A", Active: true},
		{Index: 1, URL: "https://b.example/", Controlled: true},
	}}
	out := run(t, env, "BrowserTabs", `{}`)
	want := "2 open tabs:\n0. A — https://a.example/ [focused]\n1. (untitled) — https://b.example/ [controlled]\n"
	if !out.Success || out.Output != want {
		t.Errorf("tabs:\n%q\nwant\n%q", out.Output, want)
	}
	env.Browser = &fakeBrowser{tabs: []browser.Tab{{Index: 0, URL: "about:blank", Controlled: true, Active: true}}}
	if out := run(t, env, "BrowserTabs", `{}`); out.Output != "1 open tab:\n0. (untitled) — about:blank [controlled, focused]\n" {
		t.Errorf("one tab: %q", out.Output)
	}
	env.Browser = &fakeBrowser{}
	if out := run(t, env, "BrowserTabs", `{}`); out.Output != "No tabs are open." {
		t.Errorf("no tabs: %q", out.Output)
	}
}

func TestBrowserErrors(t *testing.T) {
	t.Parallel()
	want := "No browser is connected: ask the person to open the extension and connect it (infer pair shows the steps)"
	env := newEnv(t)
	for _, name := range []string{"BrowserNavigate", "BrowserClick", "BrowserType", "BrowserRead", "BrowserScreenshot", "BrowserTabs"} {
		args := map[string]string{"BrowserNavigate": `{"url": "https://x.example"}`, "BrowserClick": `{"selector": "a"}`, "BrowserType": `{"selector": "a", "text": "b"}`}[name]
		for _, drv := range []browser.Driver{nil, &fakeBrowser{err: browser.ErrNotConnected}} {
			env.Browser = drv
			out := run(t, env, name, args)
			if out.Success || out.Output != want || !out.Ran {
				t.Errorf("%s with driver %T: %+v", name, drv, out)
			}
		}
	}
	for err, text := range map[error]string{
		browser.ErrTimeout:      "did not answer in time",
		browser.ErrDisconnected: "disconnected before answering",
		&browser.CommandError{Action: browser.Click, Message: "element is hidden"}: "the browser reported an error: element is hidden",
		errors.New("strange"): "strange",
		fmt.Errorf("browser click: %w (4 connections replaced in 30s)", browser.ErrFlapping): "Browser commands are paused: two browsers with the extension and this token keep taking the connection from each other, so infer sends commands to neither. Ask the person to close the extension in one of the browsers",
	} {
		env.Browser = &fakeBrowser{err: err}
		if out := run(t, env, "BrowserClick", `{"selector": "a"}`); out.Success || !strings.Contains(out.Output, text) {
			t.Errorf("%v: %q", err, out.Output)
		}
	}
}

// TestBrowserNotConnectedKeepsTheDriversWord: a driver that waited for
// the extension says so, and the model reads it rather than the bare
// "no browser".
func TestBrowserNotConnectedKeepsTheDriversWord(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Browser = &fakeBrowser{err: fmt.Errorf("waited 20s for the browser extension to connect, but none did: %w", browser.ErrNotConnected)}
	out := run(t, env, "BrowserRead", `{}`)
	if out.Success || !strings.HasPrefix(out.Output, "No browser is connected: waited 20s for the browser extension to connect") {
		t.Fatalf("%+v", out)
	}
}

// blockingBrowser answers only when its context ends.
type blockingBrowser struct{}

func (blockingBrowser) Do(ctx context.Context, cmd browser.Command) (browser.Result, error) {
	<-ctx.Done()
	return browser.Result{}, ctx.Err()
}

func TestBrowserTimeoutAndInterrupt(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Browser = blockingBrowser{}
	p := NewPipeline(PipelineConfig{Env: env, Timeouts: map[string]time.Duration{"BrowserRead": 50 * time.Millisecond}})
	out := p.Run(context.Background(), Call{Name: "BrowserRead", Args: `{}`}, Standard)
	if !out.TimedOut || out.Success || !strings.Contains(out.Output, "BrowserRead did not finish within 50ms") {
		t.Errorf("timeout: %+v", out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	out = p.Run(ctx, Call{Name: "BrowserTabs", Args: `{}`}, Standard)
	if !out.Interrupted || out.Success || out.Error != "interrupted" {
		t.Errorf("interrupt: %+v", out)
	}
}

// TestArtifactNamesAreUnguessable checks that an artifact's name carries at
// least 128 random bits: /artifacts/ is served without a token, so the name
// is what keeps other local users and sandboxed code from walking the folder.
func TestArtifactNamesAreUnguessable(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	rel, _, err := SaveArtifact(env, "screenshots", ".png", []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimSuffix(path.Base(rel), ".png")
	id := name[strings.LastIndexByte(name, '-')+1:]
	raw, err := hex.DecodeString(id)
	if err != nil || len(raw)*8 < 128 {
		t.Fatalf("artifact %q carries %d random bits (id %q, %v), want at least 128", rel, len(raw)*8, id, err)
	}
}
