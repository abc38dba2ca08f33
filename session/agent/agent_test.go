package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/demo"
	"github.com/infer-workspace/infer/session/transcript"
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
	changes []transcript.Change
	// tr is the transcript the reported changes build.
	tr      transcript.Transcript
	msgs    []llm.Message
	results map[string]bool
	failOn  int // fail the n-th Record call (1-based); 0 = never
}

func (r *recorder) hooks(exec func(ctx context.Context, c llm.ToolCall) ToolResult) Hooks {
	r.results = map[string]bool{}
	r.tr = userHistory("the person's message") // what Run starts from
	record := func(m llm.Message) error {
		if r.failOn > 0 && len(r.msgs)+1 == r.failOn {
			return errors.New("disk full")
		}
		r.msgs = append(r.msgs, m)
		return nil
	}
	return Hooks{
		Report: func(c transcript.Change) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.changes = append(r.changes, c)
			if err := r.tr.Apply(c); err != nil {
				panic(err)
			}
		},
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

// types names each change: its op, with the item's kind for item changes
// ("started text", "delta text", "done tool") and the status for the end.
func (r *recorder) types() []string {
	var out []string
	for _, c := range r.changes {
		switch c.Op {
		case transcript.RunStarted:
			out = append(out, "run")
		case transcript.RunEnded:
			out = append(out, "end "+c.Status.String())
		case transcript.ItemStarted:
			out = append(out, "started "+c.Item.Kind.String())
		case transcript.DeltaAppended:
			it, _ := r.tr.Item(c.Item.ID)
			out = append(out, "delta "+it.Kind.String())
		case transcript.ItemDone:
			out = append(out, "done "+c.Item.Kind.String())
		}
	}
	return out
}

func userHistory(text string) transcript.Transcript {
	return transcript.Transcript{Items: []transcript.Item{{ID: "u", Kind: transcript.User, Text: text, Done: true}}}
}

func noExec(ctx context.Context, c llm.ToolCall) ToolResult {
	panic("no tool expected")
}

// assertBracketed checks that the turn's changes open with its run and
// close with its end, and all name the turn's run.
func assertBracketed(t *testing.T, r *recorder) {
	t.Helper()
	ty := r.types()
	if len(ty) == 0 || ty[0] != "run" {
		t.Fatalf("first change = %v, want the run's start", ty)
	}
	ends := 0
	for _, x := range ty {
		if strings.HasPrefix(x, "end ") {
			ends++
		}
	}
	if ends != 1 || !strings.HasPrefix(ty[len(ty)-1], "end ") {
		t.Fatalf("want exactly one end, last, got %v", ty)
	}
	for _, c := range r.changes {
		if c.Run != r.changes[0].Run || c.Run == "" {
			t.Fatalf("change %v of run %q in run %q", c.Op, c.Run, r.changes[0].Run)
		}
	}
}

// assertNoInterleaving checks that at most one segment is open at any
// time, every delta belongs to the open one, and every segment is done
// before a tool call starts or the run ends.
func assertNoInterleaving(t *testing.T, r *recorder) {
	t.Helper()
	open := ""
	for _, c := range r.changes {
		switch {
		case c.Op == transcript.ItemStarted && c.Item.Kind != transcript.Tool:
			if open != "" {
				t.Fatalf("segment %s started while %s is open", c.Item.ID, open)
			}
			open = c.Item.ID
		case c.Op == transcript.DeltaAppended:
			if c.Item.ID != open {
				t.Fatalf("delta for %s while %s is open", c.Item.ID, open)
			}
		case c.Op == transcript.ItemDone && c.Item.Kind != transcript.Tool:
			if c.Item.ID != open {
				t.Fatalf("end of %s while %s is open", c.Item.ID, open)
			}
			open = ""
		case c.Op == transcript.ItemStarted, c.Op == transcript.RunEnded:
			if open != "" {
				t.Fatalf("%v while segment %s is open", c.Op, open)
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
	want := "run,started text,delta text,delta text,done text,end finished"
	if got := strings.Join(r.types(), ","); got != want {
		t.Fatalf("changes:\n got %s\nwant %s", got, want)
	}
	if it := r.tr.Items[1]; it.Text != "Hello there." || !it.Done {
		t.Fatalf("transcript %+v", r.tr.Items)
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
	var segs []string
	for _, it := range r.tr.Items[1:] {
		segs = append(segs, it.Kind.String()+":"+it.Text)
	}
	if got := strings.Join(segs, ","); got != "reasoning:hmm ,text:one ,reasoning:more thought ,text:two" {
		t.Fatalf("want an item per segment, got %s", got)
	}
	if a := r.tr.Items[1].Answer; a == "" || r.tr.Items[4].Answer != a {
		t.Fatal("the segments of one answer are not grouped")
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
	// Text after the tool calls is a segment of the next answer.
	ty := strings.Join(r.types(), ",")
	if !strings.Contains(ty, "done tool,started text") {
		t.Fatalf("summary did not open a new segment: %s", ty)
	}
	n := len(r.tr.Items)
	calls := r.tr.Items[n-3 : n-1]
	if calls[0].Call.Result != "Example Domain — https://example.com/" || !calls[0].Call.OK || calls[1].Call.OK || calls[0].Answer == r.tr.Items[n-1].Answer {
		t.Fatalf("calls %+v", r.tr.Items)
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
	if last := r.changes[len(r.changes)-1]; last.Code != "interrupted" {
		t.Fatalf("end %+v", last)
	}
	if it := r.tr.Items[1]; it.Text != "partial " || !it.Done {
		t.Fatalf("partial segment %+v", it)
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
	var skipped []bool
	for _, it := range r.tr.Items {
		if it.Kind == transcript.Tool {
			if !it.Done {
				t.Fatalf("call %s left open", it.ID)
			}
			skipped = append(skipped, it.Call.Skipped)
		}
	}
	if len(skipped) != 3 || skipped[0] || !skipped[1] || !skipped[2] {
		t.Fatalf("skipped %v", skipped)
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
	if last := r.changes[len(r.changes)-1]; last.Code != "stream_error" || last.Status != Failed || !strings.Contains(last.Err, "fail") {
		t.Fatalf("end %+v", last)
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

func TestEveryChangeApplies(t *testing.T) {
	m := demo.Model{}
	r := &recorder{}
	Run(context.Background(), Config{Provider: &m, Request: llm.Request{Tools: []llm.Tool{{Name: "Bash"}}}}, userHistory("think about it"), r.hooks(noExec))
	assertBracketed(t, r)
	r2 := &recorder{}
	Run(context.Background(), Config{Provider: &m, Request: llm.Request{Tools: []llm.Tool{{Name: "Bash"}}}}, userHistory("run true"), r2.hooks(func(ctx context.Context, c llm.ToolCall) ToolResult { return ToolResult{} }))
	assertBracketed(t, r2)
	assertNoInterleaving(t, r2)
	// The recorder applied every change; nothing is left open.
	for _, tr := range []transcript.Transcript{r.tr, r2.tr} {
		for _, it := range tr.Items {
			if !it.Done {
				t.Errorf("item %s (%v) left open", it.ID, it.Kind)
			}
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
	if got := r.tr.Request(); len(got) != 5 || got[2].Role != llm.RoleTool || got[3].Role != llm.RoleTool || got[4].Role != llm.RoleAssistant {
		t.Fatalf("the transcript holds %+v", got)
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
