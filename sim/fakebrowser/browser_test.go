package fakebrowser

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/infer-workspace/infer/assets"
	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/internal/leaks"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leaks.Options()...)
}

var _ interface {
	Do(context.Context, wire.BrowserCommand) wire.BrowserResult
} = (*Browser)(nil)

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	if _, err := New(Options{Profile: "chrome-99"}); err == nil || !strings.Contains(err.Error(), `unknown profile "chrome-99"`) {
		t.Errorf("unknown profile: err = %v", err)
	}
	if _, err := New(Options{Viewport: image.Point{X: 10, Y: 10}}); err == nil {
		t.Error("a 10x10 viewport was accepted")
	}
	if _, err := New(Options{Hosts: map[string]http.Handler{"x.test": nil}}); err == nil {
		t.Error("a nil host handler was accepted")
	}
}

func TestBeforeFirstNavigate(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, nil)
	res := mustOK(t, b, wire.BrowserCommand{Action: browser.Tabs})
	if res.URL != "" || res.Title != "" {
		t.Errorf("url/title before the first navigate: %q %q", res.URL, res.Title)
	}
	want := []wire.Tab{{Index: 0, URL: "about:blank", Title: "about:blank", Active: true}}
	if fmt.Sprint(res.Tabs) != fmt.Sprint(want) {
		t.Errorf("tabs = %+v, want %+v", res.Tabs, want)
	}
	for _, action := range []browser.Action{browser.Read, browser.Click, browser.Type, browser.Screenshot} {
		res := run(t, b, wire.BrowserCommand{Action: action, Selector: "h1"})
		if res.Error != errNoTab.Error() || res.URL != "" || res.Title != "" {
			t.Errorf("%s before navigate: %+v", action, res)
		}
	}
}

func TestResultShapeMatchesTheExtension(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, map[string]string{"/": "<title>T</title><h1>Hi</h1>"})
	res := open(t, b, "http://fixture.test/")
	data, _ := json.Marshal(res)
	want := `{"id":"test-id","url":"http://fixture.test/","title":"T","content":"","events":[],"error":""}`
	if string(data) != want {
		t.Errorf("navigate result\n got %s\nwant %s", data, want)
	}
	res = run(t, b, wire.BrowserCommand{Action: browser.Read, Selector: "#does-not-exist"})
	data, _ = json.Marshal(res)
	want = `{"id":"test-id","url":"http://fixture.test/","title":"T","content":null,"events":[],"error":""}`
	if string(data) != want {
		t.Errorf("missing read\n got %s\nwant %s", data, want)
	}
}

func TestProtocolErrors(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, map[string]string{"/": "<title>T</title><div id=d>x</div>"})
	open(t, b, "http://fixture.test/")
	cases := []struct {
		cmd      wire.BrowserCommand
		err      string
		stamped  bool
		nullRead bool
	}{
		{wire.BrowserCommand{Action: "scroll", Selector: "body"}, "unknown action: scroll", false, false},
		{wire.BrowserCommand{Action: ""}, "unknown action: ", false, false},
		{wire.BrowserCommand{Action: browser.Navigate}, "navigate requires url", false, false},
		{wire.BrowserCommand{Action: browser.Navigate, URL: "example.com/x"}, `invalid url "example.com/x": give an absolute URL with its scheme, such as https://example.com/x`, true, false},
		{wire.BrowserCommand{Action: browser.Navigate, URL: "ftp://example.com/"}, `cannot load "ftp://example.com/": the fake browser loads http, https, data: and about:blank URLs`, true, false},
		{wire.BrowserCommand{Action: browser.Click, Selector: "div["}, "Failed to execute 'querySelector' on 'Document': 'div[' is not a valid selector.", true, false},
		{wire.BrowserCommand{Action: browser.Read, Selector: "##x"}, "Failed to execute 'querySelector' on 'Document': '##x' is not a valid selector.", true, false},
		{wire.BrowserCommand{Action: browser.Type, Selector: "a >", Text: "x"}, "Failed to execute 'querySelector' on 'Document': 'a >' is not a valid selector.", true, false},
		{wire.BrowserCommand{Action: browser.Click, Selector: ""}, "Failed to execute 'querySelector' on 'Document': The provided selector is empty.", true, false},
		{wire.BrowserCommand{Action: browser.Click, Selector: "#does-not-exist"}, "no element matches selector '#does-not-exist'", true, false},
		{wire.BrowserCommand{Action: browser.Type, Selector: "#does-not-exist", Text: "x"}, "no element matches selector '#does-not-exist'", true, false},
		{wire.BrowserCommand{Action: browser.Type, Selector: "#d", Text: "x"}, `cannot type into <div id="d">: it is not an input, textarea, select or contenteditable element`, true, false},
		{wire.BrowserCommand{Action: browser.Read, Selector: "#does-not-exist"}, "", true, true},
		{wire.BrowserCommand{Action: browser.Read, Selector: "p::before"}, "", true, true},
	}
	for _, tc := range cases {
		res := run(t, b, tc.cmd)
		if res.Error != tc.err {
			t.Errorf("%+v: error %q, want %q", tc.cmd, res.Error, tc.err)
		}
		if stamped := res.URL == "http://fixture.test/" && res.Title == "T"; stamped != tc.stamped {
			t.Errorf("%+v: url/title %q %q, stamped want %v", tc.cmd, res.URL, res.Title, tc.stamped)
		}
		if (res.Content == nil) != tc.nullRead {
			t.Errorf("%+v: content null = %v", tc.cmd, res.Content == nil)
		}
	}
}

func TestOpenTaskProfileQuirks(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{Profile: ProfileOpenTask}, map[string]string{"/": "<title>T</title><div id=d>x</div>"})
	open(t, b, "http://fixture.test/")
	for _, cmd := range []wire.BrowserCommand{
		{Action: browser.Click, Selector: "#does-not-exist"},
		{Action: browser.Type, Selector: "#does-not-exist", Text: "x"},
		{Action: browser.Type, Selector: "#d", Text: "x"},
	} {
		res := run(t, b, cmd)
		if res.Error != "" || res.URL != "http://fixture.test/" || res.Content == nil || *res.Content != "" {
			t.Errorf("%+v under opentask: %+v", cmd, res)
		}
	}
	if got := read(t, b, "#d"); got != "x" {
		t.Errorf("typing into a div changed it: %q", got)
	}
	res := run(t, b, wire.BrowserCommand{Action: browser.Read, Selector: "#does-not-exist"})
	if res.Error != "" || res.Content != nil {
		t.Errorf("missing read under opentask: %+v", res)
	}
	res = run(t, b, wire.BrowserCommand{Action: browser.Read, Selector: "div["})
	if !strings.Contains(res.Error, "is not a valid selector") {
		t.Errorf("invalid selector under opentask: %q", res.Error)
	}
	for _, tab := range mustOK(t, b, wire.BrowserCommand{Action: browser.Tabs}).Tabs {
		if tab.Controlled {
			t.Errorf("opentask profile flagged a controlled tab: %+v", tab)
		}
	}
}

func TestSelectors(t *testing.T) {
	t.Parallel()
	page := `<title>S</title>
	<main><ul class="list"><li><a href="/1">one</a></li><li><a href="/2">two</a></li></ul>
	<section id="s"><h2>Second heading</h2><p class="lead note">Lead</p></section></main>
	<h1>Late heading</h1>
	<template><p class="in-template">never</p></template>
	<form id="f"><input name="a" type="text" value="A"><input name="b" type="checkbox" checked value="B"></form>`
	b := newTestBrowser(t, Options{}, map[string]string{"/": page})
	open(t, b, "http://fixture.test/")
	cases := map[string]string{
		"main > ul.list li:nth-child(2) a": "two",
		"h1, h2":                           "Second heading", // first in document order, not first in the list
		"#s .lead.note":                    "Lead",
		"section:has(p) h2":                "Second heading",
		"li:not(:first-child)":             "two",
		"form#f input[type=text]":          "A",
		"input:checked":                    "B",
		`input[name="b"]`:                  "B",
		"a[href^='/']":                     "one",
	}
	for sel, want := range cases {
		if got := read(t, b, sel); got != want {
			t.Errorf("read %q = %q, want %q", sel, got, want)
		}
	}
	if res := run(t, b, wire.BrowserCommand{Action: browser.Read, Selector: ".in-template"}); res.Content != nil {
		t.Errorf("a selector matched inside a template: %q", *res.Content)
	}
}

func TestTypeVariants(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, map[string]string{"/": `<title>T</title>
		<input id=num type=number value=3>
		<input id=mail type=email>
		<input id=file type=file>
		<textarea id=ta>old</textarea>
		<div id=ed contenteditable><b>old</b> text</div>
		<select id=sel><option value=a>Apple</option><option value=b>Banana</option></select>`})
	open(t, b, "http://fixture.test/")
	typeInto(t, b, "#num", "42.5", false)
	if got := read(t, b, "#num"); got != "42.5" {
		t.Errorf("number = %q", got)
	}
	typeInto(t, b, "#num", "forty", false)
	if got := read(t, b, "#num"); got != "" {
		t.Errorf("invalid number kept: %q", got)
	}
	typeInto(t, b, "#mail", "  a@b.c\n ", false)
	if got := read(t, b, "#mail"); got != "a@b.c" {
		t.Errorf("email = %q", got)
	}
	res := run(t, b, wire.BrowserCommand{Action: browser.Type, Selector: "#file", Text: "/etc/passwd"})
	if !strings.Contains(res.Error, "may only be programmatically set to the empty string") {
		t.Errorf("file input error = %q", res.Error)
	}
	typeInto(t, b, "#ta", "new\r\ntext", false)
	if got := read(t, b, "#ta"); got != "new\ntext" {
		t.Errorf("textarea = %q", got)
	}
	typeInto(t, b, "#ed", "fresh words", false)
	if got := read(t, b, "#ed"); got != "fresh words" {
		t.Errorf("contenteditable = %q", got)
	}
	typeInto(t, b, "#sel", "b", false)
	if got := read(t, b, "#sel option:checked"); got != "Banana" {
		t.Errorf("selected option = %q", got)
	}
	typeInto(t, b, "#sel", "zzz", false)
	if res := run(t, b, wire.BrowserCommand{Action: browser.Read, Selector: "#sel option:checked"}); res.Content != nil {
		t.Errorf("a select set to an unknown value still has %q selected", *res.Content)
	}
}

func TestTitles(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, map[string]string{
		"/untitled": "<p>x</p>",
		"/spaced":   "<title>\n  A   spaced\ttitle </title>",
		"/svg":      "<svg><title>not me</title></svg><title>Me</title>",
	})
	for path, want := range map[string]string{
		"/untitled":     "fixture.test/untitled",
		"/untitled?q=1": "fixture.test/untitled?q=1",
		"/spaced":       "A spaced title",
		"/svg":          "Me",
	} {
		if res := open(t, b, "http://fixture.test"+path); res.Title != want {
			t.Errorf("%s title = %q, want %q", path, res.Title, want)
		}
	}
}

func TestTabs(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, map[string]string{
		"/a": "<title>A</title>", "/b": "<title>B</title>", "/c": "<title>C</title>",
	})
	ctx := testCtx(t)
	open(t, b, "http://fixture.test/a")
	tabs := mustOK(t, b, wire.BrowserCommand{Action: browser.Tabs}).Tabs
	want := []wire.Tab{
		{Index: 0, URL: "about:blank", Title: "about:blank"},
		{Index: 1, URL: "http://fixture.test/a", Title: "A", Active: true, Controlled: true},
	}
	if fmt.Sprint(tabs) != fmt.Sprint(want) {
		t.Fatalf("tabs = %+v\nwant %+v", tabs, want)
	}

	// The person opens a tab: it gets the focus, the agent keeps control.
	if err := b.OpenTab(ctx, "http://fixture.test/b"); err != nil {
		t.Fatal(err)
	}
	open(t, b, "http://fixture.test/c")
	tabs, _ = b.Tabs(ctx)
	want = []wire.Tab{
		{Index: 0, URL: "about:blank", Title: "about:blank"},
		{Index: 1, URL: "http://fixture.test/c", Title: "C", Controlled: true},
		{Index: 2, URL: "http://fixture.test/b", Title: "B", Active: true},
	}
	if fmt.Sprint(tabs) != fmt.Sprint(want) {
		t.Fatalf("tabs = %+v\nwant %+v", tabs, want)
	}
	if err := b.FocusTab(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := b.FocusTab(ctx, 7); err == nil {
		t.Error("focusing a missing tab succeeded")
	}

	// Closing the controlled tab: the next navigate opens a new one.
	if err := b.CloseTab(ctx, 1); err != nil {
		t.Fatal(err)
	}
	res := run(t, b, wire.BrowserCommand{Action: browser.Read})
	if res.Error != errNoTab.Error() {
		t.Errorf("read after closing the controlled tab: %q", res.Error)
	}
	open(t, b, "http://fixture.test/a")
	tabs, _ = b.Tabs(ctx)
	want = []wire.Tab{
		{Index: 0, URL: "about:blank", Title: "about:blank"},
		{Index: 1, URL: "http://fixture.test/b", Title: "B"},
		{Index: 2, URL: "http://fixture.test/a", Title: "A", Active: true, Controlled: true},
	}
	if fmt.Sprint(tabs) != fmt.Sprint(want) {
		t.Fatalf("tabs = %+v\nwant %+v", tabs, want)
	}
}

func TestBackHistory(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, map[string]string{
		"/a":    `<title>A</title><a id=next href="/b">b</a><a id=frag href="#part">part</a>`,
		"/b":    `<title>B</title><form method=post action=/done><button>Send</button></form>`,
		"/done": `<title>Done</title>`,
	})
	ctx := testCtx(t)
	if res := b.Back(ctx); res.Error != errNoTab.Error() {
		t.Errorf("back before navigate: %q", res.Error)
	}
	open(t, b, "http://fixture.test/a")
	if res := b.Back(ctx); res.Error != "cannot go back: the controlled tab has no earlier page" {
		t.Errorf("back on the first page: %q", res.Error)
	}
	click(t, b, "#frag")
	click(t, b, "#next")
	click(t, b, "button")
	// The entry before /done is /b, reached by GET, so it loads again.
	if res := b.Back(ctx); res.Error != "" || res.URL != "http://fixture.test/b" {
		t.Fatalf("back from the POST result: %+v", res)
	}
	if res := b.Back(ctx); res.Error != "" || res.URL != "http://fixture.test/a#part" {
		t.Fatalf("second back: %+v", res)
	}
	if res := b.Back(ctx); res.Error != "" || res.URL != "http://fixture.test/a" {
		t.Fatalf("third back: %+v", res)
	}

	// A POST result in the history is not sent again.
	open(t, b, "http://fixture.test/b")
	click(t, b, "button")
	open(t, b, "http://fixture.test/a")
	if res := b.Back(ctx); res.Error != "net::ERR_CACHE_MISS at http://fixture.test/done" {
		t.Fatalf("back to a POST result: %+v", res)
	}
}

func TestNewerNavigationAbortsOlder(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{})
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		fmt.Fprint(w, "<title>Slow</title>")
	})
	mux.HandleFunc("/fast", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<title>Fast</title>") })
	b := newTestBrowser(t, Options{Hosts: map[string]http.Handler{"race.test": mux}}, nil)
	open(t, b, "http://race.test/fast")

	slow := make(chan wire.BrowserResult, 1)
	go func() {
		slow <- b.Do(testCtx(t), wire.BrowserCommand{ID: "slow", Action: browser.Navigate, URL: "http://race.test/slow"})
	}()
	<-entered
	// While the slow load is in flight, the page is still usable.
	if res := mustOK(t, b, wire.BrowserCommand{Action: browser.Tabs}); res.Title != "Fast" {
		t.Errorf("title during the slow load = %q", res.Title)
	}
	res := open(t, b, "http://race.test/fast?again")
	close(release)
	got := <-slow
	if got.Error != "net::ERR_ABORTED at http://race.test/slow" || got.ID != "slow" {
		t.Fatalf("superseded load: %+v", got)
	}
	if got.URL != res.URL {
		t.Errorf("superseded load reports %s, want the newer page %s", got.URL, res.URL)
	}
}

func TestConcurrentCommands(t *testing.T) {
	t.Parallel()
	b := newTestBrowser(t, Options{}, nil)
	open(t, b, assets.DemoOrigin+"forms.html")
	cmds := []wire.BrowserCommand{
		{Action: browser.Read},
		{Action: browser.Read, Selector: "#name"},
		{Action: browser.Type, Selector: "#name", Text: "Concurrent"},
		{Action: browser.Click, Selector: "#extra-map"},
		{Action: browser.Tabs},
		{Action: browser.Screenshot},
		{Action: browser.Navigate, URL: assets.DemoOrigin + "forms.html"},
		{Action: browser.Navigate, URL: assets.DemoOrigin + "table.html"},
		{Action: browser.Click, Selector: "#preview"},
		{Action: browser.Read, Selector: "#does-not-exist"},
	}
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	for g := range 8 {
		wg.Go(func() {
			for i := range 8 {
				cmd := cmds[(g+i)%len(cmds)]
				cmd.ID = fmt.Sprintf("g%d-%d", g, i)
				res := b.Do(testCtx(t), cmd)
				if res.ID != cmd.ID {
					errs <- fmt.Sprintf("result id %q for %q", res.ID, cmd.ID)
				}
				// Clicks and types may race with a navigation to a page
				// without the element; anything else must succeed.
				if res.Error != "" && !strings.HasPrefix(res.Error, "no element matches") && !strings.HasPrefix(res.Error, "net::ERR_ABORTED") {
					errs <- fmt.Sprintf("%s %s: %s", cmd.Action, cmd.Selector, res.Error)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
