// Package fakebrowser is the extension simulator's in-memory browser. It
// answers the bridge protocol's browser commands the way the real extension
// does, without Chromium: pages are fetched for real (or served from memory
// for the demo site), parsed into a DOM with golang.org/x/net/html, queried
// with CSS selectors through github.com/andybalholm/cascadia, read with an
// implementation of innerText, changed by clicks and typing, and drawn into
// a PNG for screenshots.
//
// What it does, command by command:
//
//   - navigate loads a URL in the controlled tab, creating that tab when
//     there is none. http and https are fetched with a per-load timeout, a
//     size cap and a bounded number of redirects; http://demo.infer.localhost/
//     (assets.DemoOrigin) is the built-in demo site, served from memory.
//     data: URLs and about:blank work too. A failed load leaves the previous
//     page in place and reports a net::ERR_* error (see fetch.go).
//   - click runs the activation behaviour of the first element matching the
//     selector: links navigate, submit buttons submit their form (with the
//     submitter's formaction, formmethod and formenctype), reset buttons
//     reset it, checkboxes toggle, radios select, labels click their control,
//     summaries open their details. There is no JavaScript.
//   - type sets the element's value (input, textarea, select, or the text of
//     a contenteditable element); press_enter then submits the form
//     implicitly, through its default button when it has one.
//   - read returns innerText (an input's or textarea's value when the
//     selector names one) with the redaction rule of package sim/redact
//     applied (secret inputs and textareas, and secret editable regions),
//     and content null for a selector that matches nothing.
//   - screenshot draws the page's text and controls into a PNG of the
//     viewport, with secret fields and regions masked.
//   - tabs lists the tabs: Active is the focused tab, Controlled the one
//     commands act on.
//
// Where the real extension (opentask 1.12.1) departs from the contract, the
// default follows the contract and Options.Profile = ProfileOpenTask
// reproduces the extension; see Options.
package fakebrowser

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"

	"github.com/infer-workspace/infer/assets"
	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/sim"
	"golang.org/x/net/html"
)

// ProfileOpenTask reproduces the real extension, opentask 1.12.1, where it
// departs from the contract (see Options.Profile).
const ProfileOpenTask = "opentask-1.12.1"

// Defaults of Options.
const (
	DefaultLoadTimeout  = 30 * time.Second
	DefaultMaxPageBytes = 10 << 20
	DefaultMaxRedirects = 20 // Chrome's limit
)

// DefaultViewport is the screenshot size when Options.Viewport is zero.
var DefaultViewport = image.Point{X: 1280, Y: 800}

// Options configure a Browser. The zero value is a contract-faithful
// browser with the defaults above.
type Options struct {
	// Profile is "" to follow the bridge contract, or ProfileOpenTask to
	// behave like opentask 1.12.1: a click or type whose selector matches
	// nothing succeeds with an empty error (the contract's
	// querySelector(...).click() would throw), typing into an element that
	// has no value is a silent no-op instead of an error, and tabs results
	// carry no controlled flag (the extension does not send it). Reads of a
	// missing element give content null in both profiles, as the extension
	// does.
	Profile string
	// LoadTimeout bounds one page load, redirects and body included, inside
	// the command's own timeout. Exceeding it is net::ERR_TIMED_OUT.
	LoadTimeout time.Duration
	// MaxPageBytes is the largest response body the browser accepts; a
	// bigger one fails the load with a "page too large" error.
	MaxPageBytes int64
	// MaxRedirects bounds a redirect chain (net::ERR_TOO_MANY_REDIRECTS).
	MaxRedirects int
	// Viewport is the screenshot size in pixels.
	Viewport image.Point
	// Hosts are served from memory by their handlers instead of the
	// network, keyed by host name (any port). The demo site is always
	// present under assets.DemoHost unless Hosts replaces it.
	Hosts map[string]http.Handler
	// UserAgent is sent with every request.
	UserAgent string
}

func (o Options) withDefaults() Options {
	if o.LoadTimeout <= 0 {
		o.LoadTimeout = DefaultLoadTimeout
	}
	if o.MaxPageBytes <= 0 {
		o.MaxPageBytes = DefaultMaxPageBytes
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.Viewport == (image.Point{}) {
		o.Viewport = DefaultViewport
	}
	if o.UserAgent == "" {
		o.UserAgent = "Mozilla/5.0 (compatible; infer-sim fakebrowser)"
	}
	return o
}

// Browser is the fake browser. It is safe for concurrent use: commands on
// the page take turns, while page loads run in parallel and the last one
// started wins, as in a real tab.
type Browser struct {
	opts      Options
	client    *http.Client
	transport *http.Transport

	// lock guards everything below. It is a channel so that waiting for it
	// honours the command's context.
	lock       chan struct{}
	tabs       []*tab
	focused    *tab
	controlled *tab
}

// tab is one browser tab. Its page is never nil.
type tab struct {
	page   *page
	back   []historyEntry
	navSeq uint64 // bumped by every load; a load commits only if still current
	closed bool
}

// historyEntry is one step of a tab's back history. Pages are not kept
// alive: going back loads the address again, as after a cache eviction.
type historyEntry struct {
	url    *url.URL
	method string
}

// maxHistory bounds a tab's back history.
const maxHistory = 100

// errNoTab is reported for page commands before the first navigate.
var errNoTab = errors.New("no page is open in the controlled tab: navigate to a URL first")

// New returns a browser with one focused about:blank tab that is not yet
// controlled, like a freshly started Chrome; the first navigate opens the
// controlled tab beside it.
func New(opts Options) (*Browser, error) {
	switch opts.Profile {
	case "", ProfileOpenTask:
	default:
		return nil, fmt.Errorf("fakebrowser: unknown profile %q: use \"\" for the contract or %q", opts.Profile, ProfileOpenTask)
	}
	opts = opts.withDefaults()
	if opts.Viewport.X < 200 || opts.Viewport.Y < 150 || opts.Viewport.X > 8192 || opts.Viewport.Y > 8192 {
		return nil, fmt.Errorf("fakebrowser: viewport %dx%d is out of range: use 200x150 to 8192x8192", opts.Viewport.X, opts.Viewport.Y)
	}
	hosts := map[string]http.Handler{assets.DemoHost: assets.DemoSiteHandler()}
	for name, h := range opts.Hosts {
		if h == nil {
			return nil, fmt.Errorf("fakebrowser: host %q has a nil handler", name)
		}
		hosts[strings.ToLower(name)] = h
	}
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, fmt.Errorf("fakebrowser: cookie jar: %w", err)
	}
	maxRedirects := opts.MaxRedirects
	b := &Browser{
		opts:      opts,
		transport: transport,
		client: &http.Client{
			Transport: hostRouter{hosts: hosts, next: transport},
			Jar:       jar,
			CheckRedirect: func(_ *http.Request, via []*http.Request) error {
				if len(via) > maxRedirects {
					return errTooManyRedirects
				}
				return nil
			},
		},
		lock: make(chan struct{}, 1),
	}
	first := &tab{page: blankPage()}
	b.tabs, b.focused = []*tab{first}, first
	return b, nil
}

// Close releases idle network connections. The browser stays usable.
func (b *Browser) Close() error {
	b.transport.CloseIdleConnections()
	return nil
}

func (b *Browser) acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case b.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *Browser) release() { <-b.lock }

func (b *Browser) openTask() bool { return b.opts.Profile == ProfileOpenTask }

// Do performs one browser command. It never returns a missing result: every
// failure is in the result's Error.
func (b *Browser) Do(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult {
	var (
		res      wire.BrowserResult
		nullRead bool
	)
	if err := ctx.Err(); err != nil {
		res.Error = sim.Interrupted(cmd.Action, err)
	} else {
		switch cmd.Action {
		case browser.Navigate:
			res = b.navigate(ctx, cmd)
		case browser.Click:
			res = b.click(ctx, cmd)
		case browser.Type:
			res = b.typeText(ctx, cmd)
		case browser.Read:
			res, nullRead = b.read(ctx, cmd)
		case browser.Screenshot:
			res = b.screenshot(ctx)
		case browser.Tabs:
			res = b.listTabs(ctx)
		default:
			// Like opentask: no url or title with this error.
			res.Error = "unknown action: " + string(cmd.Action)
		}
	}
	return sim.Complete(res, cmd.ID, nullRead)
}

// stamped is a result carrying the controlled tab's address and title, as
// every result after an action does. Lock held.
func (b *Browser) stamped() wire.BrowserResult {
	var res wire.BrowserResult
	if t := b.controlled; t != nil {
		res.URL = t.page.url.String()
		res.Title = t.page.tabTitle()
	}
	return res
}

// failed is stamped with an error. Lock held.
func (b *Browser) failed(err error) wire.BrowserResult {
	res := b.stamped()
	res.Error = err.Error()
	return res
}

// parseAddress checks a navigate URL. Unlike an address bar it does not
// guess a scheme: the protocol carries URLs, not search terms.
func parseAddress(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("invalid url %q: %v", raw, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return nil, fmt.Errorf("invalid url %q: it has no host", raw)
		}
	case "data", "about":
	case "":
		return nil, fmt.Errorf("invalid url %q: give an absolute URL with its scheme, such as https://%s", raw, strings.TrimLeft(raw, "/"))
	default:
		return nil, fmt.Errorf("cannot load %q: the fake browser loads http, https, data: and about:blank URLs", raw)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme == "http" || u.Scheme == "https" {
		if u.Path == "" {
			u.Path = "/"
		}
	}
	return u, nil
}

func (b *Browser) navigate(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult {
	if cmd.URL == "" {
		// Like opentask: no url or title with this error.
		return wire.BrowserResult{Error: "navigate requires url"}
	}
	u, parseErr := parseAddress(cmd.URL)
	if err := b.acquire(ctx); err != nil {
		return wire.BrowserResult{Error: sim.Interrupted(cmd.Action, err)}
	}
	if parseErr != nil {
		defer b.release()
		return b.failed(parseErr)
	}
	t := b.controlled
	if t == nil {
		t = b.newTabLocked()
		b.controlled = t
	}
	return b.load(ctx, t, navRequest{method: "GET", url: u}, cmd.Action)
}

// newTabLocked opens a focused about:blank tab at the end of the strip, as
// chrome.tabs.create does. Lock held.
func (b *Browser) newTabLocked() *tab {
	t := &tab{page: blankPage()}
	b.tabs = append(b.tabs, t)
	b.focused = t
	return t
}

// load navigates tab t. It is called with the lock held and returns with it
// released; the network part runs unlocked so other commands proceed.
func (b *Browser) load(ctx context.Context, t *tab, req navRequest, action browser.Action) wire.BrowserResult {
	cur := t.page
	if req.method == "GET" && req.url.Fragment != "" && !cur.initial && sameDocument(cur.url, req.url) {
		// A fragment change scrolls within the document; nothing is fetched.
		if !req.fromHistory {
			t.push(cur)
		}
		cur.url = req.url
		defer b.release()
		return b.stamped()
	}
	t.navSeq++
	seq := t.navSeq
	b.release()

	pg, err := b.fetchPage(ctx, req)

	if lerr := b.acquire(ctx); lerr != nil {
		return wire.BrowserResult{Error: sim.Interrupted(action, lerr)}
	}
	defer b.release()
	switch {
	case err != nil && ctx.Err() != nil:
		res := b.stamped()
		res.Error = sim.Interrupted(action, ctx.Err())
		return res
	case err != nil:
		return b.failed(err)
	case t.closed || t.navSeq != seq:
		return b.failed(&netError{code: "ERR_ABORTED", url: req.url.String()})
	}
	if !req.fromHistory {
		t.push(t.page)
	}
	t.page = pg
	return b.stamped()
}

func (b *Browser) fetchPage(ctx context.Context, req navRequest) (*page, error) {
	resp, err := b.fetch(ctx, req)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return buildPage(resp)
}

// sameDocument reports whether two addresses differ at most in fragment.
func sameDocument(a, b *url.URL) bool {
	x, y := *a, *b
	x.Fragment, x.RawFragment, y.Fragment, y.RawFragment = "", "", "", ""
	return x.String() == y.String()
}

// push records p in the tab's back history.
func (t *tab) push(p *page) {
	if p.initial {
		return
	}
	t.back = append(t.back, historyEntry{url: p.url, method: p.method})
	if len(t.back) > maxHistory {
		t.back = append([]historyEntry(nil), t.back[len(t.back)-maxHistory:]...)
	}
}

// locate finds the first element matching sel on the controlled page. A
// selector that matches nothing gives a nil element and no error. Lock held.
func (b *Browser) locate(sel string) (*tab, *html.Node, error) {
	t := b.controlled
	if t == nil {
		return nil, nil, errNoTab
	}
	el, err := t.page.querySelector(sel)
	return t, el, err
}

// missing is the result for a click or type whose selector matched
// nothing. Lock held.
func (b *Browser) missing(sel string) wire.BrowserResult {
	if b.openTask() {
		return b.stamped()
	}
	return b.failed(fmt.Errorf("no element matches selector '%s'", sel))
}

func (b *Browser) click(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult {
	if err := b.acquire(ctx); err != nil {
		return wire.BrowserResult{Error: sim.Interrupted(cmd.Action, err)}
	}
	t, el, err := b.locate(cmd.Selector)
	if err != nil || el == nil {
		defer b.release()
		if err != nil {
			return b.failed(err)
		}
		return b.missing(cmd.Selector)
	}
	nav := t.page.click(el)
	if nav == nil {
		defer b.release()
		return b.stamped()
	}
	return b.load(ctx, t, *nav, cmd.Action)
}

func (b *Browser) typeText(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult {
	if err := b.acquire(ctx); err != nil {
		return wire.BrowserResult{Error: sim.Interrupted(cmd.Action, err)}
	}
	t, el, err := b.locate(cmd.Selector)
	if err != nil || el == nil {
		defer b.release()
		if err != nil {
			return b.failed(err)
		}
		return b.missing(cmd.Selector)
	}
	if err := t.page.setValue(el, cmd.Text); err != nil {
		if !errors.Is(err, errNotEditable) {
			defer b.release()
			return b.failed(err)
		}
		if !b.openTask() {
			defer b.release()
			return b.failed(fmt.Errorf("cannot type into %s: %w", describe(el), err))
		}
	}
	if cmd.PressEnter {
		if nav := t.page.pressEnter(el); nav != nil {
			return b.load(ctx, t, *nav, cmd.Action)
		}
	}
	defer b.release()
	return b.stamped()
}

// read returns the result and whether its content is deliberately null (the
// selector matched nothing).
func (b *Browser) read(ctx context.Context, cmd wire.BrowserCommand) (wire.BrowserResult, bool) {
	if err := b.acquire(ctx); err != nil {
		return wire.BrowserResult{Error: sim.Interrupted(cmd.Action, err)}, false
	}
	defer b.release()
	t := b.controlled
	if t == nil {
		return b.failed(errNoTab), false
	}
	el := t.page.body()
	if cmd.Selector != "" {
		var err error
		if el, err = t.page.querySelector(cmd.Selector); err != nil {
			return b.failed(err), false
		}
		if el == nil {
			return b.stamped(), true
		}
	}
	res := b.stamped()
	if el == nil { // a document without a body reads as empty
		return res, false
	}
	text, err := t.page.readElement(ctx, el)
	if err != nil {
		res.Error = sim.Interrupted(cmd.Action, err)
		return res, false
	}
	res.Content = &text
	return res, false
}

// readElement is what read returns for one element: an input's or
// textarea's value, or else innerText, with secrets redacted by the rule
// of package redact (a secret field's value, and an element in a secret
// editable region, read as "[redacted]").
func (p *page) readElement(ctx context.Context, el *html.Node) (string, error) {
	switch {
	case is(el, "input"), is(el, "textarea"):
		if isSecretField(el) {
			return redacted, nil
		}
		return p.value(el), nil
	case inSecretRegion(el):
		return redacted, nil
	}
	return redactedText(ctx, el)
}

func (b *Browser) screenshot(ctx context.Context) wire.BrowserResult {
	if err := b.acquire(ctx); err != nil {
		return wire.BrowserResult{Error: sim.Interrupted(browser.Screenshot, err)}
	}
	t := b.controlled
	if t == nil {
		defer b.release()
		return b.failed(errNoTab)
	}
	res := b.stamped()
	shot, err := layoutPage(ctx, t.page, b.opts.Viewport)
	b.release()
	if err != nil {
		res.Error = sim.Interrupted(browser.Screenshot, err)
		return res
	}
	png, err := shot.encodePNG()
	if err != nil {
		res.Error = "screenshot failed: " + err.Error()
		return res
	}
	res.Image = base64.StdEncoding.EncodeToString(png)
	res.ImageMIMEType = "image/png"
	return res
}

func (b *Browser) listTabs(ctx context.Context) wire.BrowserResult {
	if err := b.acquire(ctx); err != nil {
		return wire.BrowserResult{Error: sim.Interrupted(browser.Tabs, err)}
	}
	defer b.release()
	res := b.stamped()
	res.Tabs = b.tabList()
	return res
}

// tabList describes the tabs. Lock held.
func (b *Browser) tabList() []wire.Tab {
	out := make([]wire.Tab, 0, len(b.tabs))
	for i, t := range b.tabs {
		out = append(out, wire.Tab{
			Index:      i,
			URL:        t.page.url.String(),
			Title:      t.page.tabTitle(),
			Active:     t == b.focused,
			Controlled: t == b.controlled && !b.openTask(),
		})
	}
	return out
}

// Tabs lists the open tabs, as the tabs command does.
func (b *Browser) Tabs(ctx context.Context) ([]wire.Tab, error) {
	if err := b.acquire(ctx); err != nil {
		return nil, err
	}
	defer b.release()
	return b.tabList(), nil
}

// OpenTab is the person opening a new tab at rawURL: it gets the focus but
// not control, so Active and Controlled part ways in the tabs list.
func (b *Browser) OpenTab(ctx context.Context, rawURL string) error {
	u, err := parseAddress(rawURL)
	if err != nil {
		return err
	}
	if err := b.acquire(ctx); err != nil {
		return err
	}
	t := b.newTabLocked()
	res := b.load(ctx, t, navRequest{method: "GET", url: u}, "open tab")
	if res.Error != "" {
		return errors.New(res.Error)
	}
	return nil
}

// FocusTab is the person switching to the tab at index.
func (b *Browser) FocusTab(ctx context.Context, index int) error {
	if err := b.acquire(ctx); err != nil {
		return err
	}
	defer b.release()
	if index < 0 || index >= len(b.tabs) {
		return fmt.Errorf("no tab at index %d: there are %d tabs", index, len(b.tabs))
	}
	b.focused = b.tabs[index]
	return nil
}

// CloseTab is the person closing the tab at index. Closing the controlled
// tab leaves none controlled, so the next navigate opens a new one; a load
// still running in it fails with net::ERR_ABORTED.
func (b *Browser) CloseTab(ctx context.Context, index int) error {
	if err := b.acquire(ctx); err != nil {
		return err
	}
	defer b.release()
	if index < 0 || index >= len(b.tabs) {
		return fmt.Errorf("no tab at index %d: there are %d tabs", index, len(b.tabs))
	}
	t := b.tabs[index]
	t.closed = true
	b.tabs = append(b.tabs[:index:index], b.tabs[index+1:]...)
	if b.controlled == t {
		b.controlled = nil
	}
	if b.focused == t {
		b.focused = nil
		switch {
		case index < len(b.tabs):
			b.focused = b.tabs[index] // Chrome focuses the tab to the right
		case len(b.tabs) > 0:
			b.focused = b.tabs[len(b.tabs)-1]
		}
	}
	return nil
}

// Back goes one step back in the controlled tab's history. A page that was
// the result of a POST is not sent again: like Chrome without a cached copy,
// the step fails with net::ERR_CACHE_MISS.
func (b *Browser) Back(ctx context.Context) wire.BrowserResult {
	if err := b.acquire(ctx); err != nil {
		return wire.BrowserResult{Error: sim.Interrupted("back", err)}
	}
	t := b.controlled
	if t == nil {
		defer b.release()
		return b.failed(errNoTab)
	}
	if len(t.back) == 0 {
		defer b.release()
		return b.failed(errors.New("cannot go back: the controlled tab has no earlier page"))
	}
	entry := t.back[len(t.back)-1]
	if entry.method != "GET" {
		defer b.release()
		return b.failed(&netError{code: "ERR_CACHE_MISS", url: entry.url.String()})
	}
	t.back = t.back[:len(t.back)-1]
	return b.load(ctx, t, navRequest{method: "GET", url: entry.url, fromHistory: true}, "back")
}
