package agui

import (
	"context"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/infer-workspace/infer/session/agent"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/demo"
	"github.com/infer-workspace/infer/session/transcript"
)

// run plays one agent turn on p and returns what the encoder made of it.
func run(t *testing.T, ctx context.Context, p llm.Provider, prompt string, exec func(context.Context, llm.ToolCall) agent.ToolResult) []Event {
	t.Helper()
	var enc Encoder
	var out []Event
	tr := transcript.Transcript{Items: []transcript.Item{{ID: "u", Kind: transcript.User, Text: prompt, Done: true}}}
	if exec == nil {
		exec = func(context.Context, llm.ToolCall) agent.ToolResult { return agent.ToolResult{Content: "ok", OK: true} }
	}
	agent.Run(ctx, agent.Config{Provider: p, Request: llm.Request{Tools: []llm.Tool{{Name: "Bash"}, {Name: "BrowserNavigate"}}}, Conversation: "conv"}, tr, agent.Hooks{
		Report:     func(c transcript.Change) { out = append(out, enc.Encode(c)...) },
		Record:     func(llm.Message) error { return nil },
		RecordTool: func(llm.Message, bool) error { return nil },
		Exec:       exec,
	})
	return out
}

func eventTypes(evs []Event) string {
	var out []string
	for _, e := range evs {
		out = append(out, string(e.Type()))
	}
	return strings.Join(out, " ")
}

// assertOpentaskShape checks the rules opentask 1.12.1 needs: one run
// start first, one terminal event last, every event valid, at most one
// message open at a time, and every content for the open one.
func assertOpentaskShape(t *testing.T, evs []Event) {
	t.Helper()
	ty := eventTypes(evs)
	if !strings.HasPrefix(ty, "RUN_STARTED ") || strings.Count(ty, "RUN_STARTED") != 1 {
		t.Fatalf("run start: %s", ty)
	}
	if strings.Count(ty, "RUN_FINISHED")+strings.Count(ty, "RUN_ERROR") != 1 ||
		!(strings.HasSuffix(ty, "RUN_FINISHED") || strings.HasSuffix(ty, "RUN_ERROR")) {
		t.Fatalf("terminal event: %s", ty)
	}
	open := ""
	for _, e := range evs {
		if err := e.Validate(); err != nil {
			t.Errorf("%s: %v", e.Type(), err)
		}
		switch ev := e.Event.(type) {
		case *events.TextMessageStartEvent:
			if open != "" {
				t.Fatalf("text %s started while %s is open: %s", ev.MessageID, open, ty)
			}
			open = ev.MessageID
		case *events.ReasoningMessageStartEvent:
			if open != "" {
				t.Fatalf("reasoning started while %s is open: %s", open, ty)
			}
			open = ev.MessageID
		case *events.TextMessageContentEvent:
			if ev.MessageID != open {
				t.Fatalf("content for %s while %s is open", ev.MessageID, open)
			}
		case *events.ReasoningMessageContentEvent:
			if ev.MessageID != open {
				t.Fatalf("reasoning for %s while %s is open", ev.MessageID, open)
			}
		case *events.TextMessageEndEvent, *events.ReasoningMessageEndEvent:
			open = ""
		case *events.ToolCallStartEvent, *events.RunFinishedEvent, *events.RunErrorEvent:
			if open != "" {
				t.Fatalf("%s while %s is open", e.Type(), open)
			}
		}
	}
}

func TestEveryTextSegmentGetsItsOwnStart(t *testing.T) {
	evs := run(t, context.Background(), stepFunc(func(ctx context.Context, emit func(llm.Delta)) (llm.Completion, error) {
		emit(llm.Delta{Kind: llm.ReasoningDelta, Text: "hmm "})
		emit(llm.Delta{Kind: llm.TextDelta, Text: "one "})
		emit(llm.Delta{Kind: llm.ReasoningDelta, Text: "more "})
		emit(llm.Delta{Kind: llm.TextDelta, Text: "two"})
		return llm.Completion{Text: "one two", Reasoning: "hmm more "}, nil
	}), "hi", nil)
	assertOpentaskShape(t, evs)
	want := "RUN_STARTED REASONING_START REASONING_MESSAGE_START REASONING_MESSAGE_CONTENT REASONING_MESSAGE_END REASONING_END " +
		"TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END " +
		"REASONING_START REASONING_MESSAGE_START REASONING_MESSAGE_CONTENT REASONING_MESSAGE_END REASONING_END " +
		"TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END RUN_FINISHED"
	if got := eventTypes(evs); got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
	if rs := evs[0].Event.(*events.RunStartedEvent); rs.ThreadID() != "conv" || rs.RunID() == "" {
		t.Fatalf("run started %+v", rs)
	}
}

func TestToolCallsHangOffTheirTextAndTheSummaryOpensAMessage(t *testing.T) {
	m := demo.Model{}
	evs := run(t, context.Background(), &m, "open example.com; tabs", nil)
	assertOpentaskShape(t, evs)
	var text string
	starts := 0
	for _, e := range evs {
		switch ev := e.Event.(type) {
		case *events.TextMessageStartEvent:
			if text == "" {
				text = ev.MessageID
			}
		case *events.ToolCallStartEvent:
			starts++
			if ev.ParentMessageID == nil || *ev.ParentMessageID != text {
				t.Fatalf("call %s hangs off %v, want %s", ev.ToolCallID, ev.ParentMessageID, text)
			}
		}
	}
	ty := eventTypes(evs)
	if starts != 2 || !strings.Contains(ty, "TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END TOOL_CALL_RESULT") ||
		!strings.Contains(ty, "TOOL_CALL_RESULT TEXT_MESSAGE_START") {
		t.Fatalf("events %s", ty)
	}
}

func TestAnInterruptedRunClosesWithANoticeBeforeItsError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	evs := run(t, ctx, stepFunc(func(ctx context.Context, emit func(llm.Delta)) (llm.Completion, error) {
		emit(llm.Delta{Kind: llm.TextDelta, Text: "partial "})
		cancel()
		return llm.Completion{Text: "partial "}, ctx.Err()
	}), "hi", nil)
	assertOpentaskShape(t, evs)
	n := len(evs)
	last := evs[n-1].Event.(*events.RunErrorEvent)
	if last.Code == nil || *last.Code != "interrupted" || last.RunID() == "" {
		t.Fatalf("terminal %+v", last)
	}
	notice := evs[n-4 : n-1]
	if eventTypes(notice) != "TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END" || !notice[0].Notice || !notice[2].Notice ||
		notice[1].Event.(*events.TextMessageContentEvent).Delta != InterruptedNotice {
		t.Fatalf("closing notice %s %+v", eventTypes(notice), notice)
	}
	for _, e := range evs[:n-4] {
		if e.Notice {
			t.Fatalf("a conversation event marked as a notice: %s", e.Type())
		}
	}
}

func TestAFailedRunSaysWhyBeforeItsError(t *testing.T) {
	m := demo.Model{}
	evs := run(t, context.Background(), &m, "fail", nil)
	assertOpentaskShape(t, evs)
	n := len(evs)
	last := evs[n-1].Event.(*events.RunErrorEvent)
	if *last.Code != "stream_error" {
		t.Fatalf("code %v", *last.Code)
	}
	if c := evs[n-3].Event.(*events.TextMessageContentEvent); !evs[n-3].Notice || c.Delta != "⚠ "+last.Message {
		t.Fatalf("notice %q for %q", c.Delta, last.Message)
	}
	// A failure without a code (saving a shell call) has none.
	var enc Encoder
	out := enc.Encode(transcript.Change{Op: transcript.RunEnded, Run: "r", Status: transcript.Failed, Err: "disk full"})
	if e := out[len(out)-1].Event.(*events.RunErrorEvent); e.Code != nil || e.Message != "disk full" {
		t.Fatalf("error %+v", e)
	}
}

func TestACallSkippedByAnInterruptHangsOffNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := demo.Model{}
	evs := run(t, ctx, &m, "run sleep 100; tabs; screenshot", func(context.Context, llm.ToolCall) agent.ToolResult {
		cancel()
		return agent.ToolResult{Content: "killed"}
	})
	assertOpentaskShape(t, evs)
	var withParent, bare, args int
	for _, e := range evs {
		switch ev := e.Event.(type) {
		case *events.ToolCallStartEvent:
			if ev.ParentMessageID != nil {
				withParent++
			} else {
				bare++
			}
		case *events.ToolCallArgsEvent:
			args++
		}
	}
	if withParent != 1 || bare != 2 || args != 1 {
		t.Fatalf("%d announced, %d skipped, %d with arguments: %s", withParent, bare, args, eventTypes(evs))
	}
}

func TestTheCutNoteEndsTheStreamedMessage(t *testing.T) {
	var enc Encoder
	var evs []Event
	for _, c := range []transcript.Change{
		{Op: transcript.ItemStarted, Run: "r", Item: transcript.Item{ID: "t", Kind: transcript.Text, Answer: "a"}},
		{Op: transcript.DeltaAppended, Run: "r", Item: transcript.Item{ID: "t"}, Delta: "long"},
		{Op: transcript.ItemDone, Run: "r", Item: transcript.Item{ID: "t", Kind: transcript.Text, Answer: "a", Text: "long\n\n[cut]"}},
	} {
		evs = append(evs, enc.Encode(c)...)
	}
	if eventTypes(evs) != "TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END" ||
		evs[2].Event.(*events.TextMessageContentEvent).Delta != "\n\n[cut]" {
		t.Fatalf("events %s", eventTypes(evs))
	}
}

func TestNoticesReachTheRunOnlyDuringIt(t *testing.T) {
	var enc Encoder
	notice := transcript.Item{ID: "n", Kind: transcript.Notice, Text: "moved", Level: transcript.Warn}
	if out := enc.Encode(transcript.Change{Op: transcript.ItemDone, Item: notice}); len(out) != 0 {
		t.Fatalf("a notice outside any run: %s", eventTypes(out))
	}
	out := enc.Encode(transcript.Change{Op: transcript.ItemDone, Run: "r", Item: notice})
	if eventTypes(out) != "TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END" || !out[1].Notice ||
		out[1].Event.(*events.TextMessageContentEvent).Delta != "⚠ moved" {
		t.Fatalf("notice in a run: %s", eventTypes(out))
	}
	user := transcript.Item{ID: "u", Kind: transcript.User, Text: "hi"}
	if out := enc.Encode(transcript.Change{Op: transcript.ItemDone, Item: user}); len(out) != 0 {
		t.Fatalf("the person's message: %s", eventTypes(out))
	}
}

func TestSnapshotIsTheDialogue(t *testing.T) {
	tr := transcript.Transcript{Items: []transcript.Item{
		{ID: "u", Kind: transcript.User, Text: "go", Done: true},
		{ID: "n", Kind: transcript.Notice, Text: "a notice", Done: true},
		{ID: "r", Kind: transcript.Reasoning, Answer: "a", Text: "think", Done: true},
		{ID: "t", Kind: transcript.Text, Answer: "a", Text: "calling", Done: true},
		{ID: "c1", Kind: transcript.Tool, Answer: "a", Done: true, Call: transcript.Call{Name: "Bash", Args: "{}", Result: "no", OK: false}},
		{ID: "c2", Kind: transcript.Tool, Answer: "a", Done: true, Call: transcript.Call{Name: "Read", Args: "{}", Result: "old", Unreported: true}},
	}}
	got := Snapshot("cv", tr)
	var line []string
	for _, m := range got {
		content, _ := m.ContentString()
		line = append(line, m.ID+":"+string(m.Role)+":"+content+":"+m.Error)
	}
	want := "cv-0:user:go: cv-1-reasoning:reasoning:think: cv-1:assistant:calling: cv-2:tool:no:the tool call failed cv-3:tool:old:"
	if strings.Join(line, " ") != want {
		t.Fatalf("snapshot\n got %s\nwant %s", strings.Join(line, " "), want)
	}
	if c := got[2].ToolCalls; len(c) != 2 || c[0].Type != types.ToolCallTypeFunction || c[1].Function.Name != "Read" {
		t.Fatalf("calls %+v", c)
	}
	if err := events.NewMessagesSnapshotEvent(got).Validate(); err != nil {
		t.Fatal(err)
	}
}

// stepFunc is a provider of one scripted answer.
type stepFunc func(ctx context.Context, emit func(llm.Delta)) (llm.Completion, error)

func (f stepFunc) Stream(ctx context.Context, req llm.Request, emit func(llm.Delta)) (llm.Completion, error) {
	return f(ctx, emit)
}

func TestAConnectionArrivingMidMessageGetsItsStart(t *testing.T) {
	p := NewPanel("")
	first, second := new(int), new(int)
	start := events.NewTextMessageStartEvent("m", events.WithRole("assistant"))
	content := events.NewTextMessageContentEvent("m", "more")
	if got := p.Events(first, "", start); len(got) != 1 {
		t.Fatalf("start: %v", got)
	}
	if got := p.Events(first, "", content); len(got) != 1 {
		t.Fatalf("the connection that saw the start got %d events", len(got))
	}
	got := p.Events(second, "", content)
	if len(got) != 2 || got[0].Type() != events.EventTypeTextMessageStart || got[1] != events.Event(content) {
		t.Fatalf("a new connection mid-message got %v", got)
	}
	if got := p.Events(second, "", content); len(got) != 1 {
		t.Fatalf("the start was sent twice: %v", got)
	}
}

func TestSayIsAWholeRun(t *testing.T) {
	evs := Say("conv", "run", "msg", "a line")
	var wrapped []Event
	for _, e := range evs {
		wrapped = append(wrapped, Event{Event: e})
	}
	assertOpentaskShape(t, wrapped)
}
