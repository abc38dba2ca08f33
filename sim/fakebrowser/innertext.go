package fakebrowser

import (
	"context"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/net/html"
)

// This file implements HTMLElement.innerText after the HTML standard's
// "rendered text collection steps", with CSS white-space processing folded
// into the same walk. The layout facts it needs (display, visibility,
// white-space) come from style.go. The screenshot reuses the walk through a
// richer sink, so both agree on what is visible.

// runStyle is how the screenshot draws a run of text. innerText ignores it.
type runStyle uint8

const (
	styleBold runStyle = 1 << iota
	styleLink
	styleMono
	styleHeading1 // drawn at double size
	styleHeading  // h2 to h6
)

// textSink receives the walk's output in document order.
type textSink interface {
	// text is rendered text, white space already processed.
	text(s string, st runStyle)
	// requiredBreaks is a "required line break count" item of the standard:
	// runs of them merge into the largest, and they vanish at either end.
	requiredBreaks(n int)
	// literal is a string item that never merges: "\n" for br and table
	// rows, "\t" between table cells.
	literal(s string)
	// control and marker are called only when the walker decorates (for
	// the screenshot): a form control or image, and a list item's bullet.
	control(n *html.Node, st runStyle)
	marker(s string, st runStyle)
}

// walkState is what an element passes down to its children.
type walkState struct {
	visible   bool
	ws        whiteSpace
	transform textTransform
	style     runStyle
	blockify  bool // the parent is a flex or grid container
}

// stateFor is what an element with computed style cs passes down.
func stateFor(cs computedStyle, style runStyle) walkState {
	return walkState{visible: cs.visible, ws: cs.whiteSpace, transform: cs.transform, style: style, blockify: cs.flexLike}
}

// textWalker produces rendered text. Its white-space state implements the
// CSS rules that matter for innerText: a run of collapsible white space
// becomes one space, which is dropped at the start and end of a line; a
// space belongs to the text node it came from, so a space inside hidden text
// is not output even though it still separates words in layout.
type textWalker struct {
	ctx      context.Context
	sink     textSink
	decorate bool
	full     func() bool // the sink needs no more (the screenshot is full)
	steps    int
	err      error

	atLineStart    bool // nothing laid out on this line yet
	pendingSpace   bool // a collapsible space waits for following content
	pendingVisible bool // whether that space's text node is visible
	buf            []byte
}

// ctxCheckEvery is how many nodes the walker visits between context checks:
// often enough to stop a read of a huge page promptly, rarely enough to cost
// nothing measurable.
const ctxCheckEvery = 2048

// innerText returns el.innerText. An element that is not being rendered
// (display:none, or under such an ancestor) yields its textContent, as the
// standard says.
func innerText(ctx context.Context, el *html.Node) (string, error) {
	if !isRendered(el) {
		return textContent(el), nil
	}
	var c textCollector
	w := &textWalker{ctx: ctx, sink: &c, atLineStart: true}
	cs := computeStyleFrom(el, inheritedStyle(el))
	if !isReplaced(el) {
		w.children(el, stateFor(cs, 0))
	}
	if w.err != nil {
		return "", w.err
	}
	return c.b.String(), nil
}

// inheritedStyle computes the inherited values (visibility, white-space,
// text-transform) that el's parent passes to it.
func inheritedStyle(el *html.Node) computedStyle {
	var chain []*html.Node
	for p := el.Parent; p != nil && p.Type == html.ElementNode; p = p.Parent {
		chain = append(chain, p)
	}
	cs := computedStyle{visible: true, whiteSpace: wsNormal}
	for i := len(chain) - 1; i >= 0; i-- {
		cs = computeStyleFrom(chain[i], cs)
	}
	return cs
}

func (w *textWalker) children(n *html.Node, st walkState) {
	if is(n, "details") && !hasAttr(n, "open") {
		if s := detailsSummary(n); s != nil {
			w.node(s, st)
		}
		return
	}
	for c := n.FirstChild; c != nil && w.err == nil; c = c.NextSibling {
		w.node(c, st)
	}
}

func (w *textWalker) node(n *html.Node, st walkState) {
	if w.full != nil && w.full() {
		return
	}
	w.steps++
	if w.steps%ctxCheckEvery == 0 {
		if err := w.ctx.Err(); err != nil {
			w.err = err
			return
		}
	}
	switch n.Type {
	case html.TextNode:
		w.textNode(n.Data, st)
		return
	case html.ElementNode:
	default:
		return
	}
	cs := computeStyleFrom(n, computedStyle{visible: st.visible, whiteSpace: st.ws, transform: st.transform})
	if cs.display == displayNone {
		return
	}
	if st.blockify && (cs.display == displayInline || cs.display == displayInlineBlock) {
		// Flex and grid items are block-level whatever their own display.
		cs.display = displayBlock
	}
	inner := stateFor(cs, st.style)
	if w.decorate {
		inner.style = styleFor(n, st.style)
	}
	if is(n, "br") {
		// A hidden br still ends the line; only its "\n" item is skipped.
		w.lineEdge()
		if cs.visible {
			w.sink.literal("\n")
		}
		return
	}
	walk := w.children
	if w.decorate && isSecretRegion(n) {
		// The screenshot masks a secret editable region as it masks a
		// secret field. (A read removes its text another way; see
		// redactedText.)
		walk = w.masked
	}
	atomic := isReplaced(n)
	if w.decorate && isAny(n, "button", "hr", "select") {
		atomic = true
	}
	switch cs.display {
	case displayBlock, displayTableCaption:
		breaks := 1
		if is(n, "p") {
			breaks = 2
		}
		w.blockEdge(breaks, cs.visible)
		if atomic {
			w.atom(n, inner)
		} else {
			if w.decorate && cs.visible && is(n, "li") {
				if m := listMarker(n); m != "" {
					w.sink.marker(m, inner.style)
				}
			}
			walk(n, inner)
		}
		w.blockEdge(breaks, cs.visible)
	case displayInlineBlock:
		if atomic {
			w.atom(n, inner)
			return
		}
		// The box is one piece of content on the outer line, and its
		// contents form lines of their own.
		w.flushSpace()
		w.atLineStart, w.pendingSpace = true, false
		walk(n, inner)
		w.atLineStart, w.pendingSpace = false, false
	case displayTableRow:
		w.lineEdge()
		walk(n, inner)
		w.lineEdge()
		if cs.visible && hasLaterRow(n) {
			w.sink.literal("\n")
		}
	case displayTableCell:
		w.lineEdge()
		walk(n, inner)
		w.lineEdge()
		if cs.visible && hasLaterCell(n) {
			w.sink.literal("\t")
		}
	case displayTableGroup, displayContents:
		walk(n, inner)
	default:
		if atomic {
			w.atom(n, inner)
			return
		}
		walk(n, inner)
	}
}

// lineEdge ends the current line: a pending space is dropped and what
// follows starts a new line.
func (w *textWalker) lineEdge() {
	w.atLineStart, w.pendingSpace = true, false
}

// blockEdge is the start or end of a block box.
func (w *textWalker) blockEdge(breaks int, visible bool) {
	w.lineEdge()
	if visible {
		w.sink.requiredBreaks(breaks)
	}
}

// flushSpace is called before a piece of content: the pending space, if it
// came from visible text, is output, since content follows it on the line.
func (w *textWalker) flushSpace() {
	if w.pendingSpace && !w.atLineStart && w.pendingVisible {
		w.sink.text(" ", 0)
	}
	w.pendingSpace, w.atLineStart = false, false
}

// atom is a replaced element (or, in a screenshot, a button): content
// without text of its own.
func (w *textWalker) atom(n *html.Node, st walkState) {
	w.flushSpace()
	if w.decorate && st.visible {
		w.sink.control(n, st.style)
	}
}

// masked stands for the content of a secret region in the screenshot.
func (w *textWalker) masked(_ *html.Node, st walkState) {
	w.flushSpace()
	if st.visible {
		w.sink.text("••••••••", st.style)
	}
}

func isCollapsible(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

func (w *textWalker) textNode(s string, st walkState) {
	switch st.ws {
	case wsPre:
		if s == "" {
			return
		}
		w.flushSpace()
		if st.visible {
			w.sink.text(applyTransform(s, st.transform, true), st.style)
		}
		w.atLineStart = s[len(s)-1] == '\n'
	case wsPreLine:
		for i, line := range strings.Split(s, "\n") {
			if i > 0 {
				w.lineEdge()
				if st.visible {
					w.sink.text("\n", st.style)
				}
			}
			w.collapse(line, st)
		}
	default:
		w.collapse(s, st)
	}
}

// collapse processes text under white-space:normal.
func (w *textWalker) collapse(s string, st walkState) {
	wordStart := w.atLineStart || w.pendingSpace
	out := w.buf[:0]
	for i := 0; i < len(s); {
		if isCollapsible(s[i]) {
			if !w.atLineStart && !w.pendingSpace {
				w.pendingSpace, w.pendingVisible = true, st.visible
			}
			i++
			continue
		}
		if w.pendingSpace && !w.atLineStart && w.pendingVisible {
			out = append(out, ' ')
		}
		w.pendingSpace, w.atLineStart = false, false
		j := i + 1
		for j < len(s) && !isCollapsible(s[j]) {
			j++
		}
		if st.visible {
			out = append(out, s[i:j]...)
		}
		i = j
	}
	if len(out) > 0 {
		w.sink.text(applyTransform(string(out), st.transform, wordStart), st.style)
	}
	w.buf = out
}

// applyTransform applies text-transform to a piece of output. For
// capitalize, wordStart says whether the piece begins a word; within it a
// letter after white space begins one.
func applyTransform(s string, t textTransform, wordStart bool) string {
	switch t {
	case transformUpper:
		return strings.ToUpper(s)
	case transformLower:
		return strings.ToLower(s)
	case transformCapitalize:
		rs := []rune(s)
		start := wordStart
		for i, r := range rs {
			if unicode.IsSpace(r) {
				start = true
				continue
			}
			if start {
				rs[i] = unicode.ToUpper(r)
			}
			start = false
		}
		return string(rs)
	}
	return s
}

// hasLaterRow reports whether a table row is followed by another row of the
// same table, looking through its row group's following siblings.
func hasLaterRow(tr *html.Node) bool {
	if laterRowAmong(tr.NextSibling) {
		return true
	}
	if p := tr.Parent; p != nil && p.Type == html.ElementNode && displayOf(p) == displayTableGroup {
		return laterRowAmong(p.NextSibling)
	}
	return false
}

func laterRowAmong(n *html.Node) bool {
	for ; n != nil; n = n.NextSibling {
		if n.Type != html.ElementNode {
			continue
		}
		switch displayOf(n) {
		case displayTableRow:
			return true
		case displayTableGroup:
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && displayOf(c) == displayTableRow {
					return true
				}
			}
		}
	}
	return false
}

// hasLaterCell reports whether a cell is followed by another in its row.
func hasLaterCell(td *html.Node) bool {
	for n := td.NextSibling; n != nil; n = n.NextSibling {
		if n.Type == html.ElementNode && displayOf(n) == displayTableCell {
			return true
		}
	}
	return false
}

// textCollector is the sink for innerText. It applies the standard's final
// steps as it goes: empty items vanish, break counts at the very start and
// end are dropped, and a run of counts becomes as many newlines as its
// largest member.
type textCollector struct {
	b       strings.Builder
	started bool
	breaks  int
}

func (c *textCollector) text(s string, _ runStyle) { c.literal(s) }

func (c *textCollector) literal(s string) {
	if s == "" {
		return
	}
	if c.started {
		for range c.breaks {
			c.b.WriteByte('\n')
		}
	}
	c.breaks = 0
	c.b.WriteString(s)
	c.started = true
}

func (c *textCollector) requiredBreaks(n int) { c.breaks = max(c.breaks, n) }

func (c *textCollector) control(*html.Node, runStyle) {}

func (c *textCollector) marker(string, runStyle) {}

// styleFor derives the screenshot style of n's content from its parent's.
func styleFor(n *html.Node, parent runStyle) runStyle {
	if !isHTML(n) {
		return parent
	}
	st := parent
	switch n.Data {
	case "b", "strong", "th", "dt", "summary", "legend", "caption":
		st |= styleBold
	case "h1":
		st |= styleHeading1 | styleBold
	case "h2", "h3", "h4", "h5", "h6":
		st |= styleHeading | styleBold
	case "a":
		if hasAttr(n, "href") {
			st |= styleLink
		}
	case "code", "pre", "kbd", "samp", "tt", "var", "listing", "xmp":
		st |= styleMono
	}
	return st
}

// listMarker is the bullet or number a browser draws before a list item.
func listMarker(li *html.Node) string {
	p := li.Parent
	switch {
	case is(p, "ol"):
		n := 1
		if s, err := strconv.Atoi(strings.TrimSpace(attrOr(p, "start"))); err == nil {
			n = s
		}
		for c := p.FirstChild; c != nil && c != li; c = c.NextSibling {
			if is(c, "li") {
				n++
			}
		}
		if v, err := strconv.Atoi(strings.TrimSpace(attrOr(li, "value"))); err == nil {
			n = v
		}
		return strconv.Itoa(n) + ". "
	case is(p, "ul"), is(p, "menu"):
		return "• "
	}
	return ""
}
