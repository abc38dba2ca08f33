package relay

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/sim"
)

// TestRelaysARealBridge puts the relay in front of a real bridge with a
// simulated extension, as a holder does: a guest drives the extension,
// gets its screenshot's bytes and its errors, and hears when it goes.
func TestRelaysARealBridge(t *testing.T) {
	srv, err := bridge.Listen(bridge.Options{Token: "secret", CloseGrace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rl, err := Listen(SocketPath(t.TempDir()), func() string { return "secret" }, srv, Holder{Port: srv.Port()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeWith(context.Background(), bridge.Hooks{OnStatus: rl.Publish}) }()
	defer func() {
		srv.Close()
		<-served
		rl.Close()
	}()

	statuses := make(chan browser.Status, 64)
	c := dial(t, rl.path, func(st browser.Status) { statuses <- st })
	ctx := testCtx(t)
	if _, err := c.Do(ctx, browser.Command{Action: browser.Tabs}); !errors.Is(err, browser.ErrNotConnected) {
		t.Fatalf("before the extension: %v, want browser.ErrNotConnected", err)
	}

	ext := sim.NewClient(sim.ClientOptions{URL: srv.URL(), Token: "secret", ExtensionVersion: "1.12.1", Browser: &sim.Minimal{}})
	extCtx, stopExt := context.WithCancel(context.Background())
	extDone := make(chan struct{})
	go func() { defer close(extDone); ext.Run(extCtx) }()
	defer func() { stopExt(); <-extDone }()
	waitStatus(t, statuses, browser.Connected)
	if st := c.Status(); st.ExtensionVersion != "1.12.1" {
		t.Errorf("status %+v", st)
	}

	if res, err := c.Do(ctx, browser.Command{Action: browser.Navigate, URL: "https://example.test/"}); err != nil || res.URL != "https://example.test/" {
		t.Fatalf("navigate: %+v %v", res, err)
	}
	if res, err := c.Do(ctx, browser.Command{Action: browser.Read, Selector: "h1"}); err != nil || res.Content != sim.MinimalPageText {
		t.Fatalf("read: %+v %v", res, err)
	}
	shot, err := c.Do(ctx, browser.Command{Action: browser.Screenshot})
	if err != nil || shot.ImageMIME != "image/png" {
		t.Fatalf("screenshot: %+v %v", shot, err)
	}
	if img, err := png.Decode(bytes.NewReader(shot.Image)); err != nil || img.Bounds().Dx() != 4 {
		t.Fatalf("the screenshot's bytes do not decode as the extension's PNG: %v", err)
	}
	if res, err := c.Do(ctx, browser.Command{Action: browser.Tabs}); err != nil || len(res.Tabs) != 1 || !res.Tabs[0].Controlled {
		t.Fatalf("tabs: %+v %v", res, err)
	}
	var ce *browser.CommandError
	if _, err := c.Do(ctx, browser.Command{Action: browser.Navigate}); !errors.As(err, &ce) || ce.Message != "navigate requires url" {
		t.Fatalf("the extension's own error: %v", err)
	}

	stopExt()
	<-extDone
	waitStatus(t, statuses, browser.Disconnected)
}

// waitStatus waits for a pushed status in state.
func waitStatus(t *testing.T, ch <-chan browser.Status, state browser.State) {
	t.Helper()
	timeout := time.After(guard)
	for {
		select {
		case st := <-ch:
			if st.State == state {
				return
			}
		case <-timeout:
			t.Fatalf("no status %s pushed", state)
		}
	}
}
