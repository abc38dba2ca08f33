package fakebrowser

import (
	"strings"

	"golang.org/x/net/html"
)

// attr returns the value of n's attribute key (HTML attribute names are
// already lower case after parsing) and whether it is present.
func attr(n *html.Node, key string) (string, bool) {
	if n == nil {
		return "", false
	}
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// attrOr returns the attribute's value or "" when it is absent.
func attrOr(n *html.Node, key string) string {
	v, _ := attr(n, key)
	return v
}

func hasAttr(n *html.Node, key string) bool {
	_, ok := attr(n, key)
	return ok
}

// setAttr sets an attribute, adding it when absent.
func setAttr(n *html.Node, key, val string) {
	for i, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}

func removeAttr(n *html.Node, key string) {
	out := n.Attr[:0]
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			continue
		}
		out = append(out, a)
	}
	n.Attr = out
}

// isHTML reports whether n is an element in the HTML namespace; SVG and
// MathML elements share some tag names (title, a) with different meaning.
func isHTML(n *html.Node) bool {
	return n != nil && n.Type == html.ElementNode && n.Namespace == ""
}

// is reports whether n is the HTML element tag.
func is(n *html.Node, tag string) bool {
	return isHTML(n) && n.Data == tag
}

// isAny reports whether n is one of the HTML elements in tags.
func isAny(n *html.Node, tags ...string) bool {
	if !isHTML(n) {
		return false
	}
	for _, t := range tags {
		if n.Data == t {
			return true
		}
	}
	return false
}

// inputType is the input element's type keyword as the IDL attribute
// reports it: lower case, and "text" for a missing or unknown value.
func inputType(n *html.Node) string {
	t := strings.ToLower(strings.TrimSpace(attrOr(n, "type")))
	switch t {
	case "hidden", "text", "search", "tel", "url", "email", "password", "date",
		"month", "week", "time", "datetime-local", "number", "range", "color",
		"checkbox", "radio", "file", "submit", "image", "reset", "button":
		return t
	}
	return "text"
}

// textContent concatenates the data of every text node under n, which is
// what Node.textContent returns for an element.
func textContent(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			} else if c.Type == html.ElementNode {
				walk(c)
			}
		}
	}
	walk(n)
	return b.String()
}

// collapseSpace strips and collapses ASCII whitespace, the normalisation
// HTML applies to titles, option labels and the like.
func collapseSpace(s string) string {
	return strings.Join(strings.FieldsFunc(s, isASCIISpace), " ")
}

func isASCIISpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f'
}

// nextNode returns the node after n in tree order (pre-order), staying
// under root, and not descending into n when skipChildren is set.
func nextNode(root, n *html.Node, skipChildren bool) *html.Node {
	if !skipChildren && n.FirstChild != nil {
		return n.FirstChild
	}
	for n != nil && n != root {
		if n.NextSibling != nil {
			return n.NextSibling
		}
		n = n.Parent
	}
	return nil
}

// nextElement is nextNode restricted to elements.
func nextElement(root, n *html.Node, skipChildren bool) *html.Node {
	n = nextNode(root, n, skipChildren)
	for n != nil && n.Type != html.ElementNode {
		n = nextNode(root, n, false)
	}
	return n
}

// eachElement calls fn for every element under root in tree order until fn
// returns false. Template contents are skipped: they are not part of the
// document as querySelector and forms see it.
func eachElement(root *html.Node, fn func(*html.Node) bool) {
	for n := nextElement(root, root, false); n != nil; {
		if !fn(n) {
			return
		}
		n = nextElement(root, n, is(n, "template"))
	}
}

// elementByID returns the first element whose id is id, in tree order.
func elementByID(doc *html.Node, id string) *html.Node {
	if id == "" {
		return nil
	}
	var found *html.Node
	eachElement(doc, func(n *html.Node) bool {
		if v, ok := attr(n, "id"); ok && v == id {
			found = n
			return false
		}
		return true
	})
	return found
}

// findFirst returns the first HTML element named tag under root.
func findFirst(root *html.Node, tag string) *html.Node {
	var found *html.Node
	eachElement(root, func(n *html.Node) bool {
		if is(n, tag) {
			found = n
			return false
		}
		return true
	})
	return found
}

// closest returns the nearest inclusive ancestor of n that is the HTML
// element tag.
func closest(n *html.Node, tag string) *html.Node {
	for ; n != nil; n = n.Parent {
		if is(n, tag) {
			return n
		}
	}
	return nil
}

// isInclusiveAncestor reports whether a is n or one of its ancestors.
func isInclusiveAncestor(a, n *html.Node) bool {
	for ; n != nil; n = n.Parent {
		if n == a {
			return true
		}
	}
	return false
}

// describe renders an element the way error messages name it, such as
// <input id="q"> or <div class="card">.
func describe(n *html.Node) string {
	if n == nil || n.Type != html.ElementNode {
		return "node"
	}
	var b strings.Builder
	b.WriteString("<" + n.Data)
	for _, key := range []string{"id", "name", "type", "class"} {
		if v, ok := attr(n, key); ok && v != "" {
			b.WriteString(" " + key + `="` + v + `"`)
			break
		}
	}
	b.WriteString(">")
	return b.String()
}
