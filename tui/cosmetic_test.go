package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/tui/layout"
)

// innerEdgeClear fails when any row of the box at r has text in its last
// inner cell, the one next to the right border.
func innerEdgeClear(t *testing.T, screen string, r layout.Rect, what string) {
	t.Helper()
	rows := strings.Split(screen, "\n")
	for y := r.Y + 1; y < r.Y+r.H-1 && y < len(rows); y++ {
		if c := ansi.Cut(rows[y], r.X+r.W-2, r.X+r.W-1); c != " " {
			t.Fatalf("%s: text touches the right border on row %d: %q\n%s", what, y, rows[y], screen)
		}
	}
}

// dialogRect finds the dialog box whose top edge carries title.
func dialogRect(t *testing.T, screen, title string) layout.Rect {
	t.Helper()
	rows := strings.Split(screen, "\n")
	for y, row := range rows {
		i := strings.Index(row, title)
		if i < 0 {
			continue
		}
		x := ansi.StringWidth(row[:strings.LastIndex(row[:i], "┏")])
		w := ansi.StringWidth(row[:strings.Index(row[i:], "┓")+i]) - x + 1
		h := 1
		for y+h < len(rows) && ansi.Cut(rows[y+h], x, x+1) != "┗" {
			h++
		}
		return layout.Rect{X: x, Y: y, W: w, H: h + 1}
	}
	t.Fatalf("no dialog titled %q:\n%s", title, screen)
	return layout.Rect{}
}

// Text in the approvals and browser panes and in the help keeps a cell
// from the right border, wrapped or cut before it.
func TestTextKeepsOffTheRightBorder(t *testing.T) {
	t.Parallel()
	for _, size := range goldenSizes {
		w, h := size[0], size[1]
		b := buildBrowser(t, w, h)
		innerEdgeClear(t, b.screen(), b.m.lay.Browser, "browser pane")
		innerEdgeClear(t, b.screen(), b.m.lay.Chat, "chat pane beside the browser")
		a := buildApproval(t, w, h)
		innerEdgeClear(t, a.screen(), a.m.lay.Approvals, "approvals pane")
		// A call waiting for approval, its arguments too long for the row:
		// the chat's one-line summaries are cut a cell short of the border.
		a.events(
			callStarted("call_w", "BrowserNavigate", `{"url":"https://the demo shop and take a screenshot of every page in it"}`),
			session.ApprovalOpened{Approval: session.Approval{ID: "ap_w", Call: tools.Call{ID: "call_w", Name: "BrowserNavigate", Args: `{"url":"x"}`}, Opened: epoch}},
		)
		a.m.tab = layout.TabChat
		a.m.compose()
		mustContain(t, a.screen(), "waiting for your approval")
		innerEdgeClear(t, a.screen(), a.m.lay.Chat, "chat pane")
		e := newHarness(t, newFakeWS(), w, h)
		innerEdgeClear(t, e.screen(), e.m.lay.Browser, "waiting browser pane")
		e.key("?")
		s := e.screen()
		innerEdgeClear(t, s, dialogRect(t, s, "Keys"), "help")
	}
}

// At 120 columns the chat pane is 72 wide: the demo's hint wraps whole
// instead of being cut at the border.
func TestIntroHintWrapsAt120Columns(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newFakeWS(), 120, 40)
	s := h.screen()
	mustContain(t, s, "offline/demo is not an LLM", "demo.infer.localhost;", "screenshot”", "“run ls”.")
	innerEdgeClear(t, s, h.m.lay.Chat, "chat pane")
}

// A tool's summary cut to fit keeps the screenshot's file name, or stops
// before the path: never a path cut mid-name.
func TestSummaryKeepsTheScreenshotName(t *testing.T) {
	t.Parallel()
	mustContain(t, buildBrowser(t, 160, 48).screen(), "saved to …/20260902-140305.png …")
	for _, w := range []int{140, 100} {
		s := buildBrowser(t, w, 40).screen()
		mustContain(t, s, "Screenshot of Example Domain")
		mustNotContain(t, s, "artifacts/", "2026090…")
	}
}

// At 80×24 the browser tab shows the screenshot: the command log and the
// tab list give up rows for it.
func TestScreenshotPreviewAt80x24(t *testing.T) {
	t.Parallel()
	h := buildBrowser(t, 80, 24)
	h.m.tab = layout.TabBrowser
	h.m.compose()
	s := h.screen()
	mustContain(t, s, "Screenshot · 14:03:05", "▀▀▀▀", "● connected", "▶• Example Domain")
	if n := strings.Count(s, "▀▀▀▀"); n < 4 {
		t.Fatalf("%d rows of picture, want at least 4:\n%s", n, s)
	}
}
