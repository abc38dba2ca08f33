package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/demo"
)

// scriptedProvider plays back one scripted completion per call.
type scriptedProvider struct {
	steps []func(ctx context.Context, emit func(llm.Delta)) (llm.Completion, error)
	calls int
	reqs  []llm.Request
}

func (p *scriptedProvider) Stream(ctx context.Context, req llm.Request, emit func(llm.Delta)) (llm.Completion, error) {
	p.reqs = append(p.reqs, req)
	step := p.steps[p.calls]
	p.calls++
	return step(ctx, emit)
}

func textStep(words ...string) func(context.Context, func(llm.Delta)) (llm.Completion, error) {
	return func(ctx context.Context, emit func(llm.Delta)) (llm.Completion, error) {
		var c llm.Completion
		for _, w := range words {
			emit(llm.Delta{Kind: llm.TextDelta, Text: w})
			c.Text += w
		}
		return c, nil
	}
}

type recorder struct {
	mu      sync.Mutex
	events  []events.Event
	msgs    []llm.Message
	results map[string]bool
	failOn  int // fail the n-th Record call (1-based); 0 = never
}

func (r *recorder) hooks(exec func(ctx context.Context, c llm.ToolCall) ToolResult) Hooks {
	r.results = map[string]bool{}
	record := func(m llm.Message) error {
		if r.failOn > 0 && len(r.msgs)+1 == r.failOn {
			return errors.New("disk full")
		}
		r.msgs = append(r.msgs, m)
		return nil
	}
	return Hooks{
		Emit:   func(e events.Event) { r.mu.Lock(); r.events = append(r.events, e); r.mu.Unlock() },
		Record: record,
		RecordTool: func(m llm.Message, ok bool) error {
			if err := record(m); err != nil {
				return err
			}
			r.results[m.ToolCallID] = ok
			return nil
		},
		Exec: exec,
	}
}

func (r *recorder) types() []string {
	var out []string
	for _, e := range r.events {
		out = append(out, string(e.Type()))
	}
	return out
}

func userHistory(text string) []llm.Message {
	return []llm.Message{{Role: llm.RoleUser, Content: text}}
}

func noExec(ctx context.Context, c llm.ToolCall) ToolResult {
	panic("no tool expected")
}

func assertBracketed(t *testing.T, r *recorder) {
	t.Helper()
	ty := r.types()
	if len(ty) == 0 || ty[0] != "RUN_STARTED" {
		t.Fatalf("first event = %v, want RUN_STARTED", ty)
	}
	terminal := 0
	for _, x := range ty {
		if x == "RUN_FINISHED" || x == "RUN_ERROR" {
			terminal++
		}
	}
	last := ty[len(ty)-1]
	if terminal != 1 || (last != "RUN_FINISHED" && last != "RUN_ERROR") {
		t.Fatalf("want exactly one terminal event at the end, got %v", ty)
	}
}

// assertNoInterleaving checks that at most one text or reasoning message is
// open at any time and every content event belongs to the open one.
func assertNoInterleaving(t *testing.T, r *recorder) {
	t.Helper()
	open := ""
	for _, e := range r.events {
		switch ev := e.(type) {
		case *events.TextMessageStartEvent:
			if open != "" {
				t.Fatalf("text message %s started while %s is open", ev.MessageID, open)
			}
			open = ev.MessageID
		case *events.TextMessageContentEvent:
			if ev.MessageID != open {
				t.Fatalf("content for %s while %s is open", ev.MessageID, open)
			}
		case *events.TextMessageEndEvent:
			if ev.MessageID != open {
				t.Fatalf("end of %s while %s is open", ev.MessageID, open)
			}
			open = ""
		case *events.ReasoningMessageStartEvent:
			if open != "" {
				t.Fatalf("reasoning started while %s is open", open)
			}
			open = ev.MessageID
		case *events.ReasoningMessageContentEvent:
			if ev.MessageID != open {
				t.Fatalf("reasoning content for %s while %s is open", ev.MessageID, open)
			}
		case *events.ReasoningMessageEndEvent:
			open = ""
		case *events.ToolCallStartEvent, *events.RunFinishedEvent, *events.RunErrorEvent:
			if open != "" {
				t.Fatalf("%s while message %s is open", e.Type(), open)
			}
		}
	}
}

func TestTextStreamsInOneSegment(t *testing.T) {
	p := &scriptedProvider{steps: []func(context.Context, func(llm.Delta)) (llm.Completion, error){textStep("Hello ", "there.")}}
	r := &recorder{}
	out := Run(context.Background(), Config{Provider: p}, userHistory("hi"), r.hooks(noExec))
	if out.Status != Finished {
		t.Fatalf("status = %v (%v)", out.Status, out.Err)
	}
	want := "RUN_STARTED TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END RUN_FINISHED"
	if got := strings.Join(r.types(), " "); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	if len(r.msgs) != 1 || r.msgs[0].Content != "Hello there." || r.msgs[0].Role != llm.RoleAssistant {
		t.Fatalf("recorded %+v", r.msgs)
	}
}

func TestReasoningClosesBeforeTextAndTextAfterReasoningGetsNewStart(t *testing.T) {
	step := func(ctx context.Context, emit func(llm.Delta)) (llm.Completion, error) {
		emit(llm.Delta{Kind: llm.ReasoningDelta, Text: "hmm "})
		emit(llm.Delta{Kind: llm.TextDelta, Text: "one "})
		emit(llm.Delta{Kind: llm.ReasoningDelta, Text: "more thought "})
		emit(llm.Delta{Kind: llm.TextDelta, Text: "two"})
		return llm.Completion{Text: "one two", Reasoning: "hmm more thought "}, nil
	}
	p := &scriptedProvider{steps: []func(context.Context, func(llm.Delta)) (llm.Completion, error){step}}
	r := &recorder{}
	Run(context.Background(), Config{Provider: p}, userHistory("hi"), r.hooks(noExec))
	assertBracketed(t, r)
	assertNoInterleaving(t, r)
	starts := 0
	for _, ty := range r.types() {
		if ty == "TEXT_MESSAGE_START" {
			starts++
		}
	}
	if starts != 2 {
		t.Fatalf("want a fresh TEXT_MESSAGE_START per text segment (2), got %d: %v", starts, r.types())
	}
	if r.msgs[0].Reasoning != "hmm more thought " {
		t.Fatalf("reasoning not recorded: %+v", r.msgs[0])
	}
}

func TestToolCallsRunAndFeedBack(t *testing.T) {
	m := demo.Model{}
	r := &recorder{}
	var ran []string
	exec := func(ctx context.Context, c llm.ToolCall) ToolResult {
		ran = append(ran, c.Name+" "+c.Arguments)
		return ToolResult{Content: "Example Domain — https://example.com/", OK: c.Name == "BrowserNavigate"}
	}
	cfg := Config{Provider: &m, Request: llm.Request{Tools: []llm.Tool{{Name: "BrowserNavigate"}}}}
	out := Run(context.Background(), cfg, userHistory("open example.com; tabs"), r.hooks(exec))
	if out.Status != Finished {
		t.Fatalf("status %v %v", out.Status, out.Err)
	}
	if len(ran) != 2 || !strings.HasPrefix(ran[0], `BrowserNavigate {"url":"https://example.com"}`) || !strings.HasPrefix(ran[1], "BrowserTabs") {
		t.Fatalf("ran %q", ran)
	}
	assertBracketed(t, r)
	assertNoInterleaving(t, r)
	// assistant(tool_calls), tool, tool, assistant(summary)
	if len(r.msgs) != 4 || len(r.msgs[0].ToolCalls) != 2 || r.msgs[1].Role != llm.RoleTool || r.msgs[3].Role != llm.RoleAssistant {
		t.Fatalf("recorded %+v", r.msgs)
	}
	if !strings.Contains(r.msgs[3].Content, "BrowserNavigate: Example Domain") {
		t.Fatalf("summary %q", r.msgs[3].Content)
	}
	id0, id1 := r.msgs[0].ToolCalls[0].ID, r.msgs[0].ToolCalls[1].ID
	if !r.results[id0] || r.results[id1] {
		t.Fatalf("tool results %v", r.results)
	}
	// Text after the tool calls opens its own message.
	ty := strings.Join(r.types(), " ")
	if !strings.Contains(ty, "TOOL_CALL_RESULT TEXT_MESSAGE_START") {
		t.Fatalf("summary did not open a new text message: %s", ty)
	}
}

func TestInterruptMidStreamKeepsPartialText(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	step := func(ctx context.Context, emit func(llm.Delta)) (llm.Completion, error) {
		emit(llm.Delta{Kind: llm.TextDelta, Text: "partial "})
		cancel()
		return llm.Completion{Text: "partial "}, ctx.Err()
	}
	p := &scriptedProvider{steps: []func(context.Context, func(llm.Delta)) (llm.Completion, error){step}}
	r := &recorder{}
	out := Run(ctx, Config{Provider: p}, userHistory("hi"), r.hooks(noExec))
	if out.Status != Interrupted {
		t.Fatalf("status %v", out.Status)
	}
	assertBracketed(t, r)
	assertNoInterleaving(t, r)
	if len(r.msgs) != 1 || r.msgs[0].Content != "partial " {
		t.Fatalf("partial text not kept: %+v", r.msgs)
	}
	last := r.events[len(r.events)-1].(*events.RunErrorEvent)
	if last.Code == nil || *last.Code != "interrupted" {
		t.Fatalf("terminal %+v", last)
	}
	// The visible notice closes with TEXT_MESSAGE_END right before the end.
	if ty := r.types(); ty[len(ty)-2] != "TEXT_MESSAGE_END" {
		t.Fatalf("no closing notice: %v", ty)
	}
}

func TestInterruptDuringToolAnswersRemainingCalls(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := demo.Model{}
	exec := func(ctx context.Context, c llm.ToolCall) ToolResult {
		cancel()
		return ToolResult{Content: "killed", OK: false}
	}
	r := &recorder{}
	cfg := Config{Provider: &m, Request: llm.Request{Tools: []llm.Tool{{Name: "Bash"}}}}
	out := Run(ctx, cfg, userHistory("run sleep 100; tabs; screenshot"), r.hooks(exec))
	if out.Status != Interrupted {
		t.Fatalf("status %v", out.Status)
	}
	assertBracketed(t, r)
	tools := 0
	for _, m := range r.msgs {
		if m.Role == llm.RoleTool {
			tools++
		}
	}
	if tools != 3 {
		t.Fatalf("every call needs a tool message, got %d: %+v", tools, r.msgs)
	}
	if !strings.Contains(r.msgs[3].Content, "Not run") {
		t.Fatalf("skipped call content %q", r.msgs[3].Content)
	}
}

func TestProviderErrorEndsRunWithErrorAndKeepsPartial(t *testing.T) {
	m := demo.Model{}
	r := &recorder{}
	out := Run(context.Background(), Config{Provider: &m}, userHistory("fail"), r.hooks(noExec))
	if out.Status != Failed || llm.KindOf(out.Err) != llm.ErrStream {
		t.Fatalf("status %v err %v", out.Status, out.Err)
	}
	assertBracketed(t, r)
	assertNoInterleaving(t, r)
	if len(r.msgs) != 1 || !strings.Contains(r.msgs[0].Content, "fail halfway") {
		t.Fatalf("partial %+v", r.msgs)
	}
	last := r.events[len(r.events)-1].(*events.RunErrorEvent)
	if *last.Code != "stream_error" {
		t.Fatalf("code %v", *last.Code)
	}
}

func TestRecordFailureStopsTheTurn(t *testing.T) {
	p := &scriptedProvider{steps: []func(context.Context, func(llm.Delta)) (llm.Completion, error){textStep("a")}}
	r := &recorder{failOn: 1}
	out := Run(context.Background(), Config{Provider: p}, userHistory("hi"), r.hooks(noExec))
	if out.Status != Failed || !strings.Contains(out.Err.Error(), "disk full") {
		t.Fatalf("status %v err %v", out.Status, out.Err)
	}
	assertBracketed(t, r)
}

func TestMaxStepsBoundsTheLoop(t *testing.T) {
	loop := func(ctx context.Context, emit func(llm.Delta)) (llm.Completion, error) {
		return llm.Completion{ToolCalls: []llm.ToolCall{{ID: "", Name: "Bash", Arguments: ""}}}, nil
	}
	p := &scriptedProvider{steps: []func(context.Context, func(llm.Delta)) (llm.Completion, error){loop, loop, loop}}
	r := &recorder{}
	out := Run(context.Background(), Config{Provider: p, MaxSteps: 3}, userHistory("go"), r.hooks(func(ctx context.Context, c llm.ToolCall) ToolResult {
		if c.ID == "" || c.Arguments != "{}" {
			t.Errorf("call not normalised: %+v", c)
		}
		return ToolResult{OK: true}
	}))
	if out.Status != Failed || !strings.Contains(out.Err.Error(), "max_steps") {
		t.Fatalf("status %v err %v", out.Status, out.Err)
	}
	if p.calls != 3 {
		t.Fatalf("provider called %d times", p.calls)
	}
	assertBracketed(t, r)
}

func TestEveryEventValidates(t *testing.T) {
	m := demo.Model{}
	r := &recorder{}
	Run(context.Background(), Config{Provider: &m, Request: llm.Request{Tools: []llm.Tool{{Name: "Bash"}}}}, userHistory("think about it"), r.hooks(noExec))
	Run(context.Background(), Config{Provider: &m, Request: llm.Request{Tools: []llm.Tool{{Name: "Bash"}}}}, userHistory("run true"), r.hooks(func(ctx context.Context, c llm.ToolCall) ToolResult { return ToolResult{} }))
	for _, e := range r.events {
		if err := e.Validate(); err != nil {
			t.Errorf("%s: %v", e.Type(), err)
		}
	}
}

func TestRecordToolSavesEachToolMessageWithItsOutcome(t *testing.T) {
	type saved struct {
		msg llm.Message
		ok  bool
	}
	run := func(failTool bool) (Outcome, *recorder, []saved, []llm.Message) {
		m := demo.Model{}
		r := &recorder{}
		var tools []saved
		h := r.hooks(func(ctx context.Context, c llm.ToolCall) ToolResult {
			return ToolResult{Content: "bad \xff byte from " + c.Name, OK: c.Name == "BrowserNavigate"}
		})
		h.RecordTool = func(msg llm.Message, ok bool) error {
			if failTool {
				return errors.New("disk full")
			}
			tools = append(tools, saved{msg, ok})
			return nil
		}
		p := &recordingProvider{Provider: &m}
		cfg := Config{Provider: p, Request: llm.Request{Tools: []llm.Tool{{Name: "BrowserNavigate"}}}}
		out := Run(context.Background(), cfg, userHistory("open example.com; tabs"), h)
		return out, r, tools, p.last
	}

	out, r, tools, lastSent := run(false)
	if out.Status != Finished {
		t.Fatalf("status %v %v", out.Status, out.Err)
	}
	for _, m := range r.msgs {
		if m.Role == llm.RoleTool {
			t.Fatalf("a tool message went to Record: %+v", m)
		}
	}
	if len(tools) != 2 || !tools[0].ok || tools[1].ok || tools[0].msg.Role != llm.RoleTool ||
		tools[0].msg.ToolCallID != r.msgs[0].ToolCalls[0].ID || tools[1].msg.ToolCallID != r.msgs[0].ToolCalls[1].ID {
		t.Fatalf("RecordTool got %+v after %+v", tools, r.msgs)
	}
	if tools[0].msg.Content != "bad \uFFFD byte from BrowserNavigate" {
		t.Fatalf("content not made valid UTF-8: %q", tools[0].msg.Content)
	}
	// The tool messages are in the history the model gets next, and in
	// what the turn reports as added.
	if n := len(lastSent); n != 4 || lastSent[2].Content != tools[0].msg.Content || lastSent[3].ToolCallID != tools[1].msg.ToolCallID {
		t.Fatalf("next request's history %+v", lastSent)
	}
	if len(out.Added) != 4 || out.Added[1].Role != llm.RoleTool || out.Added[2].Role != llm.RoleTool {
		t.Fatalf("added %+v", out.Added)
	}

	out, r, _, _ = run(true)
	if out.Status != Failed || !strings.Contains(out.Err.Error(), "saving the conversation: disk full") {
		t.Fatalf("status %v err %v", out.Status, out.Err)
	}
	assertBracketed(t, r)
}

// recordingProvider remembers the history of the last request it passed on.
type recordingProvider struct {
	llm.Provider
	last []llm.Message
}

func (p *recordingProvider) Stream(ctx context.Context, req llm.Request, emit func(llm.Delta)) (llm.Completion, error) {
	p.last = append([]llm.Message(nil), req.Messages...)
	return p.Provider.Stream(ctx, req, emit)
}
