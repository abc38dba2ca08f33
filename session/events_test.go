package session

import (
	"context"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/infer-workspace/infer/bridge/agui"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/tools"
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

// TestToolFinishedFollowsEveryResultSkippedIncluded: an interrupt while
// the first call waits for approval answers it and skips the second; each
// gets one ToolFinished, after its result, the skipped one marked so.
func TestToolFinishedFollowsEveryResultSkippedIncluded(t *testing.T) {
	f := newFixture(t, "", func(o *Options) { o.Catalog = oneCatalog{&twoCalls{}} })
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("go", tools.OriginTerminal)
	collect(t, sub, opened)
	f.w.Interrupt()
	evs := collect(t, sub, idle)
	results := map[string]int{}
	finished := map[string]ToolFinished{}
	for i, e := range evs {
		switch e := e.(type) {
		case Chat:
			if r, ok := e.Event.(*events.ToolCallResultEvent); ok {
				results[r.ToolCallID] = i
			}
		case ToolFinished:
			if _, twice := finished[e.CallID]; twice {
				t.Fatalf("two ToolFinished for %s", e.CallID)
			}
			ri, ok := results[e.CallID]
			if !ok || ri > i {
				t.Fatalf("ToolFinished for %s before its result", e.CallID)
			}
			finished[e.CallID] = e
		}
	}
	c1, c2 := finished["c1"], finished["c2"]
	if c1.CallID == "" || c1.OK || c1.Skipped || c1.Name != "Bash" {
		t.Fatalf("interrupted call %+v", c1)
	}
	if c2.CallID == "" || c2.OK || !c2.Skipped || c2.Name != "Read" {
		t.Fatalf("skipped call %+v", c2)
	}
}

// TestShellOutcomeFollowsItsResult: a !command's outcome comes after its
// result too, with how long it ran.
func TestShellOutcomeFollowsItsResult(t *testing.T) {
	f := newFixture(t, "")
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("!pwd", tools.OriginTerminal)
	evs := collect(t, sub, idle)
	sawResult := false
	for _, e := range evs {
		switch e := e.(type) {
		case Chat:
			_, ok := e.Event.(*events.ToolCallResultEvent)
			sawResult = sawResult || ok
		case ToolFinished:
			if !sawResult || !e.OK || e.Skipped || e.Name != "Bash" || e.Duration <= 0 {
				t.Fatalf("outcome %+v (result seen: %v)", e, sawResult)
			}
			return
		}
	}
	t.Fatal("no ToolFinished")
}

// TestInterruptNoticeIsMarked: the agent's closing "Interrupted" text is
// published as a notice for panels, so that no front end has to
// recognise it by its text.
func TestInterruptNoticeIsMarked(t *testing.T) {
	f := newFixture(t, "")
	f.model.Delay = 1
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("stream 100000", tools.OriginTerminal)
	collect(t, sub, func(e Event) bool { _, ok := chat(e).(*events.TextMessageContentEvent); return ok })
	f.w.Interrupt()
	var notice, other strings.Builder
	for _, e := range collect(t, sub, idle) {
		c, ok := e.(Chat)
		if !ok {
			continue
		}
		if tc, ok := c.Event.(*events.TextMessageContentEvent); ok {
			if c.Notice {
				notice.WriteString(tc.Delta)
			} else {
				other.WriteString(tc.Delta)
			}
		}
	}
	if notice.String() != agui.InterruptedNotice || strings.Contains(other.String(), agui.InterruptedNotice) {
		t.Fatalf("notice %q, conversation text %q", notice.String(), other.String())
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
	evs := collect(t, sub, func(e Event) bool { _, ok := e.(UserMessage); return ok })
	id := evs[len(evs)-1].(UserMessage).Conversation
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
