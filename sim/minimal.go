package sim

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"sync"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
)

// MinimalPageText is what a Minimal browser's read returns.
const MinimalPageText = "infer-sim minimal browser: this page has no real content"

// Minimal is the smallest Browser that answers all six actions plausibly,
// without parsing any page: navigate remembers the URL (and uses it as the
// title), read returns MinimalPageText, tabs lists the one tab, screenshot
// is a small real PNG, and click and type succeed. It is a stand-in until a
// browser that loads pages is plugged in. Safe for concurrent use.
type Minimal struct {
	mu  sync.Mutex
	url string
}

var _ Browser = (*Minimal)(nil)

// minimalPNG is a 4×4 PNG, encoded once.
var minimalPNG = sync.OnceValue(func() string {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for x := range 4 {
		for y := range 4 {
			img.Set(x, y, color.RGBA{R: uint8(60 * x), G: uint8(60 * y), B: 200, A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err) // encoding an in-memory RGBA image cannot fail
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
})

// Do implements Browser.
func (m *Minimal) Do(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult {
	if err := ctx.Err(); err != nil {
		return wire.BrowserResult{Error: "timed out: " + err.Error()}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	empty := ""
	switch cmd.Action {
	case browser.Navigate:
		if cmd.URL == "" {
			return wire.BrowserResult{Error: "navigate requires url"}
		}
		m.url = cmd.URL
		return wire.BrowserResult{URL: m.url, Title: m.url, Content: &empty}
	case browser.Click, browser.Type:
		return wire.BrowserResult{URL: m.url, Title: m.url, Content: &empty}
	case browser.Read:
		text := MinimalPageText
		return wire.BrowserResult{URL: m.url, Title: m.url, Content: &text}
	case browser.Screenshot:
		return wire.BrowserResult{URL: m.url, Title: m.url, Content: &empty, Image: minimalPNG(), ImageMIMEType: "image/png"}
	case browser.Tabs:
		url := m.url
		if url == "" {
			url = "about:blank"
		}
		return wire.BrowserResult{URL: m.url, Title: m.url, Content: &empty,
			Tabs: []wire.Tab{{Index: 0, URL: url, Title: url, Active: true, Controlled: true}}}
	default:
		return wire.BrowserResult{Error: "unknown action: " + string(cmd.Action)}
	}
}
