package session

import (
	"context"
	"sync"
	"time"

	"github.com/infer-workspace/infer/session/browser"
)

// BrowserView is the latest browser state the workspace has seen, for a
// front end that starts (or resyncs) after the events went by.
type BrowserView struct {
	Tabs       []browser.Tab
	Page       *Page
	Screenshot *Screenshot
}

// browserView keeps the extension's connection state and what the
// watched driver saw, and is the one source of browser events: the
// connection's status from the bridge wiring, every command, page, tab
// list and screenshot from the driver the tools use. Its exported methods
// are promoted to Workspace.
type browserView struct {
	publish func(Event)

	mu     sync.Mutex
	status browser.Status
	view   BrowserView
}

// SetBrowserStatus records the extension connection's state and tells
// front ends. The bridge wiring calls it.
func (b *browserView) SetBrowserStatus(st browser.Status) {
	b.mu.Lock()
	b.status = st
	b.mu.Unlock()
	b.publish(BrowserStatusChanged{Status: st})
}

// BrowserStatus returns the latest extension connection state.
func (b *browserView) BrowserStatus() browser.Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.status
}

// BrowserView returns the latest tabs, page and screenshot.
func (b *browserView) BrowserView() BrowserView {
	b.mu.Lock()
	defer b.mu.Unlock()
	v := b.view
	v.Tabs = append([]browser.Tab(nil), v.Tabs...)
	return v
}

// WatchBrowser wraps the browser driver the tools use so that front ends
// see every command, the tabs, the controlled page and the latest
// screenshot as events, instead of parsing tool output.
func (b *browserView) WatchBrowser(d browser.Driver) browser.Driver {
	return watchedDriver{d: d, b: b}
}

type watchedDriver struct {
	d browser.Driver
	b *browserView
}

// Do runs cmd and publishes what it showed: every command for the browser
// pane's log, failed ones included, then the page, the tabs and the
// screenshot it returned.
func (wd watchedDriver) Do(ctx context.Context, cmd browser.Command) (browser.Result, error) {
	started := time.Now()
	res, err := wd.d.Do(ctx, cmd)
	b := wd.b
	rec := browser.CommandRecord{Action: cmd.Action, Target: cmd.Target(), Started: started, Latency: time.Since(started)}
	if err != nil {
		rec.Err = err.Error()
	}
	b.publish(BrowserCommandDone{Record: rec})
	if err != nil {
		return res, err
	}
	if res.URL != "" || res.Title != "" {
		page := &Page{URL: res.URL, Title: res.Title}
		b.mu.Lock()
		b.view.Page = page
		b.mu.Unlock()
		b.publish(PageChanged{Page: *page})
	}
	switch cmd.Action {
	case browser.Tabs:
		tabs := append([]browser.Tab(nil), res.Tabs...)
		b.mu.Lock()
		b.view.Tabs = tabs
		b.mu.Unlock()
		b.publish(TabsChanged{Tabs: tabs})
	case browser.Screenshot:
		if len(res.Image) > 0 {
			shot := &Screenshot{Image: res.Image, MIME: res.ImageMIME, URL: res.URL, At: time.Now()}
			b.mu.Lock()
			b.view.Screenshot = shot
			b.mu.Unlock()
			b.publish(ScreenshotTaken{Screenshot: *shot})
		}
	}
	return res, nil
}
