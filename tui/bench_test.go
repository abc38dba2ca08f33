package tui

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/transcript"
)

// longSnapshot is a conversation of n messages mixing the kinds the chat
// renders: user text, Markdown answers with code, tool calls and results.
func longSnapshot(n int) session.Snapshot {
	s := session.Snapshot{ID: "big", Title: "A long conversation"}
	items := &s.Transcript.Items
	for i := 0; len(*items) < n; i++ {
		id := "call_" + strconv.Itoa(i)
		*items = append(*items,
			transcript.Item{Kind: transcript.User, Text: fmt.Sprintf("step %d: open example.com and read the heading", i), Done: true},
			transcript.Item{ID: "t" + id, Kind: transcript.Text, Text: fmt.Sprintf("Working on **step %d**.\n\n- first\n- second\n\n```sh\necho %d\n```", i, i), Done: true},
			transcript.Item{ID: id, Kind: transcript.Tool, Call: transcript.Call{Name: "BrowserRead", Args: `{"selector":"h1"}`, Result: "Page: Example Domain\n\nExample Domain", OK: true}, Done: true},
		)
	}
	*items = (*items)[:n]
	return s
}

// BenchmarkChatRenderStreaming measures one frame while an answer streams:
// a text delta arrives, the flush tick composes the screen, View returns
// it. The frame must cost about the same beside 5,000 messages as beside
// 10, because only the visible items and the streaming tail are rendered.
func BenchmarkChatRenderStreaming(b *testing.B) {
	for _, n := range []int{10, 5000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			ws := newFakeWS()
			ws.snap = longSnapshot(n)
			h := newHarness(b, ws, 160, 48)
			h.events(
				session.BusyChanged{Busy: true},
				segmentStarted("s", transcript.Text),
			)
			words := []string{"the ", "page ", "shows ", "a ", "heading ", "and ", "`code` ", "**bold** "}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d := words[i%len(words)]
				if i%60 == 59 {
					d = "done.\n\n" // close a paragraph now and then, as text does
				}
				h.m.Update(eventsMsg{delta("s", d)})
				h.m.Update(flushMsg{})
				_ = h.m.View()
			}
		})
	}
}

// BenchmarkFrameWithDialog measures a key typed and its frame composed,
// into the editor ("none") and into the /resume picker's search, which
// draws through the Lip Gloss compositor. The difference is what the
// compositor costs a frame.
func BenchmarkFrameWithDialog(b *testing.B) {
	for _, open := range []bool{false, true} {
		name := "none"
		if open {
			name = "resume"
		}
		b.Run(name, func(b *testing.B) {
			ws := newFakeWS()
			ws.snap = conversationSnapshot()
			ws.metas = resumeMetas()
			h := newHarness(b, ws, 160, 48)
			if open {
				h.typeText("/resume")
				h.key("esc", "enter")
				if h.m.dialog == nil {
					b.Fatal("no dialog")
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := "x"
				if i%2 == 1 {
					k = "backspace"
				}
				h.m.Update(keyMsg(k))
				_ = h.m.View()
			}
		})
	}
}
