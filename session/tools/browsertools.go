package tools

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // decoders for screenshot dimensions
	_ "image/jpeg"
	_ "image/png"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/llm"
)

const (
	browserTimeout = 30 * time.Second
	// pageTextLimit caps page text handed to the model, in characters.
	pageTextLimit = 20_000
)

// ErrNoBrowser is the error every browser tool returns at once when no
// extension is connected, worded for the model to relay.
var ErrNoBrowser = errors.New("No browser is connected: ask the person to open the extension and connect it (infer pair shows the steps)")

// browserOffError is ErrNoBrowser when infer runs without a bridge at all:
// no extension can connect, so its message says why and what the person
// can do instead of asking them to connect one.
type browserOffError struct{ why string }

func (e browserOffError) Error() string {
	return "Browser use is off in this infer, so no browser tool can work: " + e.why + " Tell the person; do not retry browser tools until they have."
}

// Is makes errors.Is(err, ErrNoBrowser) hold.
func (e browserOffError) Is(target error) bool { return target == ErrNoBrowser }

// noBrowserError is ErrNoBrowser with what the driver knew.
type noBrowserError struct{ err error }

func (e noBrowserError) Error() string {
	return "No browser is connected: " + e.err.Error() + ". Tell the person; do not retry browser tools until they say the extension is connected."
}

// Is makes errors.Is(err, ErrNoBrowser) hold.
func (e noBrowserError) Is(target error) bool { return target == ErrNoBrowser }

// noBrowser is the error of a browser tool called with no browser.
func (e *Env) noBrowser() error {
	if e.BrowserOff != "" {
		return browserOffError{e.BrowserOff}
	}
	return ErrNoBrowser
}

// isBrowser reports whether t acts through the person's browser.
func isBrowser(t Tool) bool {
	switch t.(type) {
	case navigateTool, clickTool, typeTool, readPageTool, screenshotTool, tabsTool:
		return true
	}
	return false
}

// do runs one browser command, mapping the driver's errors to text a
// model can act on, and remembers the tab's URL for site grants.
func do(ctx context.Context, env *Env, cmd browser.Command) (browser.Result, error) {
	if env.Browser == nil {
		return browser.Result{}, env.noBrowser()
	}
	// cmd.Timeout stays zero: the driver then applies the person's
	// extension.command_timeout, shortened to ctx's deadline when that
	// comes first. Setting it to the tool's own deadline here would
	// override the configured limit with the tool timeout.
	res, err := env.Browser.Do(ctx, cmd)
	if err != nil {
		return res, browserError(ctx, err)
	}
	env.sawURL(res.URL)
	return res, nil
}

// browserPausedError is what the model hears while two browsers take turns
// on the bridge (browser.ErrFlapping): retrying cannot help, only the
// person can, so it says so and what to ask of them.
type browserPausedError struct{}

func (browserPausedError) Error() string {
	return "Browser commands are paused: two browsers with the extension and this token keep taking the connection from each other, " +
		"so infer sends commands to neither. Ask the person to close the extension in one of the browsers " +
		"(or give it another infer's port and token); do not retry browser tools until they say it is done."
}

// Is makes errors.Is(err, browser.ErrFlapping) hold.
func (browserPausedError) Is(target error) bool { return target == browser.ErrFlapping }

func browserError(ctx context.Context, err error) error {
	var ce *browser.CommandError
	switch {
	case errors.Is(err, browser.ErrFlapping):
		return browserPausedError{}
	case errors.Is(err, browser.ErrNotConnected) && err != browser.ErrNotConnected:
		// The driver says more (that it waited, whose browser it is): keep it.
		return noBrowserError{err}
	case errors.Is(err, browser.ErrNotConnected):
		return ErrNoBrowser
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, browser.ErrTimeout):
		return errors.New(timeoutText)
	case errors.Is(err, browser.ErrDisconnected):
		return errors.New("the browser extension disconnected before answering; ask the person to check that the extension is connected, then try again")
	case errors.As(err, &ce):
		return fmt.Errorf("the browser reported an error: %s", ce.Message)
	}
	return err
}

// pageLine describes the controlled tab after an action.
func pageLine(res browser.Result) string {
	switch {
	case res.Title != "" && res.URL != "":
		return fmt.Sprintf("%s (%s)", res.Title, res.URL)
	case res.URL != "":
		return res.URL
	case res.Title != "":
		return res.Title
	}
	return "an unknown page"
}

// siteOf returns a URL's origin (scheme://host[:port]), or "".
func siteOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

// Names of the browser tools.
const (
	NameBrowserNavigate   = "BrowserNavigate"
	NameBrowserClick      = "BrowserClick"
	NameBrowserType       = "BrowserType"
	NameBrowserRead       = "BrowserRead"
	NameBrowserScreenshot = "BrowserScreenshot"
	NameBrowserTabs       = "BrowserTabs"
)

// BrowserNames lists the built-in tools that act through the person's
// browser, in the order a model is offered them.
func BrowserNames() []string {
	reg := builtinRegistry()
	var out []string
	for _, name := range reg.order {
		if isBrowser(reg.tools[name]) {
			out = append(out, name)
		}
	}
	return out
}

// noArgs is the arguments of a tool that takes none.
type noArgs struct{}

var noArgsSchema = schemaOf[noArgs]()

// targeted is a browser call's Shown: the summary is what it acts on,
// and so is the target.
func targeted(what string, detail ...Part) Shown {
	return Shown{Summary: what, Target: what, HasTarget: true, Detail: detail}
}

type navigateTool struct{}

type navigateArgs struct {
	URL string `json:"url" limits:"minLength=1" jsonschema:"Absolute http or https URL to open."`
}

var navigateSchema = schemaOf[navigateArgs]()

func (navigateTool) Name() string { return NameBrowserNavigate }

func (navigateTool) Description() string {
	return `Open a URL in the person's browser, in the tab infer controls, and wait for it to load. Returns the page's final URL and title.

Example:
{"url": "https://github.com/infer-workspace/infer/issues"}`
}

func (navigateTool) Schema() json.RawMessage { return navigateSchema() }

func (navigateTool) show(args string) Shown {
	return showAs(args, func(a navigateArgs) Shown { return targeted(a.URL, field("url: ", a.URL)) })
}

func (navigateTool) Timeout() time.Duration { return browserTimeout }
func (navigateTool) ReadOnly() bool         { return false }

// checkArgs refuses a URL that could not be opened before anyone is asked
// to approve opening it.
func (navigateTool) checkArgs(raw json.RawMessage) error {
	var a navigateArgs
	if err := decode(raw, &a); err != nil {
		return err
	}
	return checkURL(a.URL)
}

func (navigateTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (Output, error) {
	var a navigateArgs
	if err := decode(raw, &a); err != nil {
		return Output{}, err
	}
	if err := checkURL(a.URL); err != nil {
		return Output{}, err
	}
	res, err := do(ctx, env, browser.Command{Action: browser.Navigate, URL: a.URL})
	if err != nil {
		return Output{}, err
	}
	if res.URL == "" {
		res.URL = a.URL
	}
	return Output{Text: withDialogs("Navigated to "+pageLine(res)+".", res), Success: true, page: res.URL}, nil
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url %q is not an absolute http or https URL; write it in full, e.g. https://example.com/page", raw)
	}
	return nil
}

type clickTool struct{}

type clickArgs struct {
	Selector string `json:"selector" limits:"minLength=1" jsonschema:"CSS selector of the element to click."`
}

var clickSchema = schemaOf[clickArgs]()

func (clickTool) Name() string { return NameBrowserClick }

func (clickTool) Description() string {
	return `Click the first element matching a CSS selector in the controlled tab. Read the page first to choose a selector.

Examples:
{"selector": "button[type=submit]"}
{"selector": "a[href='/login']"}`
}

func (clickTool) Schema() json.RawMessage { return clickSchema() }

func (clickTool) show(args string) Shown {
	return showAs(args, func(a clickArgs) Shown { return targeted(a.Selector, field("click: ", a.Selector)) })
}

func (clickTool) Timeout() time.Duration { return browserTimeout }
func (clickTool) ReadOnly() bool         { return false }

func (clickTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (Output, error) {
	var a clickArgs
	if err := decode(raw, &a); err != nil {
		return Output{}, err
	}
	res, err := do(ctx, env, browser.Command{Action: browser.Click, Selector: a.Selector})
	if err != nil {
		return Output{}, err
	}
	return Output{Text: withDialogs(fmt.Sprintf("Clicked %s. The tab shows %s.", a.Selector, pageLine(res)), res), Success: true, page: res.URL}, nil
}

type typeTool struct{}

type typeArgs struct {
	Selector   string `json:"selector" limits:"minLength=1" jsonschema:"CSS selector of the field."`
	Text       string `json:"text" jsonschema:"The text to put in the field."`
	PressEnter bool   `json:"press_enter,omitempty" jsonschema:"Press Enter after typing (default false)."`
}

var typeSchema = schemaOf[typeArgs]()

func (typeTool) Name() string { return NameBrowserType }

func (typeTool) Description() string {
	return `Replace the value of the input or text area matching a CSS selector with text, optionally pressing Enter afterwards (to submit a search, for example).

Examples:
{"selector": "input[name=q]", "text": "infer terminal workspace", "press_enter": true}
{"selector": "#comment", "text": "Thanks, this fixed it."}`
}

func (typeTool) Schema() json.RawMessage { return typeSchema() }

// show quotes the text for the person, but its target leaves it out: the
// text may be a password, and lines others read need only the field.
func (typeTool) show(args string) Shown {
	return showAs(args, func(a typeArgs) Shown {
		enter := ""
		if a.PressEnter {
			enter = " ⏎"
		}
		s := Shown{
			Summary:   oneLine(fmt.Sprintf("%q into %s", a.Text, a.Selector) + enter),
			Target:    "text into " + a.Selector + enter,
			HasTarget: true,
			Detail:    []Part{field("type: ", a.Text), field("into: ", a.Selector)},
		}
		if a.PressEnter {
			s.Detail = append(s.Detail, note("then press enter", false))
		}
		return s
	})
}

func (typeTool) Timeout() time.Duration { return browserTimeout }
func (typeTool) ReadOnly() bool         { return false }

func (typeTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (Output, error) {
	var a typeArgs
	if err := decode(raw, &a); err != nil {
		return Output{}, err
	}
	res, err := do(ctx, env, browser.Command{Action: browser.Type, Selector: a.Selector, Text: a.Text, PressEnter: a.PressEnter})
	if err != nil {
		return Output{}, err
	}
	enter := ""
	if a.PressEnter {
		enter = " and pressed Enter"
	}
	return Output{Text: withDialogs(fmt.Sprintf("Typed %d characters into %s%s. The tab shows %s.", len([]rune(a.Text)), a.Selector, enter, pageLine(res)), res), Success: true, page: res.URL}, nil
}

type readPageTool struct{}

type readPageArgs struct {
	Selector string `json:"selector,omitempty" jsonschema:"CSS selector of the element to read (default: the whole page)."`
}

var readPageSchema = schemaOf[readPageArgs]()

func (readPageTool) Name() string { return NameBrowserRead }

func (readPageTool) Description() string {
	return `Read the visible text of the controlled tab: the whole page, or the first element matching a CSS selector. Secret fields are redacted by the extension.

Long text is cut at 20000 characters with a marker; read a narrower selector to see a part in full.

Examples:
{}
{"selector": "main"}
{"selector": "#issue-list"}`
}

func (readPageTool) Schema() json.RawMessage { return readPageSchema() }

func (readPageTool) show(args string) Shown {
	return showAs(args, func(a readPageArgs) Shown {
		if a.Selector == "" {
			return targeted("whole page", field("read: ", "(whole page)"))
		}
		return targeted(a.Selector, field("read: ", a.Selector))
	})
}

func (readPageTool) Timeout() time.Duration { return browserTimeout }
func (readPageTool) ReadOnly() bool         { return true }

func (readPageTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (Output, error) {
	var a readPageArgs
	if err := decode(raw, &a); err != nil {
		return Output{}, err
	}
	res, err := do(ctx, env, browser.Command{Action: browser.Read, Selector: a.Selector})
	if err != nil {
		return Output{}, err
	}
	if res.Missing {
		return Output{}, fmt.Errorf("no element matches the selector %q on %s; read without a selector to see the whole page, then pick a selector from it", a.Selector, pageLine(res))
	}
	text := strings.TrimSpace(res.Content)
	if text == "" {
		text = "(the element has no visible text)"
	}
	if r := []rune(text); len(r) > pageTextLimit {
		hint := "read a narrower selector (such as \"main\", \"article\" or an element's id) to see the rest"
		text = fmt.Sprintf("%s\n[... %d more characters not shown (%d in total); %s ...]", string(r[:pageTextLimit]), len(r)-pageTextLimit, len(r), hint)
	}
	return Output{Text: withDialogs("Page: "+pageLine(res)+"\n\n"+text, res), Success: true}, nil
}

type screenshotTool struct{}

func (screenshotTool) Name() string { return NameBrowserScreenshot }

func (screenshotTool) Description() string {
	return `Capture the visible part of the controlled tab as an image, which you can see. The picture is also saved as an artifact; its path is returned, and writing ![screenshot](/artifacts/<path>) in your answer shows it to the person.

Example:
{}`
}

func (screenshotTool) Schema() json.RawMessage { return noArgsSchema() }

// show: nothing to name; the approval box shows the empty arguments.
func (screenshotTool) show(string) Shown { return Shown{HasTarget: true} }

func (screenshotTool) Timeout() time.Duration { return browserTimeout }
func (screenshotTool) ReadOnly() bool         { return true }

func (screenshotTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (Output, error) {
	res, err := do(ctx, env, browser.Command{Action: browser.Screenshot})
	if err != nil {
		return Output{}, err
	}
	if env.ArtifactsDir == "" {
		return Output{}, errors.New("no artifacts directory is configured, so the screenshot cannot be saved")
	}
	if len(res.Image) == 0 {
		return Output{}, errors.New("the browser returned an empty screenshot; try again")
	}
	mime := res.ImageMIME
	if mime == "" {
		mime = "image/png"
	}
	ext := ".png"
	switch mime {
	case "image/jpeg":
		ext = ".jpg"
	case "image/webp":
		ext = ".webp"
	case "image/gif":
		ext = ".gif"
	}
	rel, abs, err := saveArtifact(env, "screenshots", ext, res.Image)
	if err != nil {
		return Output{}, fmt.Errorf("could not save the screenshot: %w", err)
	}
	size := fmt.Sprintf("%d bytes", len(res.Image))
	if cfg, format, err := image.DecodeConfig(bytes.NewReader(res.Image)); err == nil {
		size = fmt.Sprintf("%d×%d %s, %d bytes", cfg.Width, cfg.Height, strings.ToUpper(format), len(res.Image))
	}
	text := fmt.Sprintf("Screenshot of %s saved to %s (%s). Show it to the person with ![screenshot](/artifacts/%s).", pageLine(res), abs, size, rel)
	return Output{
		Text:      withDialogs(text, res),
		Success:   true,
		Images:    []llm.Image{{MIME: mime, Data: res.Image}},
		Artifacts: []string{rel},
	}, nil
}

// artifactIDBytes is how much randomness an artifact's name carries. The
// bridge serves /artifacts/ to the extension's <img>, which cannot send a
// token, so the name is the only secret: 128 bits cannot be guessed by a
// process in the sandbox or another local user, while the 24 bits it once
// had could be walked in minutes.
const artifactIDBytes = 16

// saveArtifact writes data to <ArtifactsDir>/<dir>/<time>-<id><ext>, in a
// directory only the person can enter, and returns the slash-separated
// path relative to ArtifactsDir and the absolute path.
func saveArtifact(env *Env, dir, ext string, data []byte) (string, string, error) {
	full := filepath.Join(env.ArtifactsDir, dir)
	if err := os.MkdirAll(full, 0o700); err != nil {
		return "", "", err
	}
	var id [artifactIDBytes]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", "", err
	}
	name := env.now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(id[:]) + ext
	abs := filepath.Join(full, name)
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", "", err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(abs)
		return "", "", err
	}
	pruneArtifacts(env.ArtifactsDir, env.ArtifactsMaxBytes, abs)
	return dir + "/" + name, abs, nil
}

type tabsTool struct{}

func (tabsTool) Name() string { return NameBrowserTabs }

func (tabsTool) Description() string {
	return `List the browser's open tabs with their titles and URLs, marking the tab infer controls and the focused one.

Example:
{}`
}

func (tabsTool) Schema() json.RawMessage { return noArgsSchema() }

// show: nothing to name; the approval box shows the empty arguments.
func (tabsTool) show(string) Shown { return Shown{HasTarget: true} }

func (tabsTool) Timeout() time.Duration { return browserTimeout }
func (tabsTool) ReadOnly() bool         { return true }

func (tabsTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (Output, error) {
	res, err := do(ctx, env, browser.Command{Action: browser.Tabs})
	if err != nil {
		return Output{}, err
	}
	if len(res.Tabs) == 0 {
		return Output{Text: "No tabs are open.", Success: true}, nil
	}
	var b strings.Builder
	if len(res.Tabs) == 1 {
		b.WriteString("1 open tab:\n")
	} else {
		fmt.Fprintf(&b, "%d open tabs:\n", len(res.Tabs))
	}
	for _, t := range res.Tabs {
		var marks []string
		if t.Controlled {
			marks = append(marks, "controlled")
		}
		if t.Active {
			marks = append(marks, "focused")
		}
		mark := ""
		if len(marks) > 0 {
			mark = " [" + strings.Join(marks, ", ") + "]"
		}
		title := t.Title
		if title == "" {
			title = "(untitled)"
		}
		fmt.Fprintf(&b, "%d. %s — %s%s\n", t.Index, title, t.URL, mark)
	}
	return Output{Text: b.String(), Success: true}, nil
}
