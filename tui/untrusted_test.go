package tui

import (
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
	"github.com/infer-workspace/infer/tui/layout"
)

// These tests feed the TUI text that tries to act on the terminal (a
// security review's findings, and their relatives) and look at the frame
// the way the terminal would: drawn cell by cell by the renderer Bubble
// Tea uses, not with its escapes stripped, which would hide exactly what
// they look for.

// drawn draws frame into a w×h cell buffer as the terminal renderer does
// (SGR styles and hyperlinks are read, other sequences dropped, \r returns
// to the first column) and returns its rows as plain text.
func drawn(frame string, w, h int) []string {
	c := lipgloss.NewCanvas(w, h)
	c.Compose(lipgloss.NewLayer(frame))
	rows := make([]string, h)
	for y := range rows {
		var b strings.Builder
		for x := 0; x < w; x++ {
			cell := c.CellAt(x, y)
			switch {
			case cell == nil:
				b.WriteByte(' ')
			case cell.Width == 0:
				// The second column of a wide character.
			default:
				b.WriteString(cell.Content)
			}
		}
		rows[y] = b.String()
	}
	return rows
}

// mustNotEmit fails when the frame sent to the terminal holds any of seqs.
func mustNotEmit(t *testing.T, frame string, seqs ...string) {
	t.Helper()
	for _, s := range seqs {
		if i := strings.Index(frame, s); i >= 0 {
			t.Fatalf("the frame sends %q to the terminal, near %q", s, frame[max(i-30, 0):min(i+30, len(frame))])
		}
	}
}

// Finding 1: a panel's tool_request whose command hides its tail behind
// SGR 8 (conceal). The person must see the whole command before allowing
// it, and be told that it holds such characters.
func TestApprovalShowsTheConcealedPartOfACommand(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{120, 40}, {60, 20}} {
		ws := newFakeWS()
		h := newHarness(t, ws, size[0], size[1])
		a := session.Approval{
			ID: "ap9",
			// As the panel sends it: JSON escapes, decoded into raw ESCs.
			Call:    tools.Call{ID: "call_x", Name: "Bash", Origin: tools.OriginPanel, Args: `{"command":"echo hello \u001b[8m&& touch X\u001b[0m"}`},
			Why:     "echo hello \x1b[8m&& touch X is not on the allowlist",
			Options: []tools.GrantOption{{Label: "Always allow Bash commands starting with `echo hello \x1b[8m&&`"}},
			Opened:  epoch,
		}
		h.events(
			callStarted("call_x", "Bash", `{"command":"echo hello \u001b[8m&& touch X\u001b[0m"}`),
			session.ApprovalOpened{Approval: a},
		)
		frame := h.m.View().Content
		mustNotEmit(t, frame, "\x1b[8m", "touch X\x1b[0m")
		screen := strings.Join(drawn(frame, size[0], size[1]), "\n")
		mustContain(t, screen, `$ echo hello \x1b[8m&& touch X\x1b[0m`, "⚠ has control or bidi")
		if size[0] >= layout.ColumnsMinWidth {
			mustContain(t, screen, `Bash echo hello \x1b[8m&& touch X`, // the chat's row
				`Why: echo hello \x1b[8m&& touch X is not`, "`echo hello \\x1b[8m&&`")
		}
	}

	// A clean command has no note.
	h := newHarness(t, newFakeWS(), 120, 40)
	h.events(session.ApprovalOpened{Approval: bashApproval()})
	mustNotContain(t, h.screen(), "control or bidi")
}

// Finding 2: a raw carriage return in a tool result returned the cursor to
// the first column and the rest of the line overwrote the chat's border.
func TestToolResultCarriageReturnKeepsTheFrame(t *testing.T) {
	t.Parallel()
	const w, ht = 120, 30
	h := newHarness(t, newFakeWS(), w, ht)
	h.events(
		callStarted("c1", "Bash", `{"command":"./build.sh"}`),
		callDone("c1", "Bash", `{"command":"./build.sh"}`, "progress 10%\rDONE\x1b[2K\ncol\tumn\r\nend\u202e!", true, time.Second),
	)
	check := func(what string) string {
		t.Helper()
		frame := h.m.View().Content
		mustNotEmit(t, frame, "\r", "\x1b[2K", "\u202e")
		rows := drawn(frame, w, ht)
		chat := h.m.lay.Chat
		for y := chat.Y; y < chat.Y+chat.H; y++ {
			r := []rune(rows[y]) // no wide characters in this frame
			if ansi.StringWidth(rows[y]) != w || len(r) != w {
				t.Fatalf("%s: row %d is %d cells: %q", what, y, ansi.StringWidth(rows[y]), rows[y])
			}
			left, right := r[chat.X], r[chat.X+chat.W-1]
			if !strings.ContainsRune("│┃╭╮╰╯┏┓┗┛", left) || !strings.ContainsRune("│┃╭╮╰╯┏┓┗┛", right) {
				t.Fatalf("%s: row %d lost the chat's border (%q … %q):\n%s", what, y, left, right, strings.Join(rows, "\n"))
			}
		}
		return strings.Join(rows, "\n")
	}
	mustContain(t, check("collapsed"), `└ progress 10%\rDONE\x1b[2K (enter: full result)`)
	h.key("tab", "up", "enter") // the chat, its last row, expanded
	screen := check("expanded")
	mustContain(t, screen, `│ progress 10%\rDONE\x1b[2K`, `│ col umn\r`, `│ end\u202e!`)
}

// Finding 3: a page's <title> reached the browser pane with its escapes.
// Titles and URLs of the page and of every tab, and the window title the
// conversation's name sets, are drawn clean.
func TestPageTitlesReachTheBrowserPaneClean(t *testing.T) {
	t.Parallel()
	const w, ht = 160, 48
	ws := newFakeWS()
	ws.status = browser.Status{State: browser.Connected, ExtensionVersion: "1.12.1\x1b[5m", Since: epoch}
	h := newHarness(t, ws, w, ht)
	title := "Evil\x1b[8m hidden\x1b]0;pwned\x07 \u202egnp.exe"
	url := "https://evil.example/\x1b[2J"
	h.events(
		session.TabsChanged{Tabs: []browser.Tab{
			{Title: title, URL: url, Controlled: true},
			{Title: "Mail\u009b2J", URL: "https://mail.example/", Active: true},
		}},
		session.PageChanged{Page: session.Page{URL: url, Title: title}},
		session.BrowserCommandDone{Record: browser.CommandRecord{Action: browser.Click, Target: "#a\x1b[8m", Started: epoch, Err: "no element\r\x1b[1Aoops"}},
		session.TitleChanged{Title: "Shop\x07\x1b]0;retitled\x07"},
	)
	frame := h.m.View().Content
	mustNotEmit(t, frame, "\x1b[8m", "\x1b[5m", "\x1b]0;", "\x07", "\u202e", "\x1b[2J", "\u009b", "\r", "\x1b[1A")
	screen := strings.Join(drawn(frame, w, ht), "\n")
	mustContain(t, screen,
		`page Evil\x1b[8m hidden\x1b]0;pwned\a \u202egnp.exe`,
		`▶  Evil\x1b[8m hidden\x1b]0;pwned\a \u202egnp.exe`,
		`• Mail\u009b2J`,
		`extension 1.12.1\x1b[5m`,
		`✗ click #a\x1b[8m`, `no element \x1b[1Aoops`, // whitespace collapsed to one row
		`Shop\a\x1b]0;retitled\a`, // the header and the chat's title
	)
	if wt := h.m.View().WindowTitle; strings.ContainsAny(wt, "\x07\x1b") {
		t.Fatalf("window title %q would end its OSC and start another", wt)
	}
}

// Model text is Markdown: it is made safe before Glamour renders it, and
// a character reference cannot bring back what was escaped.
func TestModelTextCannotStyleTheScreen(t *testing.T) {
	t.Parallel()
	const w, ht = 160, 48
	h := newHarness(t, newFakeWS(), w, ht)
	h.events(
		segmentStarted("th", transcript.Reasoning),
		delta("th", "plan\x1b[8m secret"),
		segmentDone("th", transcript.Reasoning, "plan\x1b[8m secret"),
		segmentStarted("m", transcript.Text),
		delta("m", "raw \x1b[8mhidden\x1b[0m, ref &#27;[8mref&#x1b;[0m, mark &rlm;x, cr a\rb\n\n"),
		delta("m", "`code &#27; stays`\n\n| a\tb |"),
	)
	check := func() string {
		t.Helper()
		frame := h.m.View().Content
		mustNotEmit(t, frame, "\x1b[8m", "\u200f", "\r")
		return strings.Join(drawn(frame, w, ht), "\n")
	}
	mustContain(t, check(), `raw \x1b[8mhidden\x1b[0m, ref \x1b[8mref\x1b[0m, mark \u200fx, cr a\rb`)
	h.events(segmentDone("m", transcript.Text, "raw \x1b[8mhidden\x1b[0m, ref &#27;[8mref&#x1b;[0m, mark &rlm;x, cr a\rb\n\n"+"`code &#27; stays`\n\n| a\tb |")) // rendered again, whole
	mustContain(t, check(), `raw \x1b[8mhidden\x1b[0m`, `code \x1b stays`)
	h.key("tab", "up", "enter") // the chat, the reasoning (the one row that expands), expanded
	mustContain(t, check(), `plan\x1b[8m secret`)
}

// Everything else the TUI draws from outside: notices and provider errors,
// panel messages, stored conversations, the picker's titles, the status bar.
func TestOtherUntrustedTextIsDrawnClean(t *testing.T) {
	t.Parallel()
	const w, ht = 140, 40
	ws := newFakeWS()
	ws.model = "evil\x1b[8m/model"
	ws.metas = []store.Meta{{ID: "c1", Title: "stored\x1b]0;x\x07 title", MessageCount: 1}}
	ws.snap = session.Snapshot{ID: "c0", Title: "t", Transcript: transcript.Transcript{Items: []transcript.Item{
		{ID: "k1", Kind: transcript.Tool, Call: transcript.Call{Name: "Mal\x1b[8mware", Args: `{"path":"a\u202eb"}`}},
	}}}
	h := newHarness(t, ws, w, ht, func(o *Options) { o.Notices = []string{"warning: bad\x1b[8m config"} })
	h.events(
		userSaid("", "from the panel\x1b[2J\rX", tools.OriginPanel),
		session.TranscriptChanged{Change: transcript.Change{Op: transcript.ItemDone, Item: transcript.Item{ID: "n1", Kind: transcript.Notice, Text: "provider error: \x1b]52;c;ZXZpbA==\x07", Level: transcript.Warn}}},
		session.QueueChanged{Queue: []string{"queued\x1b[8m"}},
	)
	h.send(flashMsg{text: "switching the model: 400 \x1b[31mbad\r\nrequest", warn: true})
	frame := h.m.View().Content
	mustNotEmit(t, frame, "\x1b[8m", "\x1b[2J", "\x1b]", "\x07", "\r", "\u202e", "\x1b[31mbad")
	screen := strings.Join(drawn(frame, w, ht), "\n")
	mustContain(t, screen,
		`bad\x1b[8m config`, `from the panel\x1b[2J\rX`, `provider error: \x1b]52;c;ZXZpbA==\a`,
		`queued\x1b[8m`, `Mal\x1b[8mware path=a\u202eb`, `evil\x1b[8m/model`, `400 \x1b[31mbad\r\nrequest`)

	h.key("esc") // drop the flash
	h.typeText("/resume")
	h.key("enter")
	frame = h.m.View().Content
	mustNotEmit(t, frame, "\x1b]0;", "\x07")
	mustContain(t, strings.Join(drawn(frame, w, ht), "\n"), `stored\x1b]0;x\a title`)
}
