package session

import (
	"context"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
)

// twoCalls answers the first request with two tool calls, the first of
// which (a write) asks for approval in standard mode, and every later one
// with text.
type twoCalls struct{ calls int }

func (p *twoCalls) Stream(ctx context.Context, req llm.Request, emit func(llm.Delta)) (llm.Completion, error) {
	p.calls++
	if p.calls > 1 {
		return llm.Completion{Text: "done"}, nil
	}
	return llm.Completion{ToolCalls: []llm.ToolCall{
		{ID: "c1", Name: "Bash", Arguments: `{"command":"touch a"}`},
		{ID: "c2", Name: "Read", Arguments: `{"path":"a"}`},
	}}, nil
}

// TestEveryCallEndsOnceSkippedIncluded: an interrupt while the first call
// waits for approval answers it and skips the second; each call's item is
// done once, with its result, the skipped one marked so.
func TestEveryCallEndsOnceSkippedIncluded(t *testing.T) {
	f := newFixture(t, "", func(o *Options) { o.Catalog = oneCatalog{&twoCalls{}} })
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("go", tools.OriginTerminal)
	collect(t, sub, opened)
	f.w.Interrupt()
	evs := collect(t, sub, idle)
	finished := map[string]transcript.Item{}
	for _, e := range evs {
		c, ok := change(e)
		if !ok || c.Op != transcript.ItemDone || c.Item.Kind != transcript.Tool {
			continue
		}
		if _, twice := finished[c.Item.ID]; twice {
			t.Fatalf("%s done twice", c.Item.ID)
		}
		if c.Item.Call.Result == "" {
			t.Fatalf("%s done without its result", c.Item.ID)
		}
		finished[c.Item.ID] = c.Item
	}
	c1, c2 := finished["c1"], finished["c2"]
	if c1.ID == "" || c1.Call.OK || c1.Call.Skipped || c1.Call.Name != "Bash" {
		t.Fatalf("interrupted call %+v", c1)
	}
	if c2.ID == "" || c2.Call.OK || !c2.Call.Skipped || c2.Call.Name != "Read" {
		t.Fatalf("skipped call %+v", c2)
	}
	if open := f.w.Snapshot().Transcript.OpenCalls(); len(open) != 0 {
		t.Fatalf("calls left open: %+v", open)
	}
}

// TestShellCallEndsWithHowItRan: a !command's call is done with its
// result and how long it ran.
func TestShellCallEndsWithHowItRan(t *testing.T) {
	f := newFixture(t, "")
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("!pwd", tools.OriginTerminal)
	for _, e := range collect(t, sub, idle) {
		if c, ok := change(e); ok && c.Op == transcript.ItemDone && c.Item.Kind == transcript.Tool {
			k := c.Item.Call
			if !k.OK || k.Skipped || k.Name != "Bash" || k.Duration <= 0 || k.Result == "" {
				t.Fatalf("shell call %+v", c.Item)
			}
			return
		}
	}
	t.Fatal("the shell call never ended")
}

// TestInterruptEndsTheRunWithoutText: an interrupted run says so by its
// end, never by a text in the conversation: a notice for the panel is the
// panel's encoder's to add.
func TestInterruptEndsTheRunWithoutText(t *testing.T) {
	f := newFixture(t, "")
	f.model.Delay = 1
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("stream 100000", tools.OriginTerminal)
	collect(t, sub, textDelta)
	f.w.Interrupt()
	var end *transcript.Change
	for _, e := range collect(t, sub, idle) {
		if c, ok := change(e); ok && c.Op == transcript.RunEnded {
			end = &c
		}
	}
	if end == nil || end.Status != transcript.Interrupted || end.Code != "interrupted" {
		t.Fatalf("end %+v", end)
	}
	for _, it := range f.w.Snapshot().Transcript.Items {
		if strings.Contains(it.Text, "Interrupted") {
			t.Fatalf("the interrupt became an item: %+v", it)
		}
	}
}

// TestSettingsChangedAnswersEveryRequest: each request to change a setting
// publishes the settings, a refused one included, naming what was asked.
func TestSettingsChangedAnswersEveryRequest(t *testing.T) {
	f := newFixture(t, "")
	sub := f.w.Subscribe()
	defer sub.Close()
	half := 0.5
	f.w.SetMode("plan", tools.OriginPanel)
	f.w.SetMode("yolo", tools.OriginPanel)
	_ = f.w.SelectModel("other/model")
	_ = f.w.SetEffort("high")
	_ = f.w.SetTemperature(&half)
	f.w.ModelsChanged()
	var got []SettingsChanged
	for _, e := range sub.Drain() {
		if s, ok := e.(SettingsChanged); ok {
			got = append(got, s)
		}
	}
	want := []Setting{SettingMode, SettingMode, SettingModel, SettingEffort, SettingTemperature, SettingModels}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i, s := range got {
		if s.Changed != want[i] {
			t.Fatalf("event %d changed %v, want %v", i, s.Changed, want[i])
		}
	}
	if got[1].Settings.Mode != tools.Plan || got[2].Settings.Model != f.w.Model() ||
		got[3].Settings.Effort != llm.EffortHigh || *got[4].Settings.Temperature != half {
		t.Fatalf("settings %+v", got)
	}
}

// TestResumeOfTheRunningConversationIsSame: resuming the conversation
// whose turn runs publishes its snapshot so far, marked Same, and does not
// stop the turn.
func TestResumeOfTheRunningConversationIsSame(t *testing.T) {
	f := newFixture(t, "")
	f.model.Delay = 1
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("stream 100000", tools.OriginTerminal)
	evs := collect(t, sub, func(e Event) bool { _, ok := userMessage(e); return ok })
	id, _ := userMessage(evs[len(evs)-1])
	if _, err := f.w.Resume(id); err != nil {
		t.Fatal(err)
	}
	evs = collect(t, sub, func(e Event) bool { _, ok := e.(ConversationChanged); return ok })
	if c := evs[len(evs)-1].(ConversationChanged); !c.Same || c.Snapshot.ID != id || !f.w.Busy() {
		t.Fatalf("resume mid-turn: %+v, busy %v", c, f.w.Busy())
	}
	f.w.Interrupt()
	collect(t, sub, idle)
}
