// Package layout turns the window size into the rectangles the panes draw
// in. It is a pure function so every size can be tested without a
// terminal, and no pane ever computes an offset of its own.
package layout

// Rect is a region of the screen in cells.
type Rect struct{ X, Y, W, H int }

// Empty reports whether the rectangle has no area.
func (r Rect) Empty() bool { return r.W <= 0 || r.H <= 0 }

// Contains reports whether the cell x, y lies inside r.
func (r Rect) Contains(x, y int) bool {
	return x >= r.X && x < r.X+r.W && y >= r.Y && y < r.Y+r.H
}

// Tab is the pane shown in the body when the window is too narrow for
// columns.
type Tab int

// Tabs of the narrow layout.
const (
	TabChat Tab = iota
	TabApprovals
	TabBrowser
)

// Params are the content-dependent inputs of the layout.
type Params struct {
	// InputLines is how many text lines the editor wants (at least one).
	InputLines int
	// ApprovalLines is how many body lines the approvals pane wants; zero
	// when nothing is pending.
	ApprovalLines int
	// Tab is the pane the narrow layout shows.
	Tab Tab
}

// ColumnsMinWidth is the narrowest window that gets side-by-side columns.
const ColumnsMinWidth = 100

// Layout is where everything goes. Panes not shown have empty rectangles.
type Layout struct {
	Width, Height int
	// Columns is true when chat and the side panes sit side by side;
	// otherwise one pane is shown under a tab bar.
	Columns   bool
	Header    Rect
	TabBar    Rect
	Chat      Rect
	Approvals Rect
	Browser   Rect
	Input     Rect // the editor, including its one-line top rule
	Status    Rect
}

// Compute lays out a w×h window.
func Compute(w, h int, p Params) Layout {
	w, h = max(w, 1), max(h, 1)
	l := Layout{Width: w, Height: h}
	maxInput := max(1, min(10, h/4))
	inputLines := min(max(p.InputLines, 1), maxInput)

	l.Header = Rect{0, 0, w, 1}
	l.Status = Rect{0, h - 1, w, 1}
	inputH := inputLines + 1
	l.Input = Rect{0, h - 1 - inputH, w, inputH}
	bodyY := 1
	bodyH := max(l.Input.Y-bodyY, 0)

	if w >= ColumnsMinWidth {
		l.Columns = true
		chatW := w * 3 / 5
		sideW := w - chatW
		l.Chat = Rect{0, bodyY, chatW, bodyH}
		apH := 3 // a collapsed box says where requests will appear
		if p.ApprovalLines > 0 {
			apH = min(p.ApprovalLines+2, bodyH*2/3)
			apH = max(apH, min(6, bodyH))
		}
		apH = min(apH, bodyH)
		l.Approvals = Rect{chatW, bodyY, sideW, apH}
		l.Browser = Rect{chatW, bodyY + apH, sideW, bodyH - apH}
		return l
	}

	l.TabBar = Rect{0, bodyY, w, min(1, bodyH)}
	pane := Rect{0, bodyY + 1, w, max(bodyH-1, 0)}
	switch p.Tab {
	case TabApprovals:
		l.Approvals = pane
	case TabBrowser:
		l.Browser = pane
	default:
		l.Chat = pane
	}
	return l
}
