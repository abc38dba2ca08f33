// Package chrome is the extension simulator's real browser: it drives
// Chromium through the DevTools protocol (github.com/chromedp/chromedp) and
// answers the bridge protocol's browser commands the way the extension
// does.
//
// It starts Debian's Chromium headless by default, with a fresh profile in
// a temporary directory removed on Close, or attaches to a browser that is
// already running (Options.URL). The controlled tab is opened by the first
// navigate, beside whatever tabs the browser already has, and reopened if
// someone closes it. Every page action is one evaluation of page.js with
// document.querySelector semantics:
//
//   - navigate loads the URL and waits for the load event;
//   - click calls el.click() and, when that starts a page load, waits for it;
//   - type sets the value through the element's native setter, dispatches
//     input and change, and with press_enter sends a real Enter key through
//     Input.dispatchKeyEvent, so forms submit as they do for a person;
//   - read returns innerText (an input's or textarea's value when the
//     selector names one), redacting secret fields and editable regions by
//     the rule of package sim/redact, as the in-memory browser does, and
//     content null for a selector that matches nothing;
//   - screenshot captures the controlled tab as a PNG;
//   - tabs lists the browser's page targets, flagging the controlled one.
//
// A JavaScript dialog (alert, confirm, prompt) is answered as it opens
// (OK for an alert, Cancel for the others) and named in the events, and
// in the error, of the command during which it opened, so that none waits
// on it (see dialogs.go).
//
// When the browser crashes or exits, every command fails at once with an
// error result that says so; none hangs.
package chrome

import (
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/google/uuid"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/sim"
	"github.com/infer-workspace/infer/sim/redact"
)

// ProfileOpenTask reproduces opentask 1.12.1 where it departs from the
// contract, as the fake browser's profile of the same name does: a click or
// type whose selector matches nothing succeeds, typing into an element that
// takes no value is a silent no-op, and tabs carry no controlled flag.
const ProfileOpenTask = "opentask-1.12.1"

// InstallHint says how to get a browser for this backend.
const InstallHint = "install Chromium (apt-get install -y chromium) or pass --chrome-path"

// Options configure a Browser.
type Options struct {
	// ExecPath is the browser to start; "" looks for chromium,
	// chromium-browser, google-chrome and google-chrome-stable on PATH.
	ExecPath string
	// URL attaches to a running browser's DevTools endpoint instead of
	// starting one: ws://127.0.0.1:9222/devtools/browser/… or
	// http://127.0.0.1:9222.
	URL string
	// Headful shows a window instead of running headless.
	Headful bool
	// Profile is "" for the contract or ProfileOpenTask.
	Profile string
	// Width and Height are the window size (default 1280×800, the fake
	// browser's viewport).
	Width, Height int
	// StartTimeout bounds starting or attaching (default 30s).
	StartTimeout time.Duration
	// Output receives the browser's own stdout and stderr (default:
	// discarded).
	Output io.Writer
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Sites are hosts a started browser reaches without a network: a
	// loopback server of this package serves each host's requests with
	// its handler (the demo site, so the demo works with Chromium too).
	// Chromium resolves the hosts to that server by its
	// --host-resolver-rules, which only a browser started here gets.
	Sites map[string]http.Handler
}

// FindExecPath returns the first Chromium or Chrome on PATH, or "".
func FindExecPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Browser is a Chromium driven as the extension's browser. It is safe for
// concurrent use: page commands take turns on the controlled tab, as they
// would in one real tab.
type Browser struct {
	opts      Options
	log       *slog.Logger
	attach    bool
	dataDir   string       // our profile directory, removed on Close; "" when attached
	sites     *http.Server // serves Options.Sites; nil when there are none
	sitesAddr string       // its address

	allocCancel   context.CancelFunc
	browserCtx    context.Context
	browserCancel context.CancelFunc

	lock chan struct{} // serializes page commands; a channel so waits honour ctx
	bg   sync.WaitGroup
	// entry is the name under which page.js is installed in every
	// document of the controlled tab; random, so pages cannot guess it.
	entry string

	mu      sync.Mutex
	tab     *tab
	focused target.ID
	order   []target.ID // page targets in the order first seen: the tab strip
	closed  bool
	gone    error // why the browser is gone, once it is
}

// tab is the controlled tab.
type tab struct {
	ctx      context.Context
	cancel   context.CancelFunc
	id       target.ID
	detached <-chan struct{}
	dialogs  dialogLog
}

var _ sim.Browser = (*Browser)(nil)

// New starts Chromium (or attaches to Options.URL) and returns once it
// answers, so a missing or broken browser is reported here rather than at
// the first command.
func New(ctx context.Context, opts Options) (*Browser, error) {
	switch opts.Profile {
	case "", ProfileOpenTask:
	default:
		return nil, fmt.Errorf("chrome: unknown profile %q: use \"\" for the contract or %q", opts.Profile, ProfileOpenTask)
	}
	if opts.Width <= 0 || opts.Height <= 0 {
		opts.Width, opts.Height = 1280, 800
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Browser{opts: opts, log: log, attach: opts.URL != "", lock: make(chan struct{}, 1),
		entry: "__inferSim" + strings.ReplaceAll(uuid.NewString(), "-", "")}

	var allocCtx context.Context
	if b.attach {
		if len(opts.Sites) > 0 {
			// Its host resolver is set when it starts, not from here.
			log.Info("chrome: a browser attached to cannot reach the built-in sites (the demo site); start one with infer-sim for those")
		}
		allocCtx, b.allocCancel = remote.NewAllocator(context.Background(), opts.URL)
	} else {
		path := opts.ExecPath
		if path == "" {
			path = FindExecPath()
		}
		if path == "" {
			return nil, errors.New("chrome: no Chromium or Chrome found on PATH: " + InstallHint)
		}
		if _, err := exec.LookPath(path); err != nil {
			return nil, fmt.Errorf("chrome: cannot run %s: %w; %s", path, err, InstallHint)
		}
		dir, err := os.MkdirTemp("", "infer-sim-chrome-")
		if err != nil {
			return nil, fmt.Errorf("chrome: create a profile directory: %w", err)
		}
		b.dataDir = dir
		out := opts.Output
		if out == nil {
			out = io.Discard
		}
		rules, err := b.serveSites(opts.Sites)
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		allocOpts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(path),
			chromedp.UserDataDir(dir),
			chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck,
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.Flag("password-store", "basic"),
			chromedp.WindowSize(opts.Width, opts.Height),
			chromedp.CombinedOutput(out),
		}
		if rules != "" {
			allocOpts = append(allocOpts, chromedp.Flag("host-resolver-rules", rules))
		}
		if opts.Headful {
			allocOpts = append(allocOpts, chromedp.VisibleWindow)
		} else {
			allocOpts = append(allocOpts, chromedp.Headless)
		}
		allocCtx, b.allocCancel = chromedp.NewExecAllocator(context.Background(), allocOpts...)
	}
	b.browserCtx, b.browserCancel = chromedp.NewContext(allocCtx)

	// The first call binds the browser's life to the context it is given,
	// so it gets browserCtx itself; the start timeout is enforced around
	// it.
	started := make(chan error, 1)
	var infos []*target.Info
	go func() {
		var err error
		infos, err = chromedp.Targets(b.browserCtx)
		started <- err
	}()
	timer := time.NewTimer(opts.StartTimeout)
	defer timer.Stop()
	var err error
	select {
	case err = <-started:
	case <-timer.C:
		err = fmt.Errorf("the browser did not answer within %s", opts.StartTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		b.shutdown()
		<-started
		if b.attach {
			return nil, fmt.Errorf("chrome: attach to %s: %w (start the browser with --remote-debugging-port and pass its address)", opts.URL, err)
		}
		return nil, fmt.Errorf("chrome: start the browser: %w; %s", err, InstallHint)
	}
	for _, info := range infos {
		if info.Type == "page" {
			b.order = append(b.order, info.TargetID)
			if !b.attach && b.focused == "" {
				b.focused = info.TargetID // a fresh browser's one blank tab
			}
		}
	}
	return b, nil
}

// serveSites starts the loopback server of sites, if any, and returns the
// browser's host resolver rules that send their hosts to it.
func (b *Browser) serveSites(sites map[string]http.Handler) (string, error) {
	if len(sites) == 0 {
		return "", nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("chrome: serve the built-in sites: %w", err)
	}
	hosts := make([]string, 0, len(sites))
	for h := range sites {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	route := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if site := sites[strings.ToLower(host)]; site != nil {
			site.ServeHTTP(w, r)
			return
		}
		http.Error(w, "infer-sim serves only "+strings.Join(hosts, ", ")+" here", http.StatusNotFound)
	})
	b.sites = &http.Server{Handler: route, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(b.log.Handler(), slog.LevelDebug)}
	b.sitesAddr = ln.Addr().String()
	b.log.Debug("chrome: serving the built-in sites", "hosts", hosts, "addr", b.sitesAddr)
	go b.sites.Serve(ln)
	rules := make([]string, len(hosts))
	for i, h := range hosts {
		rules[i] = "MAP " + h + " " + b.sitesAddr
	}
	return strings.Join(rules, ", "), nil
}

// Close closes the controlled tab, stops the browser it started (or
// detaches from one it attached to) and removes the temporary profile.
func (b *Browser) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	b.mu.Unlock()
	return b.shutdown()
}

func (b *Browser) shutdown() error {
	b.mu.Lock()
	t := b.tab
	b.tab = nil
	b.mu.Unlock()
	if t != nil {
		t.cancel()
	}
	b.browserCancel()
	b.allocCancel()
	b.bg.Wait()
	if b.sites != nil {
		b.sites.Close()
	}
	if b.dataDir == "" {
		return nil
	}
	// Chromium's helper processes can still be writing for a moment after
	// the browser exits.
	var err error
	for range 20 {
		if err = os.RemoveAll(b.dataDir); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("chrome: remove the profile directory %s: %w", b.dataDir, err)
}

// UserDataDir is the temporary profile directory ("" when attached).
func (b *Browser) UserDataDir() string { return b.dataDir }

// Process is the browser process this Browser started (nil when attached).
func (b *Browser) Process() *os.Process {
	if c := chromedp.FromContext(b.browserCtx); c != nil && c.Browser != nil {
		return c.Browser.Process()
	}
	return nil
}

// Do performs one browser command. Every failure is in the result's Error.
func (b *Browser) Do(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult {
	var (
		res      wire.BrowserResult
		nullRead bool
	)
	switch {
	case ctx.Err() != nil:
		res.Error = sim.Interrupted(cmd.Action, ctx.Err())
	case cmd.Action == browser.Tabs:
		res = b.tabs(ctx)
	case cmd.Action == browser.Navigate && cmd.URL == "":
		res.Error = "navigate requires url" // like opentask: no url or title
	case cmd.Action == browser.Navigate, cmd.Action == browser.Click, cmd.Action == browser.Type,
		cmd.Action == browser.Read, cmd.Action == browser.Screenshot:
		res, nullRead = b.pageCommand(ctx, cmd)
	default:
		res.Error = "unknown action: " + string(cmd.Action)
	}
	return sim.Complete(res, cmd.ID, nullRead)
}

func (b *Browser) openTask() bool { return b.opts.Profile == ProfileOpenTask }

// errNoTab is reported for page commands before the first navigate, in the
// fake browser's words.
var errNoTab = errors.New("no page is open in the controlled tab: navigate to a URL first")

// pageCommand runs a command on the controlled tab, one at a time.
func (b *Browser) pageCommand(ctx context.Context, cmd wire.BrowserCommand) (wire.BrowserResult, bool) {
	select {
	case b.lock <- struct{}{}:
	case <-ctx.Done():
		return wire.BrowserResult{Error: sim.Interrupted(cmd.Action, ctx.Err())}, false
	}
	defer func() { <-b.lock }()
	if err := b.alive(); err != nil {
		return wire.BrowserResult{Error: err.Error()}, false
	}
	t := b.controlled()
	if t == nil {
		if cmd.Action != browser.Navigate {
			return wire.BrowserResult{Error: errNoTab.Error()}, false
		}
		var err error
		if t, err = b.openTab(ctx); err != nil {
			return wire.BrowserResult{Error: b.explain(ctx, cmd.Action, err)}, false
		}
	}
	res, nullRead := b.onTab(ctx, t, cmd)
	return withDialogs(res, t.dialogs.take()), nullRead
}

// onTab runs a page command on the controlled tab t. Page lock held.
func (b *Browser) onTab(ctx context.Context, t *tab, cmd wire.BrowserCommand) (wire.BrowserResult, bool) {
	rctx, cancel := context.WithCancel(t.ctx)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()

	var (
		pr  pageResult
		err error
	)
	switch cmd.Action {
	case browser.Navigate:
		pr, err = b.navigate(rctx, t, cmd.URL)
	case browser.Click:
		pr, err = b.click(rctx, t, cmd.Selector)
	case browser.Type:
		pr, err = b.typeText(rctx, t, cmd)
	case browser.Read:
		pr, err = b.evaluate(rctx, pageArgs{Action: "read", Selector: cmd.Selector})
	case browser.Screenshot:
		return b.screenshot(ctx, rctx), false
	}
	res := wire.BrowserResult{URL: pr.URL, Title: pr.Title}
	switch {
	case err != nil:
		res.Error = b.explain(ctx, cmd.Action, err)
	case pr.Error != "":
		res.Error = pr.Error
	case pr.Missing && cmd.Action == browser.Read:
		return res, true // content null, as the extension sends it
	case pr.Missing && !b.openTask():
		res.Error = fmt.Sprintf("no element matches selector '%s'", cmd.Selector)
	case pr.NotEditable != "" && !b.openTask():
		res.Error = "cannot type into " + pr.NotEditable + ": it is not an input, textarea, select or contenteditable element"
	}
	res.Content = pr.Content
	return res, false
}

// alive reports the browser's death, if it died.
func (b *Browser) alive() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return errors.New("the browser was closed")
	}
	if b.gone != nil {
		return b.gone
	}
	if b.browserCtx.Err() != nil {
		b.gone = errors.New("the browser has exited (it crashed or was closed): restart infer-sim")
		return b.gone
	}
	return nil
}

// controlled is the controlled tab, or nil when there is none or it was
// closed (by the person, or by a crash of its page).
func (b *Browser) controlled() *tab {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.tab
	if t == nil {
		return nil
	}
	select {
	case <-t.detached:
		b.tab = nil
		b.bg.Go(t.cancel)
		return nil
	default:
		return t
	}
}

// openTab opens the controlled tab, as chrome.tabs.create does when the
// extension has none. Attaching keeps the person's tabs: ours is left open
// on Close. Page lock held.
func (b *Browser) openTab(ctx context.Context) (*tab, error) {
	var opts []chromedp.ContextOption
	if b.attach {
		opts = append(opts, chromedp.WithDetachOnCancel())
	}
	tabCtx, cancel := chromedp.NewContext(b.browserCtx, opts...)
	ready := make(chan error, 1)
	// A tab's first call binds its event loop to the context it gets, so
	// it must be the tab's own context; the command's deadline is applied
	// around it.
	b.bg.Go(func() {
		ready <- chromedp.Do(tabCtx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			// Focus behaves as in a focused window even when this one is
			// not, so typing and Enter reach the element.
			_, err := cdp.Call(ctx, t, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
			if err != nil {
				return err
			}
			// page.js is installed in every document once, so that each
			// command sends and compiles only a one-line call.
			_, err = cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
				Source: b.installer(), RunImmediately: new(true),
			})
			return err
		}))
	})
	select {
	case err := <-ready:
		if err != nil {
			cancel()
			return nil, err
		}
	case <-ctx.Done():
		b.bg.Go(func() {
			<-ready
			cancel()
		})
		return nil, ctx.Err()
	}
	c := chromedp.FromContext(tabCtx)
	detached, err := chromedp.Detached(tabCtx)
	if err != nil {
		cancel()
		return nil, err
	}
	t := &tab{ctx: tabCtx, cancel: cancel, id: c.Target.TargetID, detached: detached}
	b.answerDialogs(t)
	b.mu.Lock()
	b.tab = t
	b.focused = t.id // a new tab (in its own window) takes the focus
	b.order = append(b.order, t.id)
	b.mu.Unlock()
	return t, nil
}

// pageArgs are page.js's arguments.
type pageArgs struct {
	Action   string `json:"action"`
	Selector string `json:"selector"`
	Text     string `json:"text"`
}

// pageResult is page.js's answer.
type pageResult struct {
	URL         string  `json:"url"`
	Title       string  `json:"title"`
	Content     *string `json:"content"`
	Missing     bool    `json:"missing"`
	NotEditable string  `json:"notEditable"`
	Error       string  `json:"error"`
	Navigating  bool    `json:"navigating"`
	Navigations int     `json:"navigations"`
}

//go:embed page.js
var pageSource string

// pageScript is page.js with the redaction rule of package redact put in,
// so that Chromium redacts exactly what the in-memory browser does.
var pageScript = func() string {
	const slot = "/*INFER_REDACT_RULE*/ null"
	if !strings.Contains(pageSource, slot) {
		panic("page.js has no slot for the redaction rule")
	}
	return strings.Replace(pageSource, slot, redact.Script(), 1)
}()

// installer defines page.js under b.entry in a document.
func (b *Browser) installer() string {
	return `Object.defineProperty(globalThis, "` + b.entry + `", {value: (` + pageScript + `), configurable: true});`
}

// evaluate runs page.js once in the controlled tab's document: through
// its installed entry, or whole when the document lacks it (a page that
// deleted it, or a document the installer could not reach).
func (b *Browser) evaluate(ctx context.Context, args pageArgs) (pageResult, error) {
	a, err := json.Marshal(args)
	if err != nil {
		return pageResult{}, err
	}
	// The page answers with a JSON string: the protocol carries a string
	// more cheaply than an object returned by value.
	// Only click and settle answer with a promise; awaiting one costs a
	// little even when there is none.
	var opts []chromedp.EvaluateOption
	if args.Action == "click" || args.Action == "settle" {
		opts = append(opts, chromedp.EvalAwaitPromise)
	}
	call := `(typeof globalThis.` + b.entry + ` === "function" ? globalThis.` + b.entry + `(` + string(a) + `) : undefined)`
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](call, opts...))
	if errors.Is(err, chromedp.ErrJSUndefined) {
		text, err = chromedp.Run(ctx, chromedp.Evaluate[string]("("+pageScript+")("+string(a)+")", opts...))
	}
	if err != nil {
		return pageResult{}, err
	}
	var pr pageResult
	if err := json.Unmarshal([]byte(text), &pr); err != nil {
		return pageResult{}, fmt.Errorf("the page script answered %q: %w", text, err)
	}
	return pr, nil
}

func (b *Browser) navigate(ctx context.Context, t *tab, url string) (pageResult, error) {
	if err := load(ctx, t, url); err != nil {
		var le *chromedp.LoadError
		if errors.As(err, &le) {
			// A blocked load leaves the old page; a failed one shows
			// Chromium's error page, which the tab lists under the
			// address that failed.
			pr, _ := b.evaluate(ctx, pageArgs{Action: "info"})
			if pr.URL == "" || strings.HasPrefix(pr.URL, "chrome-error:") {
				pr = pageResult{URL: url}
				if info := b.targetInfo(ctx); info != nil && info.URL != "" {
					pr.URL, pr.Title = info.URL, info.Title
				}
			}
			return pageResult{URL: pr.URL, Title: pr.Title, Error: le.ErrorText + " at " + url}, nil
		}
		return pageResult{}, err
	}
	return b.evaluate(ctx, pageArgs{Action: "info"})
}

// load navigates the tab to url and waits for the new document's load
// event, or returns a *chromedp.LoadError when the navigation fails.
//
// It knows its own navigation by the loader id Page.navigate answers with.
// A navigation that an earlier command gave up on (its timeout ran out) may
// still be under way in the tab; starting this one aborts it, and its
// document request and that abort (net::ERR_ABORTED) can arrive while this
// one waits. chromedp.Navigate takes the first document request it then
// sees for its own, so it reported the old navigation's abort as this one's
// failure although this page loaded: an error a person in the browser would
// never see.
func load(ctx context.Context, t *tab, url string) error {
	w := &docWatch{main: cdp.FrameID(t.id), loaded: map[cdp.LoaderID]bool{}, changed: make(chan struct{}, 1)}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Listening starts before the navigation, so that a load that finishes
	// before Page.navigate's answer arrives is not missed.
	if err := chromedp.Listen(lctx, w.record); err != nil {
		return err
	}
	res, err := chromedp.Run(ctx, func(ctx context.Context, ct *chromedp.Target) (page.NavigateResult, error) {
		return cdp.Call(ctx, ct, page.Navigate, page.NavigateParams{URL: url})
	})
	switch {
	case err != nil:
		return err
	case res.ErrorText != "":
		return &chromedp.LoadError{ErrorText: res.ErrorText}
	case res.LoaderID == "":
		return nil // a same-document navigation (a fragment): nothing loads
	}
	for !w.loadedSince(res.LoaderID) {
		select {
		case <-w.changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// docWatch follows the documents committed in a tab's main frame and
// which of them finished loading.
type docWatch struct {
	main    cdp.FrameID
	changed chan struct{} // holds a signal after each recorded event

	mu     sync.Mutex
	docs   []cdp.LoaderID // in the order committed
	loaded map[cdp.LoaderID]bool
}

func (w *docWatch) record(ev any) {
	w.mu.Lock()
	switch ev := ev.(type) {
	case *page.EventLifecycleEvent:
		if ev.FrameID != w.main {
			break
		}
		switch ev.Name {
		case "init":
			w.docs = append(w.docs, ev.LoaderID)
		case "load":
			w.loaded[ev.LoaderID] = true
		}
	case *page.EventFrameStoppedLoading:
		// The frame stopped loading without a load event (window.stop,
		// say): the current document is as loaded as it gets. Events
		// arrive in order, so this is about the latest document.
		if ev.FrameID == w.main && len(w.docs) > 0 {
			w.loaded[w.docs[len(w.docs)-1]] = true
		}
	}
	w.mu.Unlock()
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// loadedSince reports whether the document of loader committed and the
// main frame's latest document has loaded since: that document, or one
// that replaced it before it loaded (a script that redirects at once),
// whose load a person would wait for just the same.
func (w *docWatch) loadedSince(loader cdp.LoaderID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range w.docs {
		if id == loader {
			return w.loaded[w.docs[len(w.docs)-1]]
		}
	}
	return false
}

// targetInfo is the browser's own description of the controlled tab, or
// nil.
func (b *Browser) targetInfo(ctx context.Context) *target.Info {
	t := b.controlled()
	if t == nil {
		return nil
	}
	rctx, cancel := context.WithCancel(b.browserCtx)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	infos, err := chromedp.Targets(rctx)
	if err != nil {
		return nil
	}
	for _, info := range infos {
		if info.TargetID == t.id {
			return info
		}
	}
	return nil
}

func (b *Browser) click(ctx context.Context, t *tab, selector string) (pageResult, error) {
	loads, stop := watchLoads(ctx, t)
	defer stop()
	pr, err := b.evaluate(ctx, pageArgs{Action: "click", Selector: selector})
	if err != nil && !contextGone(err) {
		return pr, err
	}
	if err == nil && !pr.Navigating && !loads.started() {
		return pr, nil
	}
	return b.afterLoad(ctx, loads)
}

func (b *Browser) typeText(ctx context.Context, t *tab, cmd wire.BrowserCommand) (pageResult, error) {
	pr, err := b.evaluate(ctx, pageArgs{Action: "type", Selector: cmd.Selector, Text: cmd.Text})
	if err != nil || !cmd.PressEnter || pr.Missing || pr.NotEditable != "" || pr.Error != "" {
		return pr, err
	}
	loads, stop := watchLoads(ctx, t)
	defer stop()
	err = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeKeyDown, input.DispatchKeyEventTypeKeyUp} {
			p := input.DispatchKeyEventParams{Type: typ, Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13, NativeVirtualKeyCode: 13}
			if typ == input.DispatchKeyEventTypeKeyDown {
				p.Text, p.UnmodifiedText = "\r", "\r"
			}
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, p); err != nil {
				return err
			}
		}
		return nil
	}))
	if err != nil {
		return pr, err
	}
	after, err := b.evaluate(ctx, pageArgs{Action: "settle"})
	if err != nil && !contextGone(err) {
		return after, err
	}
	if err == nil && after.Navigations == pr.Navigations && !loads.started() {
		return after, nil
	}
	return b.afterLoad(ctx, loads)
}

// afterLoad waits for the page load an action started, then describes the
// new page.
func (b *Browser) afterLoad(ctx context.Context, loads *loadWatch) (pageResult, error) {
	select {
	case <-loads.done:
	case <-ctx.Done():
		return pageResult{}, ctx.Err()
	}
	return b.evaluate(ctx, pageArgs{Action: "info"})
}

// loadWatch follows the main frame's loading from before an action, so a
// load that finishes before the action's own answer is not missed.
type loadWatch struct {
	mu       sync.Mutex
	loading  bool
	finished bool
	done     chan struct{}
}

func (w *loadWatch) started() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.loading || w.finished
}

// watchLoads starts watching the tab's main frame. Chromium gives a page's
// main frame the page target's id.
func watchLoads(ctx context.Context, t *tab) (*loadWatch, func()) {
	w := &loadWatch{done: make(chan struct{})}
	lctx, cancel := context.WithCancel(ctx)
	main := cdp.FrameID(t.id)
	err := chromedp.Listen(lctx, func(ev any) {
		w.mu.Lock()
		defer w.mu.Unlock()
		switch ev := ev.(type) {
		case *page.EventFrameStartedLoading:
			if ev.FrameID == main {
				w.loading = true
			}
		case *page.EventFrameStoppedLoading:
			if ev.FrameID == main && w.loading && !w.finished {
				w.finished = true
				close(w.done)
			}
		case *page.EventLoadEventFired:
			if w.loading && !w.finished {
				w.finished = true
				close(w.done)
			}
		}
	})
	if err != nil {
		// Without events, fall back on the page's own account.
		w.mu.Lock()
		w.finished = true
		close(w.done)
		w.mu.Unlock()
	}
	return w, cancel
}

// contextGone reports an evaluation cut short because the document went
// away: the action navigated.
func contextGone(err error) bool {
	var ce *cdproto.Error
	if !errors.As(err, &ce) {
		return false
	}
	msg := strings.ToLower(ce.Message)
	return strings.Contains(msg, "context was destroyed") || strings.Contains(msg, "navigated or closed") ||
		strings.Contains(msg, "cannot find context")
}

func (b *Browser) screenshot(cmdCtx, ctx context.Context) wire.BrowserResult {
	pr, err := b.evaluate(ctx, pageArgs{Action: "info"})
	res := wire.BrowserResult{URL: pr.URL, Title: pr.Title}
	if err != nil {
		res.Error = b.explain(cmdCtx, browser.Screenshot, err)
		return res
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		res.Error = b.explain(cmdCtx, browser.Screenshot, err)
		return res
	}
	res.Image = base64.StdEncoding.EncodeToString(png)
	res.ImageMIMEType = "image/png"
	return res
}

// tabs lists the page targets in tab-strip order. It needs no page lock:
// it only asks the browser.
func (b *Browser) tabs(ctx context.Context) wire.BrowserResult {
	if err := b.alive(); err != nil {
		return wire.BrowserResult{Error: err.Error()}
	}
	rctx, cancel := context.WithCancel(b.browserCtx)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	infos, err := chromedp.Targets(rctx)
	if err != nil {
		return wire.BrowserResult{Error: b.explain(ctx, browser.Tabs, err)}
	}
	pages := map[target.ID]*target.Info{}
	for _, info := range infos {
		if info.Type == "page" {
			pages[info.TargetID] = info
		}
	}
	var res wire.BrowserResult
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, info := range infos { // newcomers join the end of the strip
		if info.Type == "page" && !containsID(b.order, info.TargetID) {
			b.order = append(b.order, info.TargetID)
		}
	}
	live := b.order[:0]
	for _, id := range b.order {
		info, ok := pages[id]
		if !ok {
			continue // closed
		}
		live = append(live, id)
		controlled := b.tab != nil && b.tab.id == id
		if controlled {
			res.URL, res.Title = info.URL, info.Title
		}
		res.Tabs = append(res.Tabs, wire.Tab{
			Index:      len(res.Tabs),
			URL:        info.URL,
			Title:      info.Title,
			Active:     id == b.focused,
			Controlled: controlled && !b.openTask(),
		})
	}
	b.order = live
	return res
}

func containsID(ids []target.ID, id target.ID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// explain words a failed call: the command's own timeout or cancellation,
// the browser's death, or the browser's error.
func (b *Browser) explain(cmdCtx context.Context, action browser.Action, err error) string {
	if cmdCtx.Err() != nil {
		return sim.Interrupted(action, cmdCtx.Err())
	}
	if b.browserCtx.Err() != nil {
		return b.exited(err)
	}
	if errors.Is(err, context.Canceled) {
		// A tab's context ends a moment before the browser's when the
		// whole browser dies; give the browser's a moment to say so, so
		// that a crash is not reported as a closed tab.
		t := time.NewTimer(browserGoneGrace)
		defer t.Stop()
		select {
		case <-b.browserCtx.Done():
			return b.exited(err)
		case <-cmdCtx.Done():
			return sim.Interrupted(action, cmdCtx.Err())
		case <-t.C:
		}
		return string(action) + " failed: the controlled tab was closed"
	}
	return string(action) + " failed: " + err.Error()
}

// browserGoneGrace is how long a closed tab waits to be explained by the
// browser's exit instead.
const browserGoneGrace = time.Second

// exited records and words the browser's death, err being what showed it.
func (b *Browser) exited(err error) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gone == nil {
		b.gone = fmt.Errorf("the browser has exited (%v): restart infer-sim", err)
	}
	return b.gone.Error()
}
