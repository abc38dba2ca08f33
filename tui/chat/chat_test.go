package chat

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
	"github.com/infer-workspace/infer/tui/theme"
)

func newChat(w, h int) *Model {
	th := theme.New(true, false)
	m := New(th)
	m.SetSize(w, h)
	return m
}

func plain(s string) string { return ansi.Strip(s) }

func TestNextBlock(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want int
	}{
		{"one paragraph still going", -1},
		{"para one\n\npara two", len("para one\n\n")},
		{"```\ncode\n\nmore code\n", -1},                           // blank line inside a fence
		{"```\ncode\n\n```\n\nafter", len("```\ncode\n\n```\n\n")}, // closed fence, then a boundary
		{"\n\nleading blank lines", -1},
	} {
		if got, _ := nextBlock([]byte(tc.src), 0); got != tc.want {
			t.Errorf("nextBlock(%q) = %d, want %d", tc.src, got, tc.want)
		}
	}
	long := strings.Repeat("word ", 2000)
	end, joined := nextBlock([]byte(long), 0)
	if end <= 0 || end > forceSplit+1 || !joined || long[end-1] != ' ' {
		t.Fatalf("a huge paragraph is split at a space within %d bytes: end %d joined %v", forceSplit, end, joined)
	}
}

// The streaming renderer must not re-render finished blocks: their lines
// stay the very same slice elements while the tail grows.
func TestStreamRendersOnlyTheTail(t *testing.T) {
	md := newMarkdown("dark")
	var s mdStream
	src := []byte("# Title\n\nFirst paragraph.\n\nSecond")
	done, tail := s.update(src, md, 40, 0)
	if len(done) == 0 || len(tail) == 0 {
		t.Fatalf("done %d lines, tail %d lines", len(done), len(tail))
	}
	first := &done[0]
	src = append(src, " grows and grows"...)
	done2, tail2 := s.update(src, md, 40, 0)
	if &done2[0] != first {
		t.Fatal("finished blocks were rendered again")
	}
	if !strings.Contains(plain(strings.Join(tail2, "\n")), "grows and grows") {
		t.Fatalf("tail %q", tail2)
	}
	// Rendering the whole text at once says the same words.
	whole := plain(strings.Join(md.Render(string(src), 40), " "))
	streamed := plain(strings.Join(append(append([]string{}, done2...), tail2...), " "))
	if strings.Join(strings.Fields(whole), " ") != strings.Join(strings.Fields(streamed), " ") {
		t.Fatalf("streamed %q\nwhole    %q", streamed, whole)
	}
}

func TestOnlyVisibleItemsAreRendered(t *testing.T) {
	m := newChat(80, 20)
	var tr transcript.Transcript
	for i := 0; i < 5000; i++ {
		tr.Items = append(tr.Items, transcript.Item{Kind: transcript.User, Text: fmt.Sprintf("message %d", i), Done: true})
	}
	m.Load("", tr)
	view := plain(m.View())
	if !strings.Contains(view, "message 4999") {
		t.Fatalf("the end is shown:\n%s", view)
	}
	rendered := 0
	for _, it := range m.items {
		if it.head != nil {
			rendered++
		}
	}
	if rendered > 20 {
		t.Fatalf("%d of 5000 items were rendered for a 20-line view", rendered)
	}
	m.Top()
	if v := plain(m.View()); !strings.Contains(v, "message 0") {
		t.Fatalf("top:\n%s", v)
	}
}

func TestAnchoredViewStaysPut(t *testing.T) {
	m := newChat(60, 12)
	for i := 0; i < 30; i++ {
		m.Apply(done(transcript.Item{Kind: transcript.User, Text: fmt.Sprintf("line %d", i)}))
	}
	m.View()
	m.ScrollBy(-20)
	before := plain(m.View())
	m.Apply(transcript.Change{Op: transcript.ItemStarted, Item: transcript.Item{ID: "x", Kind: transcript.Text}})
	m.Apply(transcript.Change{Op: transcript.DeltaAppended, Item: transcript.Item{ID: "x"}, Delta: "new text"})
	if after := plain(m.View()); after[:strings.LastIndex(after, "\n")] != before[:strings.LastIndex(before, "\n")] {
		t.Fatalf("the view moved while scrolled up:\n%s\n---\n%s", before, after)
	}
	m.Bottom()
	if !strings.Contains(plain(m.View()), "new text") {
		t.Fatal("bottom shows the new text")
	}
}

func TestViewIsExactSize(t *testing.T) {
	m := newChat(50, 10)
	m.Apply(done(transcript.Item{Kind: transcript.User, Text: strings.Repeat("wide 漢字 ", 30), Origin: tools.OriginPanel}))
	m.Apply(transcript.Change{Op: transcript.ItemStarted, Item: bash("t", strings.Repeat("x", 200), "", false)})
	lines := strings.Split(m.View(), "\n")
	if len(lines) != 10 {
		t.Fatalf("%d lines", len(lines))
	}
	for i, l := range lines {
		if w := ansi.StringWidth(l); w != 50 {
			t.Fatalf("line %d is %d wide: %q", i, w, plain(l))
		}
	}
}

func TestSnapshotToolOutcomes(t *testing.T) {
	m := newChat(80, 20)
	read := func(id, path, result string, done, ok, unreported bool) transcript.Item {
		return transcript.Item{ID: id, Kind: transcript.Tool, Answer: "a", Done: done,
			Call: transcript.Call{Name: "Read", Args: `{"path":"` + path + `"}`, Result: result, OK: ok, Unreported: unreported}}
	}
	m.Load("", transcript.Transcript{Items: []transcript.Item{
		read("a", "x.go", "package x", true, true, false),
		read("b", "y.go", "package y", true, false, false),
		read("c", "z.go", "", false, false, false),
		// An outcome the store lacks is not guessed from words like
		// "error" in the text.
		read("d", "w.go", "error: nothing is wrong", true, false, true),
	}})
	v := plain(m.View())
	for _, want := range []string{"✓ Read x.go", "✗ Read y.go", "· Read z.go · no result", "· Read w.go\n", "└ error: nothing is wrong"} {
		if !strings.Contains(trimLines(v), want) {
			t.Fatalf("lacks %q:\n%s", want, v)
		}
	}
}

// trimLines drops the padding at the end of each line (and the border),
// so a test can match the end of a row.
func trimLines(v string) string {
	var out []string
	for _, l := range strings.Split(v, "\n") {
		l = strings.TrimSuffix(strings.TrimSuffix(l, "│"), "┃")
		out = append(out, strings.TrimRight(l, " "))
	}
	return strings.Join(out, "\n")
}

// done is the change that makes it, complete, part of the transcript.
func done(it transcript.Item) transcript.Change {
	return transcript.Change{Op: transcript.ItemDone, Item: it}
}

func bash(id, command, result string, ok bool) transcript.Item {
	return transcript.Item{ID: id, Kind: transcript.Tool, Call: transcript.Call{Name: "Bash", Args: `{"command":"` + command + `"}`, Result: result, OK: ok}}
}

// A call's outcome is the one its done item carries, never guessed from
// the result's words, and it arrives with the result: the row is never
// left half told.
func TestToolOutcomesComeFromTheWorkspace(t *testing.T) {
	m := newChat(80, 20)
	m.Apply(transcript.Change{Op: transcript.ItemStarted, Item: bash("a", "make", "", false)})
	failed := bash("a", "make", "all good, no error here", false)
	failed.Call.Duration = 1500 * time.Millisecond
	m.Apply(done(failed))
	if v := trimLines(plain(m.View())); !strings.Contains(v, "✗ Bash make · 1.5s\n") || !strings.Contains(v, "└ all good") {
		t.Fatalf("the reported failure stands, whatever the text says:\n%s", v)
	}
	ok := bash("b", "ls", "Error: none", true)
	ok.Call.Duration = 20 * time.Millisecond
	m.Apply(transcript.Change{Op: transcript.ItemStarted, Item: bash("b", "ls", "", false)})
	m.Apply(done(ok))
	if v := trimLines(plain(m.View())); !strings.Contains(v, "✓ Bash ls · 20ms") {
		t.Fatalf("view:\n%s", v)
	}
	// A call an interrupt skipped is done too, failed; it never started.
	skipped := transcript.Item{ID: "c", Kind: transcript.Tool, Call: transcript.Call{Name: "Read", Result: "Not run: the turn was interrupted before this call started.", Skipped: true}}
	m.Apply(done(skipped))
	// A stored result without an outcome is neither ✓ nor ✗.
	m.Apply(done(transcript.Item{ID: "d", Kind: transcript.Tool, Call: transcript.Call{Name: "Bash", Args: `{"command":"pwd"}`, Result: "/", Unreported: true}}))
	v := trimLines(plain(m.View()))
	if !strings.Contains(v, "✗ Read") || !strings.Contains(v, "· Bash pwd\n") || m.Len() != 4 {
		t.Fatalf("view:\n%s", v)
	}
}

// TestAngleBracketsSurviveMarkdown: text between < and > is what the
// model wrote (placeholders, generics, tags it talks about), not HTML to
// drop; code keeps its < without a visible backslash.
func TestAngleBracketsSurviveMarkdown(t *testing.T) {
	md := newMarkdown("dark") // the style people use; notty drops backslashes in code itself
	for _, tc := range []struct{ in, want string }{
		{"Try: open <url> · click <selector>", "Try: open <url> · click <selector>"},
		{"a Vec<String> and </div> and <!-- x -->", "a Vec<String> and </div> and <!-- x -->"},
		{"inline `Vec<String>` code", "Vec<String>"},
		{"already \\<escaped>", "already <escaped>"},
		{"1 < 2 and 3 <= 4", "1 < 2 and 3 <= 4"},
	} {
		got := ansi.Strip(strings.Join(md.Render(tc.in, 80), "\n"))
		if !strings.Contains(got, tc.want) || strings.Contains(got, "\\<") {
			t.Errorf("Render(%q) = %q, want it to contain %q", tc.in, got, tc.want)
		}
	}
	for _, fenced := range []string{
		"```html\n<div class=\"x\">hi</div>\n```\nafter <b>",
		"1. Install:\n\n    ```html\n    <div class=\"x\">hi</div>\n    ```\n\nafter <b>",
		"> ```html\n> <div class=\"x\">hi</div>\n> ```\n\nafter <b>",
		"run ```ls <dir>``` first, then\n\n```\n<div class=\"x\">hi</div>\n```\nafter <b>",
	} {
		got := ansi.Strip(strings.Join(md.Render(fenced, 80), "\n"))
		if !strings.Contains(got, `<div class="x">hi</div>`) || !strings.Contains(got, "after <b>") || strings.Contains(got, "\\<") {
			t.Errorf("fenced block %q: %q", fenced, got)
		}
	}
	if escapeTags("no tags here") != "no tags here" {
		t.Error("text without < must come back as it is")
	}
}

// An MCP client's call shows as a row that says who made it: waiting for
// the person while its approval is pending, then with its outcome. The
// turn running meanwhile ends without touching it.
func TestMCPClientCallsShowWhoMadeThem(t *testing.T) {
	m := newChat(100, 20)
	c := session.OutsideCall{ID: "mcp_1", Name: "BrowserNavigate", Args: `{"url":"https://example.com/"}`, Origin: tools.OriginMCP}
	m.Outside(c)
	m.SetAwaiting([]string{"mcp_1"})
	if v := trimLines(plain(m.View())); !strings.Contains(v, "⚠ MCP client · BrowserNavigate https://example.com/ · waiting for your approval") {
		t.Fatalf("a pending call does not say who asks:\n%s", v)
	}
	m.SetAwaiting(nil)
	m.Apply(transcript.Change{Op: transcript.RunStarted, Run: "r"})
	m.Apply(transcript.Change{Op: transcript.RunEnded, Run: "r"})
	if v := trimLines(plain(m.View())); !strings.Contains(v, "MCP client · BrowserNavigate https://example.com/ · running") {
		t.Fatalf("the turn's end touched the MCP client's call:\n%s", v)
	}
	c.Done, c.OK, c.Result, c.Duration = true, true, "Navigated to Example Domain", 120*time.Millisecond
	m.Outside(c)
	v := trimLines(plain(m.View()))
	if !strings.Contains(v, "✓ MCP client · BrowserNavigate https://example.com/ · 120ms") || !strings.Contains(v, "└ Navigated to Example Domain") {
		t.Fatalf("the ended call lacks its outcome:\n%s", v)
	}
	m.Outside(session.OutsideCall{ID: "mcp_2", Name: "BrowserClick", Origin: tools.OriginMCP, Done: true, Denied: true})
	if strings.Contains(plain(m.View()), "BrowserClick") {
		t.Fatal("the end of a call never shown started a row")
	}
}

// Loading a transcript shows its open run's calls running and every other
// unanswered call without a result: the path is Apply's, so a snapshot
// and the changes it stands for look the same.
func TestLoadShowsOnlyTheOpenRunRunning(t *testing.T) {
	items := []transcript.Item{
		{Kind: transcript.User, Text: "first", Done: true},
		{ID: "old", Kind: transcript.Tool, Call: transcript.Call{Name: "Read", Args: `{"path":"x.go"}`}},
		{Kind: transcript.Notice, Text: "a notice", Level: transcript.Warn, Done: true},
		{Kind: transcript.User, Text: "second", Done: true},
		{ID: "t", Kind: transcript.Text, Text: "Reading.", Done: true},
		{ID: "new", Kind: transcript.Tool, Call: transcript.Call{Name: "Read", Args: `{"path":"y.go"}`}},
	}
	loaded := newChat(80, 20)
	loaded.Load("T", transcript.Transcript{Items: items, Run: "r"})
	v := trimLines(plain(loaded.View()))
	for _, want := range []string{"· Read x.go · no result", "⚠ a notice", "Read y.go · running"} {
		if !strings.Contains(v, want) {
			t.Fatalf("lacks %q:\n%s", want, v)
		}
	}
	applied := newChat(80, 20)
	applied.SetTitle("T")
	applied.Apply(transcript.Change{Op: transcript.RunStarted, Run: "r0"})
	for i, it := range items {
		if i == 3 {
			applied.Apply(transcript.Change{Op: transcript.RunEnded, Run: "r0"})
			applied.Apply(transcript.Change{Op: transcript.RunStarted, Run: "r"})
		}
		op := transcript.ItemStarted
		if it.Done {
			op = transcript.ItemDone
		}
		applied.Apply(transcript.Change{Op: op, Item: it})
	}
	if a := applied.View(); a != loaded.View() {
		t.Fatalf("applied:\n%s\nloaded:\n%s", plain(a), v)
	}
}

// A run's notice (a message that moved to a new conversation) is a line
// of its own, with one mark however its text was written for the panel.
func TestRunNoticeHasOneMark(t *testing.T) {
	m := newChat(100, 10)
	m.Apply(transcript.Change{Op: transcript.RunStarted, Run: "r"})
	m.Apply(transcript.Change{Op: transcript.ItemDone, Run: "r", Item: transcript.Item{ID: "n", Kind: transcript.Notice, Level: transcript.Warn,
		Text: "The conversation was deleted, so your message started a new conversation."}})
	v := plain(m.View())
	if !strings.Contains(v, "⚠ The conversation was deleted") || strings.Contains(v, "⚠ ⚠") {
		t.Fatalf("view:\n%s", v)
	}
}

// A run that did not finish says how it ended, after stopping what it
// left running; one that finished adds nothing.
func TestRunEndSaysHowItEnded(t *testing.T) {
	m := newChat(100, 20)
	m.Apply(transcript.Change{Op: transcript.RunStarted, Run: "r1"})
	m.Apply(transcript.Change{Op: transcript.ItemStarted, Run: "r1", Item: bash("a", "sleep 9", "", false)})
	m.Apply(transcript.Change{Op: transcript.RunEnded, Run: "r1", Status: transcript.Interrupted, Code: "interrupted"})
	m.Apply(transcript.Change{Op: transcript.RunStarted, Run: "r2"})
	m.Apply(transcript.Change{Op: transcript.RunEnded, Run: "r2", Status: transcript.Failed, Err: "rate limited", Code: "rate_limited"})
	m.Apply(transcript.Change{Op: transcript.RunStarted, Run: "r3"})
	m.Apply(transcript.Change{Op: transcript.RunEnded, Run: "r3"})
	v := trimLines(plain(m.View()))
	for _, want := range []string{"⏹ Bash sleep 9 · interrupted", "⏹ Interrupted.", "⚠ rate limited"} {
		if !strings.Contains(v, want) {
			t.Fatalf("lacks %q:\n%s", want, v)
		}
	}
	if m.Len() != 3 {
		t.Fatalf("%d items, want the call and two lines", m.Len())
	}
}

// A snapshot read just after a call started holds the call, and the start
// still waiting in the queue then names it again: it stays one row. A
// later answer that reuses a finished call's id gets a row of its own.
func TestAStartTheSnapshotHeldIsOneRow(t *testing.T) {
	m := newChat(80, 20)
	m.Load("", transcript.Transcript{Run: "r", Items: []transcript.Item{
		{Kind: transcript.User, Text: "go", Done: true},
		bash("a", "make", "", false),
	}})
	m.Apply(transcript.Change{Op: transcript.ItemStarted, Run: "r", Item: bash("a", "make", "", false)})
	if m.Len() != 2 {
		t.Fatalf("%d items:\n%s", m.Len(), plain(m.View()))
	}
	m.Apply(done(bash("a", "make", "ok", true)))
	m.Apply(transcript.Change{Op: transcript.ItemStarted, Run: "r2", Item: bash("a", "make again", "", false)})
	if v := trimLines(plain(m.View())); m.Len() != 3 || !strings.Contains(v, "✓ Bash make") || !strings.Contains(v, "Bash make again · running") {
		t.Fatalf("%d items:\n%s", m.Len(), v)
	}
}
