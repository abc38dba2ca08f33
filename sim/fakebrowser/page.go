package fakebrowser

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
)

// page is one loaded document and the state a person changes on it: typed
// values, checked boxes, chosen options. It is owned by its tab and only
// touched with the browser's lock held once committed.
type page struct {
	url    *url.URL
	doc    *html.Node
	title  string // document.title; tabTitle falls back to the URL
	method string // how it was loaded, for history

	// values holds the current value of inputs and textareas that have been
	// typed into (the "dirty" value); the others show their default.
	values map[*html.Node]string
	// defaults remembers boolean attributes (checked, selected) as the page
	// was loaded, before clicks changed them, so a form reset restores them.
	defaults map[attrKey]bool
	// noSelection marks select elements whose value was set to something no
	// option has, which leaves them with no option selected.
	noSelection map[*html.Node]bool
	// initial marks the about:blank a new tab starts with; it is not kept in
	// the tab's history.
	initial bool
	// base is the document's base element address, nil without one.
	base *url.URL
}

type attrKey struct {
	n    *html.Node
	name string
}

func newPage(u *url.URL, doc *html.Node, method string) *page {
	p := &page{
		url:         u,
		doc:         doc,
		method:      method,
		values:      map[*html.Node]string{},
		defaults:    map[attrKey]bool{},
		noSelection: map[*html.Node]bool{},
	}
	p.title = documentTitle(doc)
	p.base = baseElementURL(doc, u)
	return p
}

// blankPage is about:blank.
func blankPage() *page {
	u := &url.URL{Scheme: "about", Opaque: "blank"}
	doc, _ := html.Parse(strings.NewReader(""))
	p := newPage(u, doc, "GET")
	p.initial = true
	return p
}

// documentTitle is document.title: the first HTML title element's text,
// stripped and collapsed.
func documentTitle(doc *html.Node) string {
	if t := findFirst(doc, "title"); t != nil {
		return collapseSpace(textContent(t))
	}
	return ""
}

// tabTitle is what the tab strip (and chrome.tabs) shows: the document
// title, or the address without its scheme when the page has none.
func (p *page) tabTitle() string {
	if p.title != "" {
		return p.title
	}
	switch p.url.Scheme {
	case "http", "https":
		s := p.url.String()
		return s[len(p.url.Scheme)+3:]
	}
	return p.url.String()
}

// baseElementURL is the first base element's href resolved against the
// document's address, or nil when there is none.
func baseElementURL(doc *html.Node, docURL *url.URL) *url.URL {
	var base *url.URL
	eachElement(doc, func(n *html.Node) bool {
		if href, ok := attr(n, "href"); ok && is(n, "base") {
			if u, err := docURL.Parse(strings.TrimSpace(href)); err == nil {
				base = u
			}
			return false
		}
		return true
	})
	return base
}

// baseURL is what relative references resolve against.
func (p *page) baseURL() *url.URL {
	if p.base != nil {
		return p.base
	}
	return p.url
}

// resolve parses a URL attribute the way a browser does: surrounding ASCII
// white space is ignored, and newlines and tabs inside are dropped.
func (p *page) resolve(ref string) (*url.URL, error) {
	ref = strings.TrimFunc(ref, isASCIISpace)
	ref = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, ref)
	return p.baseURL().Parse(ref)
}

// body is document.body.
func (p *page) body() *html.Node {
	for c := p.doc.FirstChild; c != nil; c = c.NextSibling {
		if is(c, "html") {
			for b := c.FirstChild; b != nil; b = b.NextSibling {
				if is(b, "body") || is(b, "frameset") {
					return b
				}
			}
		}
	}
	return nil
}

// selectorError is the message Chrome's querySelector throws, which is what
// the real extension reports.
func selectorError(sel string) error {
	if sel == "" {
		return errors.New("Failed to execute 'querySelector' on 'Document': The provided selector is empty.")
	}
	return fmt.Errorf("Failed to execute 'querySelector' on 'Document': '%s' is not a valid selector.", sel)
}

// querySelector is document.querySelector: the first element in tree order
// that matches any selector of the group. A selector with a pseudo-element
// is valid but matches no element, as in a browser.
func (p *page) querySelector(sel string) (*html.Node, error) {
	if strings.TrimFunc(sel, isASCIISpace) == "" {
		return nil, selectorError(sel)
	}
	group, err := cascadia.ParseGroupWithPseudoElements(sel)
	if err != nil {
		return nil, selectorError(sel)
	}
	live := group[:0:0]
	for _, s := range group {
		if s.PseudoElement() == "" {
			live = append(live, s)
		}
	}
	if len(live) == 0 {
		return nil, nil
	}
	var found *html.Node
	eachElement(p.doc, func(n *html.Node) bool {
		if live.Match(n) {
			found = n
			return false
		}
		return true
	})
	return found, nil
}

// setBool sets or removes a boolean attribute, remembering the page's
// original state of it for form reset.
func (p *page) setBool(n *html.Node, name string, on bool) {
	key := attrKey{n, name}
	if _, seen := p.defaults[key]; !seen {
		p.defaults[key] = hasAttr(n, name)
	}
	if on {
		if !hasAttr(n, name) {
			setAttr(n, name, "")
		}
		return
	}
	removeAttr(n, name)
}
