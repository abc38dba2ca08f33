package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/session/transcript"
)

// The text and JSON formats are one apply of each transcript change: a
// segment streams as it grows and adds what its done item brings beyond
// what streamed, a call is one line when it starts and one with its
// outcome when it is done (never waiting for a second event), and a notice
// of the run is shown as its text.
func TestItemRendererAppliesTranscriptChanges(t *testing.T) {
	var out bytes.Buffer
	r := newItemRenderer(newJSONOutput(&out, "offline/demo", "standard", false))
	seg := transcript.Item{ID: "m1", Kind: transcript.Text, Answer: "a"}
	call := transcript.Item{ID: "c1", Kind: transcript.Tool, Answer: "a", Call: transcript.Call{Name: "Bash", Args: `{"command":"ls"}`}}
	skipped := transcript.Item{ID: "c2", Kind: transcript.Tool, Answer: "a", Call: transcript.Call{Name: "Read", Args: `{"path":"x"}`, Skipped: true, Result: "Not run"}}
	for _, c := range []transcript.Change{
		{Op: transcript.RunStarted, Conversation: "conv", Run: "r"},
		{Op: transcript.ItemStarted, Run: "r", Item: seg},
		{Op: transcript.DeltaAppended, Run: "r", Item: transcript.Item{ID: "m1"}, Delta: "Hello"},
		{Op: transcript.ItemDone, Run: "r", Item: transcript.Item{ID: "m1", Kind: transcript.Text, Text: "Hello, cut."}},
		{Op: transcript.ItemStarted, Run: "r", Item: call},
		{Op: transcript.ItemDone, Run: "r", Item: transcript.Item{ID: "c1", Kind: transcript.Tool, Call: transcript.Call{Name: "Bash", Args: `{"command":"ls"}`, Result: "a\nb", OK: true, Duration: 20 * time.Millisecond}}},
		{Op: transcript.ItemDone, Run: "r", Item: skipped},
		{Op: transcript.ItemDone, Run: "r", Item: transcript.Item{ID: "n1", Kind: transcript.Notice, Text: "moved", Level: transcript.Warn}},
		{Op: transcript.ItemDone, Item: transcript.Item{ID: "n2", Kind: transcript.Notice, Text: "recorded beside the run"}},
		{Op: transcript.RunEnded, Run: "r", Status: transcript.Interrupted, Code: "interrupted"},
	} {
		if err := r.change(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.end(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"type":"run_started","schema":1,"conversation_id":"conv","run_id":"r","model":"offline/demo","mode":"standard","resumed":false}`,
		`{"type":"text","message_id":"m1","delta":"Hello"}`,
		`{"type":"text","message_id":"m1","delta":", cut."}`,
		`{"type":"tool_call","id":"c1","name":"Bash","arguments":"{\"command\":\"ls\"}"}`,
		`{"type":"tool_result","id":"c1","name":"Bash","ok":true,"duration_ms":20,"output":"a\nb"}`,
		`{"type":"tool_call","id":"c2","name":"Read","arguments":""}`,
		`{"type":"tool_result","id":"c2","name":"Read","ok":false,"duration_ms":0,"output":"Not run"}`,
		`{"type":"text","message_id":"n1","delta":"⚠ moved"}`,
		`{"type":"run_error","conversation_id":"conv","run_id":"r","message":"interrupted","code":"interrupted"}`,
	}
	if got := strings.Split(strings.TrimSpace(out.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
