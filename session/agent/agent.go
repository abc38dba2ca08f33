// Package agent runs one agent turn: it calls the model, reports what the
// model says to the transcript as it streams, runs the tool calls the model
// asks for, feeds their results back, and repeats until the model answers
// without tools.
//
// The loop knows nothing about storage, approvals or front ends: it works
// through four hooks (Report for the transcript's changes, Record and
// RecordTool for saving, Exec for running a tool), so the workspace decides
// where changes go, how messages are saved and how a tool call is
// permitted. It speaks no client's protocol: encoders at the edges turn
// the changes into what their clients read.
package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/transcript"
)

// Status says how a turn ended.
type Status = transcript.Status

// Turn outcomes.
const (
	Finished    = transcript.Finished
	Interrupted = transcript.Interrupted
	Failed      = transcript.Failed
)

// ToolResult is what running one tool call produced: what the model reads,
// and how it ran, for the transcript.
type ToolResult struct {
	Content string
	OK      bool
	Images  []llm.Image
	// Duration is how long the tool ran, without any wait for approval.
	Duration time.Duration
	// Artifacts are files the call saved, relative to the artifacts dir.
	Artifacts []string
}

// Hooks connect the loop to the workspace. All are called on the goroutine
// that called Run.
type Hooks struct {
	// Report receives every change the turn makes to the transcript, in
	// order, each already applied to the turn's own copy.
	Report func(transcript.Change)
	// Record receives each completed assistant message as soon as it is
	// final, so the conversation is saved as the turn progresses. A Record
	// error ends the turn as Failed: losing messages silently would be
	// worse than stopping.
	Record func(llm.Message) error
	// RecordTool receives each tool message together with whether its call
	// succeeded, so both are saved in one step (one append, one fsync). An
	// error ends the turn as Failed, as for Record.
	RecordTool func(m llm.Message, ok bool) error
	// Exec runs one tool call, including any permission check and approval.
	// It must return promptly once ctx is cancelled.
	Exec func(ctx context.Context, call llm.ToolCall) ToolResult
}

// Config is one turn's fixed parameters.
type Config struct {
	Provider llm.Provider
	// Request carries model, system prompt, tools and options; its Messages
	// are ignored (the loop sends the transcript's request).
	Request llm.Request
	// MaxSteps bounds model calls in the turn (default 50).
	MaxSteps int
	// MaxAnswerBytes bounds the text and reasoning of one model answer
	// (default DefaultMaxAnswerBytes).
	MaxAnswerBytes int
	// Conversation and RunID name the turn in its changes; an empty RunID
	// gets a fresh one.
	Conversation, RunID string
}

// Outcome is how a turn ended.
type Outcome struct {
	Status Status
	Err    error // the provider or recording error for Failed
	Usage  llm.Usage
}

// DefaultMaxAnswerBytes is how much text (with reasoning) one streamed
// answer may carry. A model stuck in a loop, or a provider that is not
// what it claims, can stream without end; everything kept is stored and
// sent back with every later turn, so an answer past this is cut, and the
// stream is not read any further.
const DefaultMaxAnswerBytes = 8 << 20

// CutNote ends an answer that was cut at the cap, in the stored message
// (which the model reads again next turn) as in what the person sees.
const CutNote = "[… the answer was cut here: it passed %s, the most infer keeps of one answer]"

// errAnswerTooLong cancels a stream that passed the cap.
var errAnswerTooLong = errors.New("the answer passed the size cap")

// NotRun is the result of a call an interrupt kept from running.
const NotRun = "Not run: the turn was interrupted before this call started."

// Run executes one turn on top of tr (which must end with the user's
// message) and returns how it ended. Exactly one RunStarted and one
// RunEnded change are reported, first and last.
func Run(ctx context.Context, cfg Config, tr transcript.Transcript, h Hooks) Outcome {
	t := &turn{cfg: cfg, hooks: h, tr: tr.Clone()}
	if t.cfg.MaxSteps <= 0 {
		t.cfg.MaxSteps = 50
	}
	if t.cfg.MaxAnswerBytes <= 0 {
		t.cfg.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	if t.cfg.RunID == "" {
		t.cfg.RunID = uuid.NewString()
	}
	t.report(transcript.Change{Op: transcript.RunStarted})
	out := t.loop(ctx)
	out.Usage = t.usage
	end := transcript.Change{Op: transcript.RunEnded, Status: out.Status}
	switch out.Status {
	case Interrupted:
		end.Code = "interrupted"
	case Failed:
		end.Err, end.Code = out.Err.Error(), errorCode(out.Err)
	}
	t.report(end)
	return out
}

type turn struct {
	cfg   Config
	hooks Hooks
	// tr is the turn's own copy of the transcript, which the model's
	// requests are built from.
	tr    transcript.Transcript
	usage llm.Usage

	// answer names the model answer being streamed; the open text or
	// reasoning segment, if any, is open (at most one). Its text is tr's
	// item's, not open's.
	answer string
	open   *transcript.Item
}

// report applies c to the turn's transcript and hands it on.
func (t *turn) report(c transcript.Change) {
	c.Conversation, c.Run = t.cfg.Conversation, t.cfg.RunID
	if err := t.tr.Apply(c); err != nil {
		panic(err) // the loop's own changes always apply
	}
	t.hooks.Report(c)
}

func (t *turn) loop(ctx context.Context) Outcome {
	for step := 0; step < t.cfg.MaxSteps; step++ {
		if ctx.Err() != nil {
			return Outcome{Status: Interrupted}
		}
		req := t.cfg.Request
		req.Messages = t.tr.Request()
		t.answer = uuid.NewString()
		// kept is what was shown of this answer, bounded by the cap: what
		// is stored if the answer is cut, whatever the provider kept.
		var kept answer
		sctx, cancel := context.WithCancelCause(ctx)
		comp, err := t.cfg.Provider.Stream(sctx, req, func(d llm.Delta) {
			if d.Text == "" || (d.Kind != llm.TextDelta && d.Kind != llm.ReasoningDelta) || kept.cut {
				return
			}
			text := kept.add(d, t.cfg.MaxAnswerBytes)
			if kept.cut {
				cancel(errAnswerTooLong)
			}
			if text == "" {
				return
			}
			kind := transcript.Text
			if d.Kind == llm.ReasoningDelta {
				kind = transcript.Reasoning
			}
			t.stream(kind, text)
		})
		cancel(nil)
		t.usage = t.usage.Add(comp.Usage)

		if kept.cut && ctx.Err() == nil {
			// Tool calls of a cut answer are dropped: the model said too
			// much to trust that their arguments are whole. The note
			// ends the answer's text, as it is stored.
			note := fmt.Sprintf(CutNote, byteSize(t.cfg.MaxAnswerBytes))
			content := kept.text.String()
			if content != "" {
				content += "\n\n"
			}
			if t.open == nil || t.open.Kind != transcript.Text {
				t.stream(transcript.Text, "")
			}
			t.closeOpen(nil, content[kept.text.Len():]+note)
			if rerr := t.record(llm.Message{Role: llm.RoleAssistant, Content: content + note, Reasoning: kept.reasoning.String()}); rerr != nil {
				return Outcome{Status: Failed, Err: rerr}
			}
			return Outcome{Status: Finished}
		}

		if err != nil {
			// Keep what arrived: the person saw it stream, so it is part of
			// the conversation. Partial tool calls are dropped because a
			// call without complete arguments can never be answered.
			t.closeOpen(nil, "")
			if comp.Text != "" || comp.Reasoning != "" {
				if rerr := t.record(llm.Message{Role: llm.RoleAssistant, Content: comp.Text, Reasoning: comp.Reasoning}); rerr != nil {
					return Outcome{Status: Failed, Err: rerr}
				}
			}
			if ctx.Err() != nil || errors.Is(err, context.Canceled) {
				return Outcome{Status: Interrupted}
			}
			return Outcome{Status: Failed, Err: err}
		}

		calls := normaliseCalls(comp.ToolCalls)
		data := comp.ProviderData
		if t.open != nil {
			t.closeOpen(data, "")
			data = nil
		}
		if err := t.record(llm.Message{Role: llm.RoleAssistant, Content: comp.Text, Reasoning: comp.Reasoning, ToolCalls: calls, ProviderData: comp.ProviderData}); err != nil {
			return Outcome{Status: Failed, Err: err}
		}
		if len(calls) == 0 {
			return Outcome{Status: Finished}
		}
		if st, err := t.runTools(ctx, calls, data); st != Finished {
			return Outcome{Status: st, Err: err}
		}
	}
	return Outcome{Status: Failed, Err: fmt.Errorf("stopped after %d model calls in one turn (agent.max_steps); send a message to continue", t.cfg.MaxSteps)}
}

// stream adds text to the open segment of kind, opening a new one first
// if the open one is of the other kind: every segment is its own item.
func (t *turn) stream(kind transcript.Kind, text string) {
	if t.open != nil && t.open.Kind != kind {
		t.closeOpen(nil, "")
	}
	if t.open == nil {
		t.open = &transcript.Item{ID: uuid.NewString(), Kind: kind, Answer: t.answer}
		t.report(transcript.Change{Op: transcript.ItemStarted, Item: *t.open})
	}
	if text == "" {
		return
	}
	t.report(transcript.Change{Op: transcript.DeltaAppended, Item: transcript.Item{ID: t.open.ID}, Delta: text})
}

// closeOpen reports the open segment done, with the answer's provider data
// when it is its last, and tail added to its text. The text is the turn's
// transcript's, which the deltas grew: keeping a second copy here would
// cost the whole text again on every delta.
func (t *turn) closeOpen(data map[string]string, tail string) {
	if t.open == nil {
		return
	}
	it := *t.open
	if cur, ok := t.tr.Item(it.ID); ok {
		it.Text = cur.Text
	}
	it.Text += tail
	it.ProviderData = data
	t.open = nil
	t.report(transcript.Change{Op: transcript.ItemDone, Item: it})
}

// runTools announces and runs the calls one after another. Sequential runs
// keep approvals one at a time and the conversation order deterministic.
// data is the answer's provider data when no segment carried it.
func (t *turn) runTools(ctx context.Context, calls []llm.ToolCall, data map[string]string) (Status, error) {
	for i, call := range calls {
		item := transcript.Item{ID: call.ID, Kind: transcript.Tool, Answer: t.answer, Call: transcript.Call{Name: call.Name, Args: call.Arguments}}
		if i == 0 {
			item.ProviderData = data
		}
		t.report(transcript.Change{Op: transcript.ItemStarted, Item: item})

		var res ToolResult
		ran := ctx.Err() == nil
		if ran {
			res = t.hooks.Exec(ctx, call)
		} else {
			res = ToolResult{Content: NotRun}
		}
		if err := t.finish(item, res, !ran); err != nil {
			return Failed, err
		}
		if ctx.Err() != nil {
			// Answer the remaining calls so the transcript stays valid for
			// the next model request (every call needs a result).
			for _, rest := range calls[i+1:] {
				item := transcript.Item{ID: rest.ID, Kind: transcript.Tool, Answer: t.answer, Call: transcript.Call{Name: rest.Name, Args: rest.Arguments, Skipped: true}}
				t.report(transcript.Change{Op: transcript.ItemStarted, Item: item})
				if err := t.finish(item, ToolResult{Content: NotRun}, true); err != nil {
					return Failed, err
				}
			}
			return Interrupted, nil
		}
	}
	return Finished, nil
}

// finish saves a call's result and reports the call done, whether or not
// the save worked: the call ran either way.
func (t *turn) finish(item transcript.Item, res ToolResult, skipped bool) error {
	content := strings.ToValidUTF8(res.Content, "\uFFFD")
	if content == "" {
		content = "(no output)"
	}
	item.Call.Result, item.Call.OK, item.Call.Images = content, res.OK, res.Images
	item.Call.Duration, item.Call.Artifacts, item.Call.Skipped = res.Duration, res.Artifacts, skipped
	err := t.hooks.RecordTool(llm.Message{Role: llm.RoleTool, ToolCallID: item.ID, Content: content, Images: res.Images}, res.OK)
	t.report(transcript.Change{Op: transcript.ItemDone, Item: item})
	if err != nil {
		return fmt.Errorf("saving the conversation: %w", err)
	}
	return nil
}

func (t *turn) record(m llm.Message) error {
	if err := t.hooks.Record(m); err != nil {
		return fmt.Errorf("saving the conversation: %w", err)
	}
	return nil
}

// normaliseCalls gives every call an id (some local servers omit them) and
// a JSON object as arguments, so the history stays acceptable to strict
// providers on the next request.
func normaliseCalls(calls []llm.ToolCall) []llm.ToolCall {
	out := make([]llm.ToolCall, 0, len(calls))
	seen := map[string]bool{}
	for _, c := range calls {
		if c.ID == "" || seen[c.ID] {
			c.ID = "call_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:24]
		}
		seen[c.ID] = true
		if strings.TrimSpace(c.Arguments) == "" {
			c.Arguments = "{}"
		}
		out = append(out, c)
	}
	return out
}

// errorCode maps an error to a short RUN_ERROR code.
func errorCode(err error) string {
	codes := map[llm.ErrorKind]string{
		llm.ErrMissingKey:  "missing_key",
		llm.ErrAuth:        "auth",
		llm.ErrNotFound:    "not_found",
		llm.ErrRateLimited: "rate_limited",
		llm.ErrServer:      "server_error",
		llm.ErrBadRequest:  "bad_request",
		llm.ErrStream:      "stream_error",
		llm.ErrUnreachable: "unreachable",
	}
	if c, ok := codes[llm.KindOf(err)]; ok {
		return c
	}
	return "error"
}

// answer is what one streamed answer showed so far, up to the cap.
type answer struct {
	text, reasoning strings.Builder
	cut             bool
}

// add keeps d's text while the answer stays within limit bytes and returns
// what was kept of it, cut at a character boundary; once the cap is
// reached it sets cut.
func (a *answer) add(d llm.Delta, limit int) string {
	room := limit - a.text.Len() - a.reasoning.Len()
	text := d.Text
	if len(text) > room {
		a.cut = true
		text = text[:max(room, 0)]
		for len(text) > 0 && !utf8.RuneStart(d.Text[len(text)]) {
			text = text[:len(text)-1]
		}
	}
	if d.Kind == llm.TextDelta {
		a.text.WriteString(text)
	} else {
		a.reasoning.WriteString(text)
	}
	return text
}

// byteSize writes n bytes as people read it: 8 MiB, 512 KiB, 100 bytes.
func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
