package fakebrowser

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// display is the part of CSS display that decides how text is laid out.
// The fake browser has no style sheets: an element's display comes from the
// user-agent defaults of its tag, the hidden attribute and its inline style
// attribute, which covers how pages usually hide things in markup.
type display uint8

const (
	displayInline display = iota
	displayNone
	displayBlock       // block-level boxes: block, list-item, flex, grid, table, flow-root
	displayInlineBlock // atomic inlines with their own lines inside: inline-block/flex/grid/table
	displayContents    // no box of its own; children take its place
	displayTableRow
	displayTableCell
	displayTableCaption
	displayTableGroup // row groups and columns: only their rows matter
)

// whiteSpace is how a text node's white space is processed.
type whiteSpace uint8

const (
	wsNormal    whiteSpace = iota // collapse runs, drop at line ends (normal, nowrap)
	wsPre                         // keep everything (pre, pre-wrap, break-spaces)
	wsPreLine                     // collapse spaces, keep line breaks
	wsUnchanged                   // inline style did not say
)

// tagFlags classify HTML elements for layout (see flagsOf).
type tagFlags uint8

const (
	tagBlock    tagFlags = 1 << iota // block-level in the user-agent style sheet
	tagNone                          // never rendered
	tagReplaced                      // drawn from something other than its children
	tagPre                           // keeps white space by default
)

// flagsOf returns an HTML element's flags; other nodes have none. It
// switches on the atom rather than looking the name up because the text walk
// asks for every element it visits. Replaced elements (a value, an image, a
// plug-in) never produce text from their children, and for line breaking
// they are one unbreakable piece of content.
func flagsOf(n *html.Node) tagFlags {
	if !isHTML(n) {
		return 0
	}
	switch n.DataAtom {
	case atom.Pre, atom.Listing, atom.Xmp, atom.Plaintext:
		return tagBlock | tagPre
	case atom.Textarea:
		return tagReplaced | tagPre
	case atom.Html, atom.Body, atom.Address, atom.Blockquote, atom.Center,
		atom.Div, atom.Figure, atom.Figcaption, atom.Footer, atom.Form, atom.Header,
		atom.Hr, atom.Legend, atom.Main, atom.P, atom.Search, atom.Article,
		atom.Aside, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Hgroup,
		atom.Nav, atom.Section, atom.Dir, atom.Dd, atom.Dl, atom.Dt, atom.Menu,
		atom.Ol, atom.Ul, atom.Li, atom.Fieldset, atom.Details, atom.Summary,
		atom.Table, atom.Frameset, atom.Optgroup, atom.Option, atom.Dialog:
		return tagBlock
	case atom.Head, atom.Script, atom.Style, atom.Template, atom.Title,
		atom.Meta, atom.Link, atom.Base, atom.Noscript, atom.Datalist, atom.Param,
		atom.Source, atom.Track, atom.Area, atom.Rp, atom.Noembed, atom.Noframes:
		return tagNone
	case atom.Input, atom.Img, atom.Iframe, atom.Video, atom.Audio, atom.Canvas,
		atom.Embed, atom.Meter, atom.Progress:
		return tagReplaced
	case atom.Object:
		// Without data there is nothing to embed, so its fallback content
		// shows, as in Chrome.
		if hasAttr(n, "data") {
			return tagReplaced
		}
	}
	return 0
}

// isReplaced reports whether n is a replaced element.
func isReplaced(n *html.Node) bool { return flagsOf(n)&tagReplaced != 0 }

// defaultDisplay is the user-agent display of an element, including the
// attribute-driven rules (hidden, input type=hidden, dialog and audio).
func defaultDisplay(n *html.Node) display {
	switch n.Namespace {
	case "":
	case "svg":
		return svgDisplay(n)
	default:
		return displayInline
	}
	tag, flags := n.Data, flagsOf(n)
	// hidden=until-found only skips painting; Chrome's innerText still has
	// the text, and it ignores hidden on the options of a select.
	if h, ok := attr(n, "hidden"); ok && !strings.EqualFold(strings.TrimSpace(h), "until-found") &&
		!(tag == "option" && closest(n.Parent, "select") != nil) {
		return displayNone
	}
	switch {
	case flags&tagNone != 0:
		return displayNone
	case tag == "input" && inputType(n) == "hidden":
		return displayNone
	case tag == "dialog" && !hasAttr(n, "open"):
		return displayNone
	case tag == "audio" && !hasAttr(n, "controls"):
		return displayNone
	case tag == "tr":
		return displayTableRow
	case tag == "td" || tag == "th":
		return displayTableCell
	case tag == "caption":
		return displayTableCaption
	case tag == "thead" || tag == "tbody" || tag == "tfoot" || tag == "col" || tag == "colgroup":
		return displayTableGroup
	case flags&tagBlock != 0:
		return displayBlock
	case tag == "button" || tag == "select" || flags&tagReplaced != 0:
		return displayInlineBlock
	}
	return displayInline
}

// svgDisplay lays out inline SVG the way Chrome's innerText sees it: each
// text element is a block of its own, and definitions, titles and
// descriptions are not drawn.
func svgDisplay(n *html.Node) display {
	switch n.Data {
	case "svg":
		return displayInlineBlock
	case "text", "foreignObject":
		return displayBlock
	case "title", "desc", "metadata", "defs", "style", "script", "symbol", "clipPath",
		"mask", "pattern", "linearGradient", "radialGradient", "filter", "marker":
		return displayNone
	}
	return displayInline
}

// inlineStyle holds the declarations of a style attribute that matter here.
type inlineStyle struct {
	display    display
	hasDisplay bool
	flexLike   bool   // a flex or grid container, whose children are blockified
	outOfFlow  bool   // floated or absolutely positioned, hence block-level
	visibility string // "", "visible", "hidden", "collapse"
	transform  textTransform
	whiteSpace whiteSpace
}

// parseInlineStyle reads display, visibility and white-space from a style
// attribute. Later declarations win, as in CSS; !important is accepted and
// ignored since there is nothing else in the cascade to beat.
func parseInlineStyle(style string) inlineStyle {
	st := inlineStyle{whiteSpace: wsUnchanged, transform: transformUnchanged}
	for decl := range strings.SplitSeq(style, ";") {
		prop, val, ok := strings.Cut(decl, ":")
		if !ok {
			continue
		}
		prop = strings.ToLower(strings.TrimSpace(prop))
		val = strings.ToLower(strings.TrimSpace(val))
		val = strings.TrimSpace(strings.TrimSuffix(val, "!important"))
		switch prop {
		case "display":
			if d, ok := parseDisplay(val); ok {
				st.display, st.hasDisplay = d, true
				st.flexLike = strings.Contains(val, "flex") || strings.Contains(val, "grid")
			}
		case "float":
			st.outOfFlow = val == "left" || val == "right" || val == "inline-start" || val == "inline-end"
		case "position":
			st.outOfFlow = val == "absolute" || val == "fixed"
		case "text-transform":
			switch val {
			case "none":
				st.transform = transformNone
			case "uppercase":
				st.transform = transformUpper
			case "lowercase":
				st.transform = transformLower
			case "capitalize":
				st.transform = transformCapitalize
			}
		case "visibility":
			switch val {
			case "visible", "hidden", "collapse":
				st.visibility = val
			}
		case "white-space":
			switch val {
			case "normal", "nowrap":
				st.whiteSpace = wsNormal
			case "pre", "pre-wrap", "break-spaces":
				st.whiteSpace = wsPre
			case "pre-line":
				st.whiteSpace = wsPreLine
			}
		case "white-space-collapse":
			switch val {
			case "collapse":
				st.whiteSpace = wsNormal
			case "preserve", "break-spaces":
				st.whiteSpace = wsPre
			case "preserve-breaks":
				st.whiteSpace = wsPreLine
			}
		}
	}
	return st
}

// parseDisplay maps a display value, in its one- or two-keyword form, to the
// layout classes above.
func parseDisplay(val string) (display, bool) {
	fields := strings.Fields(val)
	if len(fields) == 0 {
		return 0, false
	}
	outer, inner := "", ""
	for _, f := range fields {
		switch f {
		case "block", "inline", "run-in":
			outer = f
		case "flow", "flow-root", "table", "flex", "grid", "ruby", "list-item":
			inner = f
		case "none", "contents", "inline-block", "inline-flex", "inline-grid",
			"inline-table", "table-row", "table-cell", "table-caption",
			"table-row-group", "table-header-group", "table-footer-group",
			"table-column", "table-column-group", "inline-list-item":
			if len(fields) == 1 {
				return keywordDisplay(f), true
			}
		default:
			return 0, false
		}
	}
	switch {
	case outer == "inline" && inner != "" && inner != "flow" && inner != "ruby":
		return displayInlineBlock, true
	case outer == "inline" || outer == "run-in" || inner == "ruby":
		return displayInline, true
	}
	return displayBlock, true
}

func keywordDisplay(k string) display {
	switch k {
	case "none":
		return displayNone
	case "contents":
		return displayContents
	case "inline-block", "inline-flex", "inline-grid", "inline-table":
		return displayInlineBlock
	case "table-row":
		return displayTableRow
	case "table-cell":
		return displayTableCell
	case "table-caption":
		return displayTableCaption
	case "inline-list-item":
		return displayInline
	}
	return displayTableGroup
}

// computedStyle is the outcome for one element given its parent's
// inherited values.
type computedStyle struct {
	display    display
	visible    bool
	whiteSpace whiteSpace
	flexLike   bool
	transform  textTransform // inherited
}

// textTransform is the CSS text-transform of a text run.
type textTransform uint8

const (
	transformNone textTransform = iota
	transformUpper
	transformLower
	transformCapitalize
	transformUnchanged // inline style did not say
)

// computeStyle resolves n's display (not inherited) and its visibility,
// white-space and text-transform (inherited from the parent's values).
func computeStyle(n *html.Node, parentVisible bool, parentWS whiteSpace) computedStyle {
	return computeStyleFrom(n, computedStyle{visible: parentVisible, whiteSpace: parentWS})
}

// computeStyleFrom is computeStyle with all the parent's inherited values.
func computeStyleFrom(n *html.Node, parent computedStyle) computedStyle {
	cs := computedStyle{display: defaultDisplay(n), visible: parent.visible, whiteSpace: parent.whiteSpace, transform: parent.transform}
	if flagsOf(n)&tagPre != 0 {
		cs.whiteSpace = wsPre
	}
	if style, ok := attr(n, "style"); ok && n.Namespace == "" {
		st := parseInlineStyle(style)
		// The hidden attribute maps to display:none in the user-agent sheet,
		// which an author's inline display overrides, as in a browser.
		if st.hasDisplay {
			cs.display, cs.flexLike = st.display, st.flexLike
		}
		switch st.visibility {
		case "visible":
			cs.visible = true
		case "hidden", "collapse":
			cs.visible = false
		}
		if st.whiteSpace != wsUnchanged {
			cs.whiteSpace = st.whiteSpace
		}
		if st.transform != transformUnchanged {
			cs.transform = st.transform
		}
		if st.outOfFlow {
			// Floats and absolutely positioned boxes are blockified.
			switch cs.display {
			case displayInline, displayInlineBlock, displayTableRow, displayTableCell, displayTableCaption:
				cs.display = displayBlock
			}
		}
	}
	return cs
}

// displayOf is the element's display alone, for sibling checks that need
// no inherited values.
func displayOf(n *html.Node) display {
	return computeStyle(n, true, wsNormal).display
}

// isRendered reports whether n has a layout box: neither it nor an ancestor
// is display:none, it sits inside no replaced element (whose children are
// never drawn), select or template, and the document reaches it.
func isRendered(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return n.Parent != nil && isRendered(n.Parent)
	}
	first := true
	for e := n; e != nil; e = e.Parent {
		if e.Type == html.DocumentNode {
			return true
		}
		if e.Type != html.ElementNode {
			return false
		}
		if displayOf(e) == displayNone {
			return false
		}
		// Options have no box of their own in a drop-down: Chrome reads
		// them as part of the select but gives one alone its textContent.
		if !first && isHTML(e) && (isReplaced(e) || e.Data == "template" || e.Data == "select") {
			return false
		}
		if !first && is(e, "details") && !hasAttr(e, "open") && !isDetailsSummaryPath(e, n) {
			return false
		}
		first = false
	}
	return false
}

// isDetailsSummaryPath reports whether n lies inside the summary that a
// closed details element still shows.
func isDetailsSummaryPath(details, n *html.Node) bool {
	s := detailsSummary(details)
	return s != nil && isInclusiveAncestor(s, n)
}

// detailsSummary is the details element's first summary child, the only
// part shown while it is closed.
func detailsSummary(details *html.Node) *html.Node {
	for c := details.FirstChild; c != nil; c = c.NextSibling {
		if is(c, "summary") {
			return c
		}
	}
	return nil
}
