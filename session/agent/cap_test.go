package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/transcript"
)

// endlessStep streams 1 MiB chunks of text until its context ends, up to
// limit chunks, and says how many it sent. It keeps what it sent, as the
// adapters do.
func endlessStep(limit int, sent *int) func(context.Context, func(llm.Delta)) (llm.Completion, error) {
	chunk := strings.Repeat("é", 1<<19) // 1 MiB, two bytes a character
	return func(ctx context.Context, emit func(llm.Delta)) (llm.Completion, error) {
		var c llm.Completion
		emit(llm.Delta{Kind: llm.ReasoningDelta, Text: "thinking"})
		c.Reasoning = "thinking"
		for *sent = 0; *sent < limit; *sent++ {
			if err := ctx.Err(); err != nil {
				return c, err
			}
			emit(llm.Delta{Kind: llm.TextDelta, Text: "x" + chunk})
			c.Text += "x" + chunk
		}
		c.ToolCalls = []llm.ToolCall{{ID: "c1", Name: "Bash", Arguments: `{"command":"true"}`}}
		return c, nil
	}
}

// TestStreamedAnswerIsCapped streams an answer without end: the agent stops
// reading past DefaultMaxAnswerBytes, stores the text it showed up to the cap
// with a note that it was cut, tells the person, and runs none of the cut
// answer's tool calls.
func TestStreamedAnswerIsCapped(t *testing.T) {
	sent := 0
	p := &scriptedProvider{steps: []func(context.Context, func(llm.Delta)) (llm.Completion, error){endlessStep(64, &sent)}}
	var r recorder
	out := Run(context.Background(), Config{Provider: p}, userHistory("hi"), r.hooks(noExec))
	if out.Status != Finished {
		t.Fatalf("status %v (%v)", out.Status, out.Err)
	}
	if sent > DefaultMaxAnswerBytes>>20+1 {
		t.Errorf("the stream was read on for %d MiB", sent)
	}
	if len(r.msgs) != 1 {
		t.Fatalf("stored %d messages", len(r.msgs))
	}
	m := r.msgs[0]
	size := len(m.Content) + len(m.Reasoning)
	if size > DefaultMaxAnswerBytes+200 || size < DefaultMaxAnswerBytes-4 {
		t.Errorf("stored %d bytes, want about %d", size, DefaultMaxAnswerBytes)
	}
	if !strings.HasSuffix(m.Content, "the answer was cut here: it passed 8 MiB, the most infer keeps of one answer]") || m.Reasoning != "thinking" {
		t.Errorf("stored answer ends %q (reasoning %q)", m.Content[len(m.Content)-120:], m.Reasoning)
	}
	if !strings.HasPrefix(m.Content, "xé") || len(m.ToolCalls) != 0 {
		t.Errorf("stored answer starts %q, %d tool calls", m.Content[:8], len(m.ToolCalls))
	}
	// What the person saw is what is stored: the streamed text, then
	// the note, in the answer's last text segment.
	shown := ""
	for _, it := range r.tr.Items {
		if it.Kind == transcript.Text {
			shown += it.Text
		}
	}
	if shown != m.Content {
		t.Errorf("shown %d bytes ending %q, stored %d", len(shown), shown[max(len(shown)-80, 0):], len(m.Content))
	}
	assertBracketed(t, &r)
	assertNoInterleaving(t, &r)
}

// TestAnswerUnderTheCapIsWhole checks that an answer just under the cap is
// kept as the provider gave it.
func TestAnswerUnderTheCapIsWhole(t *testing.T) {
	sent := 0
	p := &scriptedProvider{steps: []func(context.Context, func(llm.Delta)) (llm.Completion, error){
		func(ctx context.Context, emit func(llm.Delta)) (llm.Completion, error) {
			c, err := endlessStep(2, &sent)(ctx, emit)
			c.ToolCalls = nil
			return c, err
		},
	}}
	var r recorder
	out := Run(context.Background(), Config{Provider: p, MaxAnswerBytes: 2<<20 + 2 + len("thinking")}, userHistory("hi"), r.hooks(noExec))
	if out.Status != Finished || len(r.msgs) != 1 || len(r.msgs[0].Content) != 2<<20+2 || strings.Contains(r.msgs[0].Content, "cut here") {
		t.Fatalf("status %v, %d messages", out.Status, len(r.msgs))
	}
}
