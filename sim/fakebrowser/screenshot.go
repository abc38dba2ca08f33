package fakebrowser

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"strings"

	"golang.org/x/image/font/basicfont"
	"golang.org/x/net/html"
	"golang.org/x/text/unicode/norm"
)

// The screenshot is a text rendering of the page, not a layout engine: the
// same walk as innerText produces lines of styled text and form controls,
// which are wrapped to the viewport and drawn with a fixed-width bitmap font
// under a browser-like bar showing the tab title and the address. It shows
// what a person would read on the page, in order, which is what a test or an
// agent looks at a screenshot for.

// Colours of the rendering.
var (
	colPage      = color.RGBA{0xff, 0xff, 0xff, 0xff}
	colInk       = color.RGBA{0x20, 0x21, 0x24, 0xff}
	colMuted     = color.RGBA{0x75, 0x75, 0x75, 0xff}
	colLink      = color.RGBA{0x1a, 0x0d, 0xab, 0xff}
	colStrip     = color.RGBA{0xde, 0xe1, 0xe6, 0xff}
	colOmnibox   = color.RGBA{0xf1, 0xf3, 0xf4, 0xff}
	colBorder    = color.RGBA{0x9a, 0xa0, 0xa6, 0xff}
	colButton    = color.RGBA{0xe8, 0xea, 0xed, 0xff}
	colRule      = color.RGBA{0xda, 0xdc, 0xe0, 0xff}
	colMonoShade = color.RGBA{0xf3, 0xf4, 0xf6, 0xff}
	colAccent    = color.RGBA{0x1a, 0x73, 0xe8, 0xff}
)

// Geometry of the rendering, in pixels.
const (
	glyphW     = 7  // basicfont.Face7x13 advance
	glyphH     = 13 // its height
	rowH       = 18 // a line of body text
	controlH   = 20 // a form control's box
	chromeH    = 72 // tab strip and toolbar
	pageMargin = 16
)

// shotItem is one piece of a line: text, or a control drawn as a box.
type shotItem struct {
	text    string
	style   runStyle
	control *controlBox
	tab     bool // a table cell boundary, widened by alignColumns
}

type controlKind uint8

const (
	ctlTextbox controlKind = iota
	ctlCheckbox
	ctlRadio
	ctlButton
	ctlSelect
	ctlImage
	ctlRule
)

// controlBox is a form control or other replaced element as drawn.
type controlBox struct {
	kind        controlKind
	label       string // value, placeholder, button label or alt text
	placeholder bool   // label is a placeholder, drawn muted
	checked     bool
	chars       int // width of a text box in characters
}

// shot is everything needed to draw a screenshot, copied out of the page so
// that drawing and encoding run without the browser's lock.
type shot struct {
	size  image.Point
	url   string
	title string
	lines [][]shotItem
}

// layoutPage walks p into lines, stopping once the viewport is surely full.
func layoutPage(ctx context.Context, p *page, size image.Point) (*shot, error) {
	s := &shot{size: size, url: p.url.String(), title: p.tabTitle()}
	body := p.body()
	if body == nil {
		return s, nil
	}
	sink := &shotSink{page: p, maxLines: size.Y/rowH + 1}
	w := &textWalker{ctx: ctx, sink: sink, decorate: true, atLineStart: true, full: sink.full}
	w.children(body, stateFor(computeStyleFrom(body, inheritedStyle(body)), 0))
	if w.err != nil {
		return nil, w.err
	}
	if len(sink.cur) > 0 {
		sink.newline()
	}
	s.lines = alignColumns(sink.lines)
	return s, nil
}

// shotSink collects the walk into lines, applying the same break rules as
// innerText so the picture and the text agree.
type shotSink struct {
	page     *page
	lines    [][]shotItem
	cur      []shotItem
	started  bool
	breaks   int
	maxLines int
}

func (s *shotSink) full() bool { return len(s.lines) >= s.maxLines }

func (s *shotSink) flushBreaks() {
	if s.started {
		for range s.breaks {
			s.newline()
		}
	}
	s.breaks = 0
	s.started = true
}

func (s *shotSink) newline() {
	s.lines = append(s.lines, s.cur)
	s.cur = nil
}

func (s *shotSink) text(t string, st runStyle) {
	if t == "" {
		return
	}
	s.flushBreaks()
	for i, part := range strings.Split(t, "\n") {
		if i > 0 {
			s.newline()
		}
		if part != "" {
			s.cur = append(s.cur, shotItem{text: toASCII(strings.ReplaceAll(part, "\t", "    ")), style: st})
		}
	}
}

func (s *shotSink) requiredBreaks(n int) { s.breaks = max(s.breaks, n) }

func (s *shotSink) literal(t string) {
	if t == "\t" {
		s.flushBreaks()
		s.cur = append(s.cur, shotItem{text: "   ", tab: true})
		return
	}
	s.text(t, 0)
}

func (s *shotSink) marker(m string, st runStyle) {
	s.flushBreaks()
	s.cur = append(s.cur, shotItem{text: toASCII(m), style: st &^ styleLink})
}

func (s *shotSink) control(n *html.Node, st runStyle) {
	box := s.page.controlFor(n)
	if box == nil {
		return
	}
	s.flushBreaks()
	if box.kind == ctlRule {
		if len(s.cur) > 0 {
			s.newline()
		}
		s.cur = append(s.cur, shotItem{control: box})
		s.newline()
		return
	}
	s.cur = append(s.cur, shotItem{control: box, style: st})
}

// controlFor describes how a replaced element or button is drawn. Secret
// inputs show bullets, never their value.
func (p *page) controlFor(n *html.Node) *controlBox {
	switch {
	case is(n, "input"):
		switch typ := inputType(n); typ {
		case "checkbox":
			return &controlBox{kind: ctlCheckbox, checked: p.isChecked(n)}
		case "radio":
			return &controlBox{kind: ctlRadio, checked: p.isChecked(n)}
		case "submit", "reset", "button":
			label, ok := attr(n, "value")
			if !ok {
				label = map[string]string{"submit": "Submit", "reset": "Reset"}[typ]
			}
			return &controlBox{kind: ctlButton, label: toASCII(label)}
		case "image":
			return &controlBox{kind: ctlImage, label: toASCII(attrOr(n, "alt"))}
		case "file":
			return &controlBox{kind: ctlButton, label: "Choose File"}
		default:
			box := &controlBox{kind: ctlTextbox, label: toASCII(p.displayValue(n)), chars: 20}
			if box.label == "" {
				box.label, box.placeholder = toASCII(attrOr(n, "placeholder")), true
			}
			return box
		}
	case is(n, "textarea"):
		v := p.displayValue(n)
		first, _, more := strings.Cut(v, "\n")
		if more {
			first += "..."
		}
		box := &controlBox{kind: ctlTextbox, label: toASCII(first), chars: 30}
		if v == "" {
			box.label, box.placeholder = toASCII(attrOr(n, "placeholder")), true
		}
		return box
	case is(n, "select"):
		var labels []string
		for _, o := range p.selectedOptions(n) {
			labels = append(labels, optionLabel(o))
		}
		return &controlBox{kind: ctlSelect, label: toASCII(strings.Join(labels, ", "))}
	case is(n, "button"):
		return &controlBox{kind: ctlButton, label: toASCII(collapseSpace(textContent(n)))}
	case is(n, "hr"):
		return &controlBox{kind: ctlRule}
	case is(n, "img"):
		alt := attrOr(n, "alt")
		if alt == "" {
			alt = "image"
		}
		return &controlBox{kind: ctlImage, label: toASCII(alt)}
	case isHTML(n):
		return &controlBox{kind: ctlImage, label: n.Data}
	}
	return nil
}

// asciiFallback maps common typography to what the ASCII font can draw.
var asciiFallback = strings.NewReplacer(
	"“", `"`, "”", `"`, "„", `"`, "‘", "'", "’", "'", "‚", "'",
	"–", "-", "—", "-", "−", "-", "…", "...", "·", "-", "×", "x",
	"«", "<<", "»", ">>", "\u00a0", " ", "→", "->", "←", "<-", "©", "(c)",
	"®", "(R)", "™", "TM", "€", "EUR", "£", "GBP", "°", "o",
)

// toASCII rewrites text for the bitmap font: typography to ASCII, accented
// letters to their base letter; other characters stay and draw as a box.
// Bullets stay too, since the renderer draws them itself.
func toASCII(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	s = asciiFallback.Replace(s)
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 || r == '•' {
			b.WriteRune(r)
			continue
		}
		if d := []rune(norm.NFD.String(string(r))); len(d) > 0 && d[0] < 0x80 {
			b.WriteRune(d[0])
			continue
		}
		b.WriteRune('\uFFFD')
	}
	return b.String()
}

// alignColumns pads the cells of consecutive table rows (lines with cell
// boundaries) so that their columns line up, as a table would draw them.
func alignColumns(lines [][]shotItem) [][]shotItem {
	hasTab := func(line []shotItem) bool {
		for _, it := range line {
			if it.tab {
				return true
			}
		}
		return false
	}
	for start := 0; start < len(lines); {
		if !hasTab(lines[start]) {
			start++
			continue
		}
		end := start
		for end < len(lines) && hasTab(lines[end]) {
			end++
		}
		var widths []int
		for _, line := range lines[start:end] {
			col, w := 0, 0
			for _, it := range line {
				if it.tab {
					if col == len(widths) {
						widths = append(widths, 0)
					}
					widths[col] = max(widths[col], w)
					col, w = col+1, 0
					continue
				}
				w += itemChars(it)
			}
		}
		for _, line := range lines[start:end] {
			col, w := 0, 0
			for i, it := range line {
				if it.tab {
					line[i].text = strings.Repeat(" ", widths[col]-w+3)
					col, w = col+1, 0
					continue
				}
				w += itemChars(it)
			}
		}
		start = end
	}
	return lines
}

// itemChars is an item's width in character cells.
func itemChars(it shotItem) int {
	if it.control != nil {
		return (controlWidth(it.control) + 4 + glyphW - 1) / glyphW
	}
	return len([]rune(it.text)) * scaleOf(it.style)
}

// ---- drawing ----

// placed is a piece of a wrapped row.
type placed struct {
	x    int
	item shotItem
	text string // the part of item.text on this row
}

type row struct {
	items  []placed
	height int
}

func scaleOf(st runStyle) int {
	if st&styleHeading1 != 0 {
		return 2
	}
	return 1
}

func itemHeight(it shotItem) int {
	if it.control != nil {
		if it.control.kind == ctlRule {
			return rowH / 2
		}
		return controlH + 4
	}
	return rowH * scaleOf(it.style)
}

// controlWidth is a control's width in pixels.
func controlWidth(c *controlBox) int {
	switch c.kind {
	case ctlCheckbox, ctlRadio:
		return 13
	case ctlTextbox:
		return c.chars*glyphW + 10
	case ctlSelect:
		return max(len([]rune(c.label)), 8)*glyphW + 26
	}
	return len([]rune(c.label))*glyphW + 18
}

// wrap breaks the logical lines into rows that fit width, at spaces where it
// can and inside a word only when the word alone is too wide.
func wrap(lines [][]shotItem, width int) []row {
	var rows []row
	for _, line := range lines {
		r := row{height: rowH}
		x := 0
		add := func(p placed, w, h int) {
			p.x = x
			r.items = append(r.items, p)
			r.height = max(r.height, h)
			x += w
		}
		breakRow := func() {
			rows = append(rows, r)
			r, x = row{height: rowH}, 0
		}
		for _, it := range line {
			if it.control != nil {
				w := controlWidth(it.control)
				if it.control.kind == ctlRule {
					w = width
				}
				if x > 0 && x+w > width {
					breakRow()
				}
				add(placed{item: it}, w+4, itemHeight(it))
				continue
			}
			cw := glyphW * scaleOf(it.style)
			for _, word := range splitWords(it.text) {
				n := len([]rune(word))
				if x > 0 && x+len([]rune(strings.TrimRight(word, " ")))*cw > width {
					breakRow()
					word = strings.TrimLeft(word, " ")
					n = len([]rune(word))
				}
				for n*cw > width-x && x == 0 && n > 1 {
					fit := max((width-x)/cw, 1)
					rs := []rune(word)
					add(placed{item: it, text: string(rs[:fit])}, fit*cw, itemHeight(it))
					breakRow()
					word = string(rs[fit:])
					n = len(rs) - fit
				}
				if word != "" {
					add(placed{item: it, text: word}, n*cw, itemHeight(it))
				}
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// splitWords splits text after each run of spaces, keeping the spaces with
// the word before them.
func splitWords(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' && (i+1 == len(s) || s[i+1] != ' ') {
			out = append(out, s[start:i+1])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// encodePNG draws the shot and encodes it.
func (s *shot) encodePNG() ([]byte, error) {
	img := image.NewRGBA(image.Rectangle{Max: s.size})
	draw.Draw(img, img.Bounds(), image.NewUniform(colPage), image.Point{}, draw.Src)
	s.drawChrome(img)
	contentW := s.size.X - 2*pageMargin
	y := chromeH + pageMargin
	for _, r := range wrap(s.lines, contentW) {
		if y >= s.size.Y {
			break
		}
		for _, p := range r.items {
			drawPlaced(img, pageMargin+p.x, y, r.height, p)
		}
		y += r.height
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// drawChrome draws the tab strip with the title and the toolbar with the
// address.
func (s *shot) drawChrome(img *image.RGBA) {
	w := s.size.X
	fill(img, image.Rect(0, 0, w, 34), colStrip)
	tabW := min(240, w-16)
	fill(img, image.Rect(8, 6, 8+tabW, 34), colPage)
	drawString(img, 20, 25, fitText(toASCII(s.title), (tabW-24)/glyphW), colInk, 1, false)
	fill(img, image.Rect(0, 34, w, chromeH), colPage)
	fill(img, image.Rect(12, 40, w-12, 66), colOmnibox)
	drawString(img, 24, 58, fitText(toASCII(s.url), (w-48)/glyphW), colInk, 1, false)
	fill(img, image.Rect(0, chromeH-1, w, chromeH), colRule)
}

// fitText shortens s to n characters with an ellipsis.
func fitText(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n || n < 4 {
		return s
	}
	return string(rs[:n-3]) + "..."
}

// drawPlaced draws one piece of a row whose top is y.
func drawPlaced(img *image.RGBA, x, y, height int, p placed) {
	base := y + height - 5 // text baseline, near the bottom of the row
	if c := p.item.control; c != nil {
		drawControl(img, x, y+(height-controlH)/2, c)
		return
	}
	st := p.item.style
	scale := scaleOf(st)
	col := colInk
	if st&styleLink != 0 {
		col = colLink
	}
	text := strings.TrimRight(p.text, " ")
	if st&styleMono != 0 && text != "" {
		fill(img, image.Rect(x-1, base-glyphH*scale+1, x+len([]rune(p.text))*glyphW*scale+1, base+3), colMonoShade)
	}
	drawString(img, x, base, p.text, col, scale, st&styleBold != 0)
	if st&styleLink != 0 && text != "" {
		fill(img, image.Rect(x, base+2, x+len([]rune(text))*glyphW*scale, base+3), colLink)
	}
}

func drawControl(img *image.RGBA, x, y int, c *controlBox) {
	switch c.kind {
	case ctlRule:
		fill(img, image.Rect(x, y+controlH/2, img.Bounds().Dx()-pageMargin, y+controlH/2+1), colRule)
	case ctlCheckbox, ctlRadio:
		top := y + (controlH-13)/2
		r := image.Rect(x, top, x+13, top+13)
		if c.checked {
			fill(img, r, colAccent)
			if c.kind == ctlCheckbox {
				drawString(img, x+3, top+11, "x", colPage, 1, true)
			} else {
				fill(img, image.Rect(x+4, top+4, x+9, top+9), colPage)
			}
		} else {
			outline(img, r, colBorder)
		}
	case ctlButton:
		r := image.Rect(x, y, x+controlWidth(c), y+controlH)
		fill(img, r, colButton)
		outline(img, r, colBorder)
		drawString(img, x+9, y+controlH-5, c.label, colInk, 1, false)
	case ctlTextbox, ctlSelect:
		w := controlWidth(c)
		r := image.Rect(x, y, x+w, y+controlH)
		outline(img, r, colBorder)
		col := colInk
		if c.placeholder {
			col = colMuted
		}
		room := (w - 10) / glyphW
		if c.kind == ctlSelect {
			room = (w - 26) / glyphW
			drawString(img, x+w-14, y+controlH-5, "v", colInk, 1, false)
		}
		drawString(img, x+5, y+controlH-5, fitText(c.label, room), col, 1, false)
	case ctlImage:
		w := controlWidth(c)
		r := image.Rect(x, y, x+w, y+controlH)
		fill(img, r, colOmnibox)
		outline(img, r, colRule)
		drawString(img, x+9, y+controlH-5, c.label, colMuted, 1, false)
	}
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	draw.Draw(img, r.Intersect(img.Bounds()), image.NewUniform(c), image.Point{}, draw.Src)
}

func outline(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	fill(img, image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+1), c)
	fill(img, image.Rect(r.Min.X, r.Max.Y-1, r.Max.X, r.Max.Y), c)
	fill(img, image.Rect(r.Min.X, r.Min.Y, r.Min.X+1, r.Max.Y), c)
	fill(img, image.Rect(r.Max.X-1, r.Min.Y, r.Max.X, r.Max.Y), c)
}

// drawString draws s with its baseline at y, scaled by an integer factor,
// bold by drawing twice one pixel apart.
func drawString(img *image.RGBA, x, y int, s string, c color.RGBA, scale int, bold bool) {
	face := basicfont.Face7x13
	alpha, _ := face.Mask.(*image.Alpha)
	for _, r := range s {
		if r == '•' {
			cx, cy := x+glyphW*scale/2, y-4*scale
			fill(img, image.Rect(cx-2*scale, cy-2*scale, cx+2*scale+1, cy+2*scale+1), c)
			x += glyphW * scale
			continue
		}
		if r != ' ' && alpha != nil {
			rng := glyphRow(face, r)
			if rng >= 0 {
				for gy := 0; gy < glyphH; gy++ {
					for gx := 0; gx < face.Width; gx++ {
						if alpha.AlphaAt(gx, rng*glyphH+gy).A < 0x80 {
							continue
						}
						px := x + gx*scale
						py := y - face.Ascent*scale + gy*scale
						for dy := range scale {
							for dx := range scale + boolInt(bold) {
								img.SetRGBA(px+dx, py+dy, c)
							}
						}
					}
				}
			}
		}
		x += glyphW * scale
	}
}

// glyphRow is the index of r's glyph in the font's mask (U+FFFD for
// characters it lacks), or -1.
func glyphRow(face *basicfont.Face, r rune) int {
	for pass := 0; pass < 2; pass++ {
		for _, rg := range face.Ranges {
			if rg.Low <= r && r < rg.High {
				return int(r-rg.Low) + rg.Offset
			}
		}
		r = '\uFFFD'
	}
	return -1
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
