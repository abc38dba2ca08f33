// Package agent runs one agent turn: it calls the model, streams what the
// model says as AG-UI events, runs the tool calls the model asks for, feeds
// their results back, and repeats until the model answers without tools.
//
// The loop knows nothing about storage, approvals or front ends: it reports
// through five hooks (Emit and Notice for events, Record and RecordTool for
// saving, Exec for running a tool), so the workspace decides where events
// go, how messages are saved and how a tool call is permitted.
//
// Events are shaped for the strictest consumer we know, opentask 1.12.1's
// side panel: every text segment gets its own TEXT_MESSAGE_START (also after
// reasoning or a tool call), two messages never interleave, and a run that
// ends by interrupt or error closes with a short visible notice before its
// terminal event, because that panel leaves its "Working…" state only on
// TEXT_MESSAGE_END.
package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/google/uuid"

	"github.com/infer-workspace/infer/session/llm"
)

// Status says how a turn ended.
type Status int

// Turn outcomes.
const (
	Finished Status = iota
	Interrupted
	Failed
)

func (s Status) String() string {
	switch s {
	case Interrupted:
		return "interrupted"
	case Failed:
		return "failed"
	default:
		return "finished"
	}
}

// ToolResult is what running one tool call produced, as the model reads it.
type ToolResult struct {
	Content string
	OK      bool
	Images  []llm.Image
}

// Hooks connect the loop to the workspace. All are called on the goroutine
// that called Run.
type Hooks struct {
	// Emit receives every AG-UI event of the turn, in order.
	Emit func(events.Event)
	// Notice, when set, receives instead of Emit the events of the short
	// text message that closes an interrupted or failed run (for panels
	// that leave their working state only on TEXT_MESSAGE_END), so that
	// the workspace can mark them as no part of the conversation.
	Notice func(events.Event)
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
	// are ignored (the loop sends the history it is given plus what the
	// turn adds).
	Request llm.Request
	// MaxSteps bounds model calls in the turn (default 50).
	MaxSteps int
	// MaxAnswerBytes bounds the text and reasoning of one model answer
	// (default DefaultMaxAnswerBytes).
	MaxAnswerBytes int
	// ThreadID and RunID identify the run in RUN_* events.
	ThreadID, RunID string
}

// Outcome is how a turn ended.
type Outcome struct {
	Status Status
	Err    error // the provider or recording error for Failed
	// Added are the messages the turn appended to the history.
	Added []llm.Message
	Usage llm.Usage
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

// InterruptedNotice and the error prefix are the visible notices that close
// a turn that did not finish normally.
const InterruptedNotice = "⏹ Interrupted."

// Run executes one turn on top of history (which must end with the user's
// message) and returns how it ended. Exactly one RUN_STARTED and one
// terminal event (RUN_FINISHED or RUN_ERROR) are emitted.
func Run(ctx context.Context, cfg Config, history []llm.Message, h Hooks) Outcome {
	t := &turn{cfg: cfg, hooks: h, history: append([]llm.Message(nil), history...)}
	if t.cfg.MaxSteps <= 0 {
		t.cfg.MaxSteps = 50
	}
	if t.cfg.MaxAnswerBytes <= 0 {
		t.cfg.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	if t.cfg.ThreadID == "" {
		t.cfg.ThreadID = uuid.NewString()
	}
	if t.cfg.RunID == "" {
		t.cfg.RunID = uuid.NewString()
	}
	h.Emit(events.NewRunStartedEvent(t.cfg.ThreadID, t.cfg.RunID))
	out := t.loop(ctx)
	out.Added = t.added
	out.Usage = t.usage
	switch out.Status {
	case Finished:
		h.Emit(events.NewRunFinishedEvent(t.cfg.ThreadID, t.cfg.RunID))
	case Interrupted:
		t.notice(InterruptedNotice)
		h.Emit(events.NewRunErrorEvent("interrupted", events.WithErrorCode("interrupted"), events.WithRunID(t.cfg.RunID)))
	case Failed:
		t.notice("⚠ " + out.Err.Error())
		h.Emit(events.NewRunErrorEvent(out.Err.Error(), events.WithErrorCode(errorCode(out.Err)), events.WithRunID(t.cfg.RunID)))
	}
	return out
}

type turn struct {
	cfg     Config
	hooks   Hooks
	history []llm.Message
	added   []llm.Message
	usage   llm.Usage

	// The open text or reasoning message, if any; at most one is open.
	textID      string
	reasoningID string
}

func (t *turn) loop(ctx context.Context) Outcome {
	for step := 0; step < t.cfg.MaxSteps; step++ {
		if ctx.Err() != nil {
			return Outcome{Status: Interrupted}
		}
		req := t.cfg.Request
		req.Messages = t.history
		var segmentID string // the text message the tool calls hang off
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
			switch d.Kind {
			case llm.TextDelta:
				t.openText()
				segmentID = t.textID
				t.hooks.Emit(events.NewTextMessageContentEvent(t.textID, text))
			case llm.ReasoningDelta:
				t.openReasoning()
				t.hooks.Emit(events.NewReasoningMessageContentEvent(t.reasoningID, text))
			}
		})
		cancel(nil)
		t.closeOpen()
		t.usage = t.usage.Add(comp.Usage)

		if kept.cut && ctx.Err() == nil {
			// Tool calls of a cut answer are dropped: the model said too
			// much to trust that their arguments are whole.
			note := fmt.Sprintf(CutNote, byteSize(t.cfg.MaxAnswerBytes))
			content := kept.text.String()
			if content != "" {
				content += "\n\n"
			}
			if rerr := t.record(llm.Message{Role: llm.RoleAssistant, Content: content + note, Reasoning: kept.reasoning.String()}); rerr != nil {
				return Outcome{Status: Failed, Err: rerr}
			}
			t.notice("⚠ " + note)
			return Outcome{Status: Finished}
		}

		if err != nil {
			// Keep what arrived: the person saw it stream, so it is part of
			// the conversation. Partial tool calls are dropped because a
			// call without complete arguments can never be answered.
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
		if err := t.record(llm.Message{Role: llm.RoleAssistant, Content: comp.Text, Reasoning: comp.Reasoning, ToolCalls: calls, ProviderData: comp.ProviderData}); err != nil {
			return Outcome{Status: Failed, Err: err}
		}
		if len(calls) == 0 {
			return Outcome{Status: Finished}
		}
		if st, err := t.runTools(ctx, calls, segmentID); st != Finished {
			return Outcome{Status: st, Err: err}
		}
	}
	return Outcome{Status: Failed, Err: fmt.Errorf("stopped after %d model calls in one turn (agent.max_steps); send a message to continue", t.cfg.MaxSteps)}
}

// runTools announces and runs the calls one after another. Sequential runs
// keep approvals one at a time and the conversation order deterministic.
func (t *turn) runTools(ctx context.Context, calls []llm.ToolCall, parentID string) (Status, error) {
	for i, call := range calls {
		if parentID != "" {
			t.hooks.Emit(events.NewToolCallStartEvent(call.ID, call.Name, events.WithParentMessageID(parentID)))
		} else {
			t.hooks.Emit(events.NewToolCallStartEvent(call.ID, call.Name))
		}
		if call.Arguments != "" {
			t.hooks.Emit(events.NewToolCallArgsEvent(call.ID, call.Arguments))
		}
		t.hooks.Emit(events.NewToolCallEndEvent(call.ID))

		var res ToolResult
		if ctx.Err() != nil {
			res = ToolResult{Content: "Not run: the turn was interrupted before this call started."}
		} else {
			res = t.hooks.Exec(ctx, call)
		}
		content := res.Content
		if content == "" {
			content = "(no output)"
		}
		t.hooks.Emit(events.NewToolCallResultEvent(uuid.NewString(), call.ID, content))
		msg := llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Content: content, Images: res.Images}
		if err := t.recordTool(msg, res.OK); err != nil {
			return Failed, err
		}
		if ctx.Err() != nil {
			// Answer the remaining calls so the history stays valid for
			// the next model request (every call needs a tool message).
			for _, rest := range calls[i+1:] {
				t.hooks.Emit(events.NewToolCallStartEvent(rest.ID, rest.Name))
				t.hooks.Emit(events.NewToolCallEndEvent(rest.ID))
				skipped := "Not run: the turn was interrupted before this call started."
				t.hooks.Emit(events.NewToolCallResultEvent(uuid.NewString(), rest.ID, skipped))
				if err := t.recordTool(llm.Message{Role: llm.RoleTool, ToolCallID: rest.ID, Content: skipped}, false); err != nil {
					return Failed, err
				}
			}
			return Interrupted, nil
		}
	}
	return Finished, nil
}

func (t *turn) openText() {
	if t.textID != "" {
		return
	}
	t.closeOpen()
	t.textID = uuid.NewString()
	t.hooks.Emit(events.NewTextMessageStartEvent(t.textID, events.WithRole("assistant")))
}

func (t *turn) openReasoning() {
	if t.reasoningID != "" {
		return
	}
	t.closeOpen()
	t.reasoningID = uuid.NewString()
	t.hooks.Emit(events.NewReasoningStartEvent(t.reasoningID))
	t.hooks.Emit(events.NewReasoningMessageStartEvent(t.reasoningID, "assistant"))
}

func (t *turn) closeOpen() {
	if t.textID != "" {
		t.hooks.Emit(events.NewTextMessageEndEvent(t.textID))
		t.textID = ""
	}
	if t.reasoningID != "" {
		t.hooks.Emit(events.NewReasoningMessageEndEvent(t.reasoningID))
		t.hooks.Emit(events.NewReasoningEndEvent(t.reasoningID))
		t.reasoningID = ""
	}
}

// notice emits a short visible text message that is not part of the
// conversation (it is never recorded or sent to the model).
func (t *turn) notice(text string) {
	t.closeOpen()
	emit := t.hooks.Notice
	if emit == nil {
		emit = t.hooks.Emit
	}
	id := uuid.NewString()
	emit(events.NewTextMessageStartEvent(id, events.WithRole("assistant")))
	emit(events.NewTextMessageContentEvent(id, text))
	emit(events.NewTextMessageEndEvent(id))
}

func (t *turn) record(m llm.Message) error {
	if err := t.hooks.Record(m); err != nil {
		return fmt.Errorf("saving the conversation: %w", err)
	}
	t.history = append(t.history, m)
	t.added = append(t.added, m)
	return nil
}

func (t *turn) recordTool(m llm.Message, ok bool) error {
	m.Content = strings.ToValidUTF8(m.Content, "\uFFFD")
	if err := t.hooks.RecordTool(m, ok); err != nil {
		return fmt.Errorf("saving the conversation: %w", err)
	}
	t.history = append(t.history, m)
	t.added = append(t.added, m)
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
