package layout

import "testing"

func TestComputeCoversTheWindow(t *testing.T) {
	for _, size := range [][2]int{{160, 48}, {100, 30}, {99, 30}, {60, 20}, {200, 80}} {
		for _, p := range []Params{{InputLines: 1}, {InputLines: 4, ApprovalLines: 12}, {InputLines: 30, ApprovalLines: 200, Tab: TabBrowser}} {
			l := Compute(size[0], size[1], p)
			cells := make([]int, size[0]*size[1])
			for _, r := range []Rect{l.Header, l.TabBar, l.Chat, l.Approvals, l.Browser, l.Input, l.Status} {
				for y := r.Y; y < r.Y+r.H; y++ {
					for x := r.X; x < r.X+r.W; x++ {
						cells[y*size[0]+x]++
					}
				}
			}
			for i, n := range cells {
				if n != 1 {
					t.Fatalf("%v %+v: cell %d,%d covered %d times", size, p, i%size[0], i/size[0], n)
				}
			}
			if l.Columns != (size[0] >= ColumnsMinWidth) {
				t.Fatalf("%v: columns %v", size, l.Columns)
			}
		}
	}
}

func TestApprovalsGrowWithTheirContent(t *testing.T) {
	small := Compute(160, 48, Params{ApprovalLines: 0})
	big := Compute(160, 48, Params{ApprovalLines: 14})
	if small.Approvals.H != 3 || big.Approvals.H != 16 {
		t.Fatalf("approvals %d and %d high", small.Approvals.H, big.Approvals.H)
	}
	huge := Compute(160, 48, Params{ApprovalLines: 500})
	if huge.Browser.H < 10 {
		t.Fatalf("the browser keeps a third: %d", huge.Browser.H)
	}
}
