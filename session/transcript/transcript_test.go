package transcript

import (
	"reflect"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/tools"
)

// turn is a run as the agent reports it: a question, reasoning, text, a
// call that succeeds and one that fails, a notice between them, the
// answer.
func turn() []Change {
	return []Change{
		{Op: ItemStarted, Item: Item{ID: "u1", Kind: User, Text: "read the page", Origin: tools.OriginPanel}},
		{Op: ItemDone, Item: Item{ID: "u1", Kind: User, Text: "read the page", Origin: tools.OriginPanel}},
		{Op: RunStarted, Run: "r1"},
		{Op: ItemStarted, Run: "r1", Item: Item{ID: "th", Kind: Reasoning, Answer: "a1"}},
		{Op: DeltaAppended, Run: "r1", Item: Item{ID: "th"}, Delta: "hmm, "},
		{Op: DeltaAppended, Run: "r1", Item: Item{ID: "th"}, Delta: "a page"},
		{Op: ItemDone, Run: "r1", Item: Item{ID: "th", Kind: Reasoning, Answer: "a1", Text: "hmm, a page"}},
		{Op: ItemStarted, Run: "r1", Item: Item{ID: "t1", Kind: Text, Answer: "a1"}},
		{Op: DeltaAppended, Run: "r1", Item: Item{ID: "t1"}, Delta: "Reading"},
		{Op: ItemDone, Run: "r1", Item: Item{ID: "t1", Kind: Text, Answer: "a1", Text: "Reading", ProviderData: map[string]string{"x": "sig"}}},
		{Op: ItemStarted, Run: "r1", Item: Item{ID: "c1", Kind: Tool, Answer: "a1", Call: Call{Name: "BrowserRead", Args: `{"tab":1}`}}},
		{Op: ItemStarted, Run: "r1", Item: Item{ID: "c2", Kind: Tool, Answer: "a1", Call: Call{Name: "Bash", Args: `{"command":"ls"}`}}},
		{Op: ItemDone, Run: "r1", Item: Item{ID: "c1", Kind: Tool, Answer: "a1", Call: Call{Name: "BrowserRead", Args: `{"tab":1}`, Result: "# Title", OK: true,
			Images: []llm.Image{{MIME: "image/png", Data: []byte("p")}}}}},
		{Op: ItemDone, Item: Item{ID: "n1", Kind: Notice, Text: "the panel switched the mode", Level: Warn}},
		{Op: ItemDone, Run: "r1", Item: Item{ID: "c2", Kind: Tool, Answer: "a1", Call: Call{Name: "Bash", Args: `{"command":"ls"}`, Result: "denied"}}},
		{Op: ItemStarted, Run: "r1", Item: Item{ID: "t2", Kind: Text, Answer: "a2", Text: "The title "}},
		{Op: DeltaAppended, Run: "r1", Item: Item{ID: "t2"}, Delta: "is Title."},
		{Op: RunEnded, Run: "r1", Status: Finished},
	}
}

func applyAll(t *testing.T, cs []Change) Transcript {
	t.Helper()
	var tr Transcript
	for _, c := range cs {
		if err := tr.Apply(c); err != nil {
			t.Fatalf("apply %v: %v", c.Op, err)
		}
	}
	return tr
}

func TestApplyFoldsATurnIntoItems(t *testing.T) {
	tr := applyAll(t, turn())
	var got []string
	for _, it := range tr.Items {
		s := it.Kind.String() + ":" + it.Text
		if it.Kind == Tool {
			s = it.Kind.String() + ":" + it.Call.Name + "=" + it.Call.Result
		}
		got = append(got, s)
	}
	want := []string{"user:read the page", "reasoning:hmm, a page", "text:Reading", "tool:BrowserRead=# Title", "tool:Bash=denied", "notice:the panel switched the mode", "text:The title is Title."}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("items\n got %q\nwant %q", got, want)
	}
	if tr.Run != "" {
		t.Fatalf("run %q still open after it ended", tr.Run)
	}
	if c, _ := tr.Item("c1"); !c.Done || !c.Call.OK {
		t.Fatalf("c1 %+v", c)
	}
	if c, _ := tr.Item("c2"); !c.Done || c.Call.OK {
		t.Fatalf("c2 %+v", c)
	}
	if t2, _ := tr.Item("t2"); t2.Done {
		t.Fatal("a segment that never got its done is done")
	}
}

func TestApplyTracksTheOpenRun(t *testing.T) {
	var tr Transcript
	if err := tr.Apply(Change{Op: RunStarted, Run: "r9"}); err != nil || tr.Run != "r9" {
		t.Fatalf("run %q, err %v", tr.Run, err)
	}
	if err := tr.Apply(Change{Op: RunEnded, Run: "r9", Status: Interrupted}); err != nil || tr.Run != "" {
		t.Fatalf("run %q, err %v", tr.Run, err)
	}
}

func TestApplyRefusesADeltaForNoItem(t *testing.T) {
	tr := applyAll(t, turn()[:2])
	before := tr.Clone()
	err := tr.Apply(Change{Op: DeltaAppended, Item: Item{ID: "nope"}, Delta: "x"})
	if err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("err %v", err)
	}
	if !reflect.DeepEqual(tr, before) {
		t.Fatal("a refused change changed the transcript")
	}
	if err := tr.Apply(Change{Op: 99}); err == nil {
		t.Fatal("an unknown op was applied")
	}
}

func TestToolArgsStreamIntoTheCall(t *testing.T) {
	tr := applyAll(t, []Change{
		{Op: ItemStarted, Item: Item{ID: "c", Kind: Tool, Answer: "a", Call: Call{Name: "Bash", Args: `{"comm`}}},
		{Op: DeltaAppended, Item: Item{ID: "c"}, Delta: `and":"ls"}`},
	})
	if c, _ := tr.Item("c"); c.Call.Args != `{"command":"ls"}` || c.Text != "" {
		t.Fatalf("call %+v", c)
	}
}

func TestLatestItemWinsForAReusedID(t *testing.T) {
	tr := applyAll(t, []Change{
		{Op: ItemDone, Item: Item{ID: "call_0", Kind: Tool, Answer: "a", Call: Call{Name: "Read", Result: "first", OK: true}}},
		{Op: ItemStarted, Item: Item{ID: "call_0", Kind: Tool, Answer: "b", Call: Call{Name: "Read"}}},
		{Op: ItemDone, Item: Item{ID: "call_0", Kind: Tool, Answer: "b", Call: Call{Name: "Read", Result: "second"}}},
	})
	if len(tr.Items) != 2 || tr.Items[0].Call.Result != "first" || tr.Items[1].Call.Result != "second" {
		t.Fatalf("items %+v", tr.Items)
	}
}

func TestCloneIsIndependent(t *testing.T) {
	tr := applyAll(t, turn())
	c := tr.Clone()
	if err := c.Apply(Change{Op: DeltaAppended, Item: Item{ID: "t2"}, Delta: " More."}); err != nil {
		t.Fatal(err)
	}
	if it, _ := tr.Item("t2"); it.Text != "The title is Title." {
		t.Fatalf("the original changed: %q", it.Text)
	}
}

func TestRequestIsTheDialogueWithoutNotices(t *testing.T) {
	tr := applyAll(t, turn())
	want := []llm.Message{
		{Role: llm.RoleUser, Content: "read the page"},
		{Role: llm.RoleAssistant, Content: "Reading", Reasoning: "hmm, a page", ProviderData: map[string]string{"x": "sig"}, ToolCalls: []llm.ToolCall{
			{ID: "c1", Name: "BrowserRead", Arguments: `{"tab":1}`},
			{ID: "c2", Name: "Bash", Arguments: `{"command":"ls"}`},
		}},
		{Role: llm.RoleTool, ToolCallID: "c1", Content: "# Title", Images: []llm.Image{{MIME: "image/png", Data: []byte("p")}}},
		{Role: llm.RoleTool, ToolCallID: "c2", Content: "denied"},
		{Role: llm.RoleAssistant, Content: "The title is Title."},
	}
	if got := tr.Request(); !reflect.DeepEqual(got, want) {
		t.Fatalf("request\n got %+v\nwant %+v", got, want)
	}
	for _, m := range tr.Request() {
		if strings.Contains(m.Content, "switched the mode") {
			t.Fatal("a notice reached the model")
		}
	}
}

func TestRequestLeavesOutCallsWithoutResults(t *testing.T) {
	tr := applyAll(t, []Change{
		{Op: ItemDone, Item: Item{ID: "u", Kind: User, Text: "go"}},
		{Op: ItemStarted, Item: Item{ID: "a", Kind: Tool, Answer: "x", Call: Call{Name: "Bash", Args: "{}"}}},
		{Op: ItemStarted, Item: Item{ID: "b", Kind: Tool, Answer: "x", Call: Call{Name: "Read", Args: "{}"}}},
		{Op: ItemDone, Item: Item{ID: "a", Kind: Tool, Answer: "x", Call: Call{Name: "Bash", Args: "{}", Result: "ok", OK: true}}},
	})
	req := tr.Request()
	if len(req) != 3 || len(req[1].ToolCalls) != 1 || req[1].ToolCalls[0].ID != "a" || req[2].ToolCallID != "a" {
		t.Fatalf("request %+v", req)
	}
	// Messages keeps the open call, as it is stored.
	msgs := tr.Messages()
	if len(msgs) != 3 || len(msgs[1].ToolCalls) != 2 {
		t.Fatalf("messages %+v", msgs)
	}
	if open := tr.OpenCalls(); len(open) != 1 || open[0].ID != "b" {
		t.Fatalf("open calls %+v", open)
	}
	// An answer made only of an open call is left out whole.
	tr = applyAll(t, []Change{
		{Op: ItemDone, Item: Item{ID: "u", Kind: User, Text: "go"}},
		{Op: ItemStarted, Item: Item{ID: "a", Kind: Tool, Answer: "x", Call: Call{Name: "Bash"}}},
	})
	if req := tr.Request(); len(req) != 1 {
		t.Fatalf("request %+v", req)
	}
}

func TestRequestAnswersSkippedCalls(t *testing.T) {
	// A call an interrupt skipped has its "not run" result: the model
	// must see that it never ran, and the request stays valid.
	tr := applyAll(t, []Change{
		{Op: ItemDone, Item: Item{ID: "u", Kind: User, Text: "go"}},
		{Op: ItemStarted, Item: Item{ID: "a", Kind: Tool, Answer: "x", Call: Call{Name: "Bash", Args: "{}"}}},
		{Op: ItemDone, Item: Item{ID: "a", Kind: Tool, Answer: "x", Call: Call{Name: "Bash", Args: "{}", Result: "Not run", Skipped: true}}},
		{Op: RunEnded, Status: Interrupted, Code: "interrupted"},
		{Op: ItemDone, Item: Item{ID: "u2", Kind: User, Text: "again"}},
	})
	req := tr.Request()
	if len(req) != 4 || req[2].Content != "Not run" || req[3].Content != "again" {
		t.Fatalf("request %+v", req)
	}
}

func TestRequestSplitsAnswers(t *testing.T) {
	// Two answers in a row (a partial one kept after a failed stream,
	// then the next turn's) stay two assistant messages.
	tr := applyAll(t, []Change{
		{Op: ItemDone, Item: Item{ID: "u", Kind: User, Text: "go"}},
		{Op: ItemDone, Item: Item{ID: "t1", Kind: Text, Answer: "a1", Text: "part"}},
		{Op: ItemDone, Item: Item{ID: "t2", Kind: Text, Answer: "a2", Text: "whole"}},
		{Op: ItemDone, Item: Item{ID: "t3", Kind: Reasoning, Answer: "a2", Text: "then"}},
		{Op: ItemDone, Item: Item{ID: "t4", Kind: Text, Answer: "a2", Text: " more"}},
	})
	req := tr.Request()
	if len(req) != 3 || req[1].Content != "part" || req[2].Content != "whole more" || req[2].Reasoning != "then" {
		t.Fatalf("request %+v", req)
	}
}

func TestRequestKeepsOnlyTheLatestImages(t *testing.T) {
	var cs []Change
	img := []llm.Image{{MIME: "image/png", Data: []byte("x")}}
	for i := range 5 {
		id := string(rune('a' + i))
		cs = append(cs, Change{Op: ItemDone, Item: Item{ID: id, Kind: Tool, Answer: id, Call: Call{Name: "BrowserScreenshot", Result: "shot", OK: true, Images: img}}})
	}
	tr := applyAll(t, cs)
	var with []string
	for _, m := range tr.Request() {
		if len(m.Images) > 0 {
			with = append(with, m.ToolCallID)
		}
	}
	if !reflect.DeepEqual(with, []string{"c", "d", "e"}) {
		t.Fatalf("images kept on %v", with)
	}
	if it, _ := tr.Item("a"); len(it.Call.Images) == 0 {
		t.Fatal("building a request dropped the transcript's own images")
	}
}

func TestNamesReadAsWords(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{User.String(), "user"}, {Notice.String(), "notice"}, {Kind(42).String(), "kind(42)"},
		{Failed.String(), "failed"}, {Finished.String(), "finished"}, {Interrupted.String(), "interrupted"},
		{ItemDone.String(), "item done"}, {Op(0).String(), "op(0)"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

func TestSettledLeavesOutStreamingSegments(t *testing.T) {
	tr := applyAll(t, []Change{
		{Op: ItemDone, Item: Item{ID: "u", Kind: User, Text: "go"}},
		{Op: ItemDone, Item: Item{ID: "r", Kind: Reasoning, Answer: "a", Text: "thought"}},
		{Op: ItemStarted, Item: Item{ID: "t", Kind: Text, Answer: "a", Text: "half an ans"}},
	})
	s := tr.Settled()
	if len(s.Items) != 2 || s.Items[1].ID != "r" || len(tr.Items) != 3 {
		t.Fatalf("settled %+v", s.Items)
	}
	tr = applyAll(t, []Change{{Op: ItemStarted, Item: Item{ID: "c", Kind: Tool, Answer: "a", Call: Call{Name: "Bash"}}}})
	if s := tr.Settled(); len(s.Items) != 1 {
		t.Fatalf("an open call was left out: %+v", s.Items)
	}
}
