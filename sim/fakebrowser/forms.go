package fakebrowser

import (
	"bytes"
	"errors"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/html"
)

// This file holds what a person's clicks and keystrokes do to a page without
// JavaScript: element values, activation behaviour (links, buttons,
// checkboxes, radios, labels, summaries) and form submission, following the
// HTML standard's algorithms in the parts a static page can observe.

// navRequest is a navigation a page action asks for; the browser performs it.
type navRequest struct {
	method      string
	url         *url.URL
	body        []byte
	contentType string
	referrer    *url.URL // the page that asked, nil for typed addresses
	fromHistory bool     // going back: the current page is not pushed
}

// errNotEditable is reported (outside the opentask profile) for typing into
// something that has no value.
var errNotEditable = errors.New("it is not an input, textarea, select or contenteditable element")

// ---- values ----

// value is the IDL value of an input, textarea or select: what a script
// (and the real extension's read) sees.
func (p *page) value(n *html.Node) string {
	switch {
	case is(n, "button"):
		return attrOr(n, "value")
	case is(n, "textarea"):
		if v, ok := p.values[n]; ok {
			return v
		}
		return textareaDefault(n)
	case is(n, "select"):
		opts := p.selectedOptions(n)
		if len(opts) == 0 {
			return ""
		}
		return optionValue(opts[0])
	case is(n, "input"):
		switch inputType(n) {
		case "checkbox", "radio":
			if v, ok := attr(n, "value"); ok {
				return v
			}
			return "on"
		case "hidden", "submit", "image", "reset", "button":
			return attrOr(n, "value")
		case "file":
			return ""
		}
		if v, ok := p.values[n]; ok {
			return v
		}
		return sanitizeValue(inputType(n), attrOr(n, "value"))
	}
	return ""
}

// textareaDefault is the textarea's child text, which the parser already
// stripped of one leading newline.
func textareaDefault(n *html.Node) string {
	return strings.ReplaceAll(textContent(n), "\r\n", "\n")
}

// sanitizeValue applies the value sanitization algorithm of the input types
// whose rules are simple and common.
func sanitizeValue(typ, v string) string {
	stripNewlines := func(s string) string {
		return strings.NewReplacer("\r", "", "\n", "").Replace(s)
	}
	switch typ {
	case "text", "search", "tel", "password":
		return stripNewlines(v)
	case "url", "email":
		return strings.TrimFunc(stripNewlines(v), isASCIISpace)
	case "number":
		if _, err := strconv.ParseFloat(v, 64); err != nil || strings.ContainsAny(v, "xXnN_ \t") {
			return ""
		}
	}
	return v
}

// displayValue is what the page draws for a text control; a secret field
// shows as many bullets as its value has characters, like a password field.
func (p *page) displayValue(n *html.Node) string {
	v := p.value(n)
	if isSecretField(n) {
		return strings.Repeat("•", len([]rune(v)))
	}
	return v
}

// options lists a select's options, including those in optgroups.
func selectOptions(sel *html.Node) []*html.Node {
	var out []*html.Node
	for c := sel.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case is(c, "option"):
			out = append(out, c)
		case is(c, "optgroup"):
			for o := c.FirstChild; o != nil; o = o.NextSibling {
				if is(o, "option") {
					out = append(out, o)
				}
			}
		}
	}
	return out
}

func optionValue(o *html.Node) string {
	if v, ok := attr(o, "value"); ok {
		return v
	}
	return optionLabel(o)
}

func optionLabel(o *html.Node) string {
	if l, ok := attr(o, "label"); ok && l != "" {
		return l
	}
	return collapseSpace(textContent(o))
}

// selectedOptions is the select's selectedness: the options marked
// selected; for a single-choice menu only the last of them, or the first
// enabled option when none is marked (what a drop-down displays).
func (p *page) selectedOptions(sel *html.Node) []*html.Node {
	opts := selectOptions(sel)
	var marked []*html.Node
	for _, o := range opts {
		if hasAttr(o, "selected") {
			marked = append(marked, o)
		}
	}
	if hasAttr(sel, "multiple") {
		return marked
	}
	if len(marked) > 0 {
		return marked[len(marked)-1:]
	}
	if p.noSelection[sel] {
		return nil
	}
	for _, o := range opts {
		if !isDisabled(o) {
			return []*html.Node{o}
		}
	}
	return nil
}

func (p *page) isChecked(n *html.Node) bool { return hasAttr(n, "checked") }

// isContentEditable reports whether n is inside an editing host.
func isContentEditable(n *html.Node) bool {
	for e := n; e != nil && e.Type == html.ElementNode; e = e.Parent {
		if v, ok := attr(e, "contenteditable"); ok {
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "", "true", "plaintext-only":
				return true
			case "false":
				return false
			}
		}
	}
	return false
}

// setValue is what the type action does to an element: set el.value (or
// the text of an editable element). It reports errNotEditable for elements
// that have no value to set.
func (p *page) setValue(n *html.Node, text string) error {
	switch {
	case is(n, "input"):
		switch typ := inputType(n); typ {
		case "file":
			if text != "" {
				return errors.New("Failed to set the 'value' property on 'HTMLInputElement': This input element accepts a filename, which may only be programmatically set to the empty string.")
			}
			return nil
		case "checkbox", "radio", "hidden", "submit", "image", "reset", "button":
			// These types reflect value into the attribute.
			setAttr(n, "value", text)
		default:
			p.values[n] = sanitizeValue(typ, text)
		}
		return nil
	case is(n, "textarea"):
		p.values[n] = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
		return nil
	case is(n, "select"):
		matched := false
		for _, o := range selectOptions(n) {
			on := !matched && optionValue(o) == text
			matched = matched || on
			p.setBool(o, "selected", on)
		}
		p.noSelection[n] = !matched
		return nil
	case isContentEditable(n):
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			n.RemoveChild(c)
			c = next
		}
		n.AppendChild(&html.Node{Type: html.TextNode, Data: text})
		return nil
	}
	return errNotEditable
}

// ---- form structure ----

// isDisabled reports whether a form control (or option) is disabled,
// directly, through a disabled optgroup, or through a disabled fieldset
// ancestor outside that fieldset's first legend.
func isDisabled(n *html.Node) bool {
	if !isAny(n, "button", "input", "select", "textarea", "option", "optgroup", "fieldset") {
		return false
	}
	if hasAttr(n, "disabled") {
		return true
	}
	if is(n, "option") && is(n.Parent, "optgroup") && hasAttr(n.Parent, "disabled") {
		return true
	}
	child := n
	for a := n.Parent; a != nil; child, a = a, a.Parent {
		if is(a, "fieldset") && hasAttr(a, "disabled") {
			legend := firstLegend(a)
			if legend == nil || !isInclusiveAncestor(legend, child) {
				return true
			}
		}
	}
	return false
}

func firstLegend(fieldset *html.Node) *html.Node {
	for c := fieldset.FirstChild; c != nil; c = c.NextSibling {
		if is(c, "legend") {
			return c
		}
	}
	return nil
}

// listedTags are the elements that can belong to a form.
var listedTags = []string{"button", "fieldset", "input", "object", "output", "select", "textarea"}

// formOwner is the form a control belongs to: the form its form attribute
// names, or else its nearest form ancestor.
func (p *page) formOwner(n *html.Node) *html.Node {
	if id, ok := attr(n, "form"); ok {
		if f := elementByID(p.doc, id); is(f, "form") {
			return f
		}
		return nil
	}
	for a := n.Parent; a != nil; a = a.Parent {
		if is(a, "form") {
			return a
		}
	}
	return nil
}

// formControls lists form's listed elements in tree order, including those
// outside it that point at it with a form attribute.
func (p *page) formControls(form *html.Node) []*html.Node {
	var out []*html.Node
	eachElement(p.doc, func(n *html.Node) bool {
		if isAny(n, listedTags...) && p.formOwner(n) == form {
			out = append(out, n)
		}
		return true
	})
	return out
}

// isSubmitButton reports whether n submits its form when activated.
func isSubmitButton(n *html.Node) bool {
	switch {
	case is(n, "button"):
		t := strings.ToLower(strings.TrimSpace(attrOr(n, "type")))
		return t != "reset" && t != "button"
	case is(n, "input"):
		t := inputType(n)
		return t == "submit" || t == "image"
	}
	return false
}

// ---- activation ----

// activationTarget is the element whose activation behaviour a click on el
// runs: el itself or its nearest ancestor that has one.
func activationTarget(el *html.Node) *html.Node {
	for n := el; n != nil; n = n.Parent {
		if n.Type != html.ElementNode {
			continue
		}
		switch {
		case isAny(n, "a", "area") && hasAttr(n, "href"):
			return n
		case is(n, "button"), is(n, "label"):
			return n
		case is(n, "input"):
			switch inputType(n) {
			case "submit", "image", "reset", "button", "checkbox", "radio":
				return n
			}
		case is(n, "summary"):
			if d := n.Parent; is(d, "details") && detailsSummary(d) == n {
				return n
			}
		}
	}
	return nil
}

// click is el.click(): it runs the activation behaviour, changing the page
// in place or returning the navigation it asks for (nil when none).
func (p *page) click(el *html.Node) *navRequest {
	// click() on a disabled form control does nothing at all.
	if isDisabled(el) {
		return nil
	}
	target := activationTarget(el)
	if target == nil || isDisabled(target) {
		return nil
	}
	switch {
	case isAny(target, "a", "area"):
		return p.followLink(target)
	case is(target, "label"):
		ctl := p.labeledControl(target)
		if ctl == nil || isInclusiveAncestor(ctl, el) {
			return nil
		}
		return p.click(ctl)
	case is(target, "summary"):
		d := target.Parent
		p.setBool(d, "open", !hasAttr(d, "open"))
		return nil
	case is(target, "input") && inputType(target) == "checkbox":
		p.setBool(target, "checked", !p.isChecked(target))
		return nil
	case is(target, "input") && inputType(target) == "radio":
		p.checkRadio(target)
		return nil
	}
	// Buttons and button-like inputs.
	form := p.formOwner(target)
	switch {
	case form == nil:
		return nil
	case isSubmitButton(target):
		return p.submit(form, target)
	case strings.EqualFold(attrOr(target, "type"), "reset"):
		p.reset(form)
	}
	return nil
}

// followLink resolves a link's href against the document base. Links that
// download or run script do not navigate (there is no script here), and the
// target attribute is ignored: the controlled tab follows the link.
func (p *page) followLink(a *html.Node) *navRequest {
	if hasAttr(a, "download") {
		return nil
	}
	u, err := p.resolve(attrOr(a, "href"))
	if err != nil || u.Scheme == "javascript" {
		return nil
	}
	return &navRequest{method: "GET", url: u, referrer: p.url}
}

// labeledControl is the control a label is for: the element its for
// attribute names, or its first labelable descendant.
func (p *page) labeledControl(label *html.Node) *html.Node {
	labelable := func(n *html.Node) bool {
		return isAny(n, "button", "meter", "output", "progress", "select", "textarea") ||
			(is(n, "input") && inputType(n) != "hidden")
	}
	if id, ok := attr(label, "for"); ok {
		if n := elementByID(p.doc, id); labelable(n) {
			return n
		}
		return nil
	}
	var found *html.Node
	eachElement(label, func(n *html.Node) bool {
		if labelable(n) {
			found = n
			return false
		}
		return true
	})
	return found
}

// checkRadio checks a radio button and unchecks the rest of its group: the
// radios with the same name and the same form owner.
func (p *page) checkRadio(r *html.Node) {
	name := attrOr(r, "name")
	if name != "" {
		form := p.formOwner(r)
		eachElement(p.doc, func(n *html.Node) bool {
			if n != r && is(n, "input") && inputType(n) == "radio" &&
				attrOr(n, "name") == name && p.formOwner(n) == form && p.isChecked(n) {
				p.setBool(n, "checked", false)
			}
			return true
		})
	}
	p.setBool(r, "checked", true)
}

// reset restores every control of form to its default.
func (p *page) reset(form *html.Node) {
	for _, n := range p.formControls(form) {
		delete(p.values, n)
		if is(n, "select") {
			delete(p.noSelection, n)
			for _, o := range selectOptions(n) {
				p.restoreBool(o, "selected")
			}
		}
		if is(n, "input") {
			p.restoreBool(n, "checked")
		}
	}
}

func (p *page) restoreBool(n *html.Node, name string) {
	if def, ok := p.defaults[attrKey{n, name}]; ok {
		p.setBool(n, name, def)
	}
}

// ---- implicit submission ----

// blocksImplicitSubmission are the input types of which a form may have only
// one for Enter to submit it when it has no submit button.
var blocksImplicitSubmission = map[string]bool{
	"text": true, "search": true, "url": true, "tel": true, "email": true,
	"password": true, "date": true, "month": true, "week": true, "time": true,
	"datetime-local": true, "number": true,
}

// pressEnter is a trusted Enter key on el: on a button it activates it; in
// a form field it submits the form implicitly, through its default button
// when it has one. In a textarea or an editable element Enter only inserts a
// line break, which the type action's untrusted key event does not do, so
// nothing happens there.
func (p *page) pressEnter(el *html.Node) *navRequest {
	switch {
	case is(el, "button"):
		return p.click(el)
	case is(el, "input"):
		switch inputType(el) {
		case "submit", "image", "reset", "button":
			return p.click(el)
		}
	default:
		return nil
	}
	form := p.formOwner(el)
	if form == nil {
		return nil
	}
	controls := p.formControls(form)
	for _, c := range controls {
		if isSubmitButton(c) {
			// The default button: Enter clicks it, and nothing happens when
			// it is disabled.
			if isDisabled(c) {
				return nil
			}
			return p.click(c)
		}
	}
	blocking := 0
	for _, c := range controls {
		if is(c, "input") && blocksImplicitSubmission[inputType(c)] {
			blocking++
		}
	}
	if blocking > 1 {
		return nil
	}
	return p.submit(form, nil)
}

// ---- submission ----

// submitterAttr returns the submitter's override (formaction, formmethod,
// formenctype, formnovalidate) when it has one, else the form's attribute.
func submitterAttr(form, submitter *html.Node, formAttr, override string) (string, bool) {
	if submitter != nil {
		if v, ok := attr(submitter, override); ok {
			return v, true
		}
	}
	return attr(form, formAttr)
}

// submit runs the form submission algorithm and returns the navigation, or
// nil when nothing is sent (invalid fields, dialog method, a non-HTTP
// action).
func (p *page) submit(form, submitter *html.Node) *navRequest {
	if _, skip := submitterAttr(form, submitter, "novalidate", "formnovalidate"); !skip && !p.formValid(form) {
		return nil
	}
	method, _ := submitterAttr(form, submitter, "method", "formmethod")
	method = strings.ToLower(strings.TrimSpace(method))
	if method == "dialog" {
		return nil
	}
	action, _ := submitterAttr(form, submitter, "action", "formaction")
	target := p.url
	if strings.TrimFunc(action, isASCIISpace) != "" {
		u, err := p.resolve(action)
		if err != nil {
			return nil
		}
		target = u
	}
	switch target.Scheme {
	case "http", "https", "data", "about":
	default:
		return nil // mailto: and the like leave the page alone
	}
	entries := p.entryList(form, submitter)
	if method != "post" {
		u := *target
		u.RawQuery = urlencode(entries)
		u.ForceQuery = false
		return &navRequest{method: "GET", url: &u, referrer: p.url}
	}
	enctype, _ := submitterAttr(form, submitter, "enctype", "formenctype")
	req := &navRequest{method: "POST", url: target, referrer: p.url}
	switch strings.ToLower(strings.TrimSpace(enctype)) {
	case "multipart/form-data":
		req.body, req.contentType = multipartBody(entries)
	case "text/plain":
		req.body, req.contentType = plainBody(entries), "text/plain"
	default:
		req.body, req.contentType = []byte(urlencode(entries)), "application/x-www-form-urlencoded"
	}
	return req
}

// formEntry is one name/value pair of a form's data set; file marks a file
// input, which has no file here and is sent empty.
type formEntry struct {
	name, value string
	file        bool
}

// entryList constructs the form's entry list in tree order.
func (p *page) entryList(form, submitter *html.Node) []formEntry {
	var out []formEntry
	for _, n := range p.formControls(form) {
		if closest(n, "datalist") != nil || isDisabled(n) || is(n, "object") ||
			is(n, "fieldset") || is(n, "output") {
			continue
		}
		if isSubmitButton(n) || is(n, "button") || (is(n, "input") && (inputType(n) == "reset" || inputType(n) == "button")) {
			if n != submitter {
				continue
			}
		}
		name := attrOr(n, "name")
		if is(n, "input") {
			switch inputType(n) {
			case "image":
				prefix := ""
				if name != "" {
					prefix = name + "."
				}
				out = append(out, formEntry{name: prefix + "x", value: "0"}, formEntry{name: prefix + "y", value: "0"})
				continue
			case "checkbox", "radio":
				if !p.isChecked(n) {
					continue
				}
			}
		}
		if name == "" {
			continue
		}
		switch {
		case is(n, "select"):
			for _, o := range p.selectedOptions(n) {
				if !isDisabled(o) {
					out = append(out, formEntry{name: name, value: optionValue(o)})
				}
			}
			continue
		case is(n, "input") && inputType(n) == "file":
			out = append(out, formEntry{name: name, file: true})
			continue
		case is(n, "input") && inputType(n) == "hidden" && strings.EqualFold(name, "_charset_"):
			out = append(out, formEntry{name: name, value: "UTF-8"})
			continue
		}
		out = append(out, formEntry{name: name, value: p.value(n)})
		if dir := attrOr(n, "dirname"); dir != "" && (is(n, "textarea") || is(n, "input")) {
			out = append(out, formEntry{name: dir, value: "ltr"})
		}
	}
	return out
}

// formValid is interactive validation reduced to the required attribute: a
// browser does not submit a form with an empty required field (it shows a
// bubble instead). Pattern, type and range constraints are not checked.
func (p *page) formValid(form *html.Node) bool {
	for _, n := range p.formControls(form) {
		if !hasAttr(n, "required") || isDisabled(n) || hasAttr(n, "readonly") || closest(n, "datalist") != nil {
			continue
		}
		switch {
		case is(n, "textarea"):
			if p.value(n) == "" {
				return false
			}
		case is(n, "select"):
			if p.value(n) == "" {
				return false
			}
		case is(n, "input"):
			switch inputType(n) {
			case "hidden", "submit", "image", "reset", "button", "range", "color":
			case "checkbox":
				if !p.isChecked(n) {
					return false
				}
			case "radio":
				if !p.radioGroupChecked(n) {
					return false
				}
			case "file":
				return false // no file can be chosen here
			default:
				if p.value(n) == "" {
					return false
				}
			}
		}
	}
	return true
}

func (p *page) radioGroupChecked(r *html.Node) bool {
	if p.isChecked(r) {
		return true
	}
	name, form := attrOr(r, "name"), p.formOwner(r)
	if name == "" {
		return false
	}
	checked := false
	eachElement(p.doc, func(n *html.Node) bool {
		if is(n, "input") && inputType(n) == "radio" && attrOr(n, "name") == name &&
			p.formOwner(n) == form && p.isChecked(n) {
			checked = true
			return false
		}
		return true
	})
	return checked
}

// crlf normalises line breaks the way form submission does.
func crlf(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.ReplaceAll(s, "\n", "\r\n")
}

// urlencode is the application/x-www-form-urlencoded serializer: pairs in
// order (url.Values would sort them), spaces as '+', and every byte outside
// ASCII alphanumerics and *-._ percent-encoded.
func urlencode(entries []formEntry) string {
	var b strings.Builder
	for i, e := range entries {
		if i > 0 {
			b.WriteByte('&')
		}
		formEscape(&b, crlf(e.name))
		b.WriteByte('=')
		formEscape(&b, crlf(e.value))
	}
	return b.String()
}

func formEscape(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ':
			b.WriteByte('+')
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '*', c == '-', c == '.', c == '_':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
}

// multipartBody encodes entries as multipart/form-data. A file input sends
// an empty part with an empty file name, as browsers do for "no file".
func multipartBody(entries []formEntry) ([]byte, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	escape := strings.NewReplacer("\n", "%0A", "\r", "%0D", `"`, "%22")
	for _, e := range entries {
		h := textproto.MIMEHeader{}
		disp := fmt.Sprintf(`form-data; name="%s"`, escape.Replace(crlf(e.name)))
		if e.file {
			disp += `; filename=""`
			h.Set("Content-Type", "application/octet-stream")
		}
		h.Set("Content-Disposition", disp)
		w, err := mw.CreatePart(h)
		if err != nil {
			continue // a bytes.Buffer never fails
		}
		if !e.file {
			_, _ = w.Write([]byte(crlf(e.value)))
		}
	}
	_ = mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

// plainBody encodes entries as text/plain: one name=value per line.
func plainBody(entries []formEntry) []byte {
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(crlf(e.name) + "=" + crlf(e.value) + "\r\n")
	}
	return []byte(b.String())
}
