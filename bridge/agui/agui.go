// Package agui encodes the workspace's transcript as AG-UI events, the
// protocol the extension's side panel and `infer headless --output ag-ui`
// speak. It is the one place that knows how those clients want a run told:
//
//   - a run opens with RUN_STARTED and closes with exactly one RUN_FINISHED
//     or RUN_ERROR;
//   - every text segment is its own message with its own
//     TEXT_MESSAGE_START, also after reasoning or a tool call, and two
//     messages never interleave;
//   - a run that ends interrupted or failed closes with a short visible
//     notice before its RUN_ERROR, since opentask (1.12.1) leaves its
//     "Working…" state only on TEXT_MESSAGE_END; notices shown during a
//     run (a moved conversation) travel as text messages too;
//   - a conversation is sent whole as MESSAGES_SNAPSHOT (Snapshot);
//   - on the panel's connection, Panel adds the start of a message the
//     connection never saw begin (reopen), the closing text of a run that
//     ends on a tool result, and absolute artifact links; Say is a line
//     that is no part of a turn, as a run of its own.
//
// The domain (package session and below) never sees AG-UI: it reports
// transcript changes, and each client's connection runs its own Encoder.
package agui

import (
	"fmt"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"
	"github.com/google/uuid"

	"github.com/infer-workspace/infer/session/transcript"
)

// InterruptedNotice is the visible notice that closes an interrupted run.
const InterruptedNotice = "⏹ Interrupted."

// Event is one AG-UI event of a run.
type Event struct {
	events.Event
	// Notice marks the events of a text message that is a notice for the
	// panel (an interruption, a run error, a moved conversation), no part
	// of the conversation: front ends that show the fact from the
	// transcript may skip them.
	Notice bool
}

// Encoder turns one stream of transcript changes into AG-UI events. It
// keeps what it needs of the run between changes, so a connection (or
// headless run) needs its own. The zero value is ready; it is not safe
// for concurrent use.
type Encoder struct {
	// open holds the kind of each started, unfinished item, and sent how
	// much of each text or reasoning segment went out as deltas.
	open map[string]transcript.Kind
	sent map[string]int
	// parent is each answer's latest text segment, which the answer's tool
	// calls hang off.
	parent map[string]string
}

// Encode returns the events that tell c.
func (e *Encoder) Encode(c transcript.Change) []Event {
	if e.open == nil {
		e.open, e.sent, e.parent = map[string]transcript.Kind{}, map[string]int{}, map[string]string{}
	}
	switch c.Op {
	case transcript.RunStarted:
		return plain(events.NewRunStartedEvent(c.Conversation, c.Run))
	case transcript.RunEnded:
		clear(e.parent)
		switch c.Status {
		case transcript.Interrupted:
			return append(notice(InterruptedNotice), plain(events.NewRunErrorEvent("interrupted", events.WithErrorCode("interrupted"), events.WithRunID(c.Run)))...)
		case transcript.Failed:
			opts := []events.RunErrorOption{events.WithRunID(c.Run)}
			if c.Code != "" {
				opts = append(opts, events.WithErrorCode(c.Code))
			}
			return append(notice("⚠ "+c.Err), plain(events.NewRunErrorEvent(c.Err, opts...))...)
		}
		return plain(events.NewRunFinishedEvent(c.Conversation, c.Run))
	case transcript.ItemStarted:
		return e.start(c.Item)
	case transcript.DeltaAppended:
		return e.delta(c.Item.ID, c.Delta)
	case transcript.ItemDone:
		return e.done(c)
	}
	return nil
}

func plain(evs ...events.Event) []Event {
	out := make([]Event, len(evs))
	for i, ev := range evs {
		out[i] = Event{Event: ev}
	}
	return out
}

// notice is a visible text message that is no part of the conversation.
func notice(text string) []Event {
	id := uuid.NewString()
	return []Event{
		{Event: events.NewTextMessageStartEvent(id, events.WithRole("assistant")), Notice: true},
		{Event: events.NewTextMessageContentEvent(id, text), Notice: true},
		{Event: events.NewTextMessageEndEvent(id), Notice: true},
	}
}

func (e *Encoder) start(it transcript.Item) []Event {
	var out []events.Event
	switch it.Kind {
	case transcript.Text:
		e.parent[it.Answer] = it.ID
		out = append(out, events.NewTextMessageStartEvent(it.ID, events.WithRole("assistant")))
	case transcript.Reasoning:
		out = append(out, events.NewReasoningStartEvent(it.ID), events.NewReasoningMessageStartEvent(it.ID, "assistant"))
	case transcript.Tool:
		return plain(e.announce(it)...)
	default:
		return nil // the person's messages and notices are told whole
	}
	e.open[it.ID] = it.Kind
	evs := plain(out...)
	if it.Text != "" {
		evs = append(evs, e.delta(it.ID, it.Text)...)
	}
	return evs
}

// announce opens a tool call with its arguments whole. A call an
// interrupt skipped before it was announced hangs off no message.
func (e *Encoder) announce(it transcript.Item) []events.Event {
	var out []events.Event
	if p := e.parent[it.Answer]; p != "" && !it.Call.Skipped {
		out = append(out, events.NewToolCallStartEvent(it.ID, it.Call.Name, events.WithParentMessageID(p)))
	} else {
		out = append(out, events.NewToolCallStartEvent(it.ID, it.Call.Name))
	}
	if it.Call.Args != "" && !it.Call.Skipped {
		out = append(out, events.NewToolCallArgsEvent(it.ID, it.Call.Args))
	}
	e.open[it.ID] = transcript.Tool
	return append(out, events.NewToolCallEndEvent(it.ID))
}

func (e *Encoder) delta(id, text string) []Event {
	if text == "" {
		return nil
	}
	switch e.open[id] {
	case transcript.Text:
		e.sent[id] += len(text)
		return plain(events.NewTextMessageContentEvent(id, text))
	case transcript.Reasoning:
		e.sent[id] += len(text)
		return plain(events.NewReasoningMessageContentEvent(id, text))
	}
	return nil
}

func (e *Encoder) done(c transcript.Change) []Event {
	it := c.Item
	kind, started := e.open[it.ID]
	if !started && c.Run == "" {
		// Completed outside any run (a call a failed save left open,
		// answered before the next turn): no run tells it.
		return nil
	}
	var out []Event
	if !started && it.Kind != transcript.Notice && it.Kind != transcript.User {
		out = e.start(transcript.Item{ID: it.ID, Kind: it.Kind, Answer: it.Answer, Call: it.Call})
		kind = it.Kind
	}
	switch kind {
	case transcript.Text, transcript.Reasoning:
		// What the done item adds to what streamed (the note that ends an
		// answer cut at its cap) goes out before the end.
		if n := e.sent[it.ID]; n < len(it.Text) {
			out = append(out, e.delta(it.ID, it.Text[n:])...)
		}
	}
	delete(e.open, it.ID)
	delete(e.sent, it.ID)
	switch it.Kind {
	case transcript.Text:
		out = append(out, plain(events.NewTextMessageEndEvent(it.ID))...)
	case transcript.Reasoning:
		out = append(out, plain(events.NewReasoningMessageEndEvent(it.ID), events.NewReasoningEndEvent(it.ID))...)
	case transcript.Tool:
		out = append(out, plain(events.NewToolCallResultEvent(uuid.NewString(), it.ID, it.Call.Result))...)
	case transcript.Notice:
		if c.Run != "" {
			// The panel shows a notice's text alone: its level goes
			// into the text as the mark the other front ends draw.
			text := it.Text
			if it.Level == transcript.Warn {
				text = "⚠ " + text
			}
			out = append(out, notice(text)...)
		}
	}
	return out
}

// Snapshot is a conversation's transcript as AG-UI messages, for
// MESSAGES_SNAPSHOT. Messages get ids derived from the conversation id and
// their place, stable across runs; an assistant's reasoning becomes a
// reasoning message just before its answer, and a tool result recorded as
// failed carries an error. Notices are no part of it.
func Snapshot(conversation string, tr transcript.Transcript) []types.Message {
	failed := map[string]bool{}
	for _, it := range tr.Items {
		if it.Kind == transcript.Tool && it.Done && !it.Call.OK && !it.Call.Unreported {
			failed[it.ID] = true
		}
	}
	msgs := tr.Messages()
	out := make([]types.Message, 0, len(msgs))
	for i, m := range msgs {
		id := fmt.Sprintf("%s-%d", conversation, i)
		switch m.Role {
		case "assistant":
			if m.Reasoning != "" {
				out = append(out, types.Message{ID: id + "-reasoning", Role: types.RoleReasoning, Content: m.Reasoning})
			}
			am := types.Message{ID: id, Role: types.RoleAssistant, Content: m.Content}
			for _, c := range m.ToolCalls {
				am.ToolCalls = append(am.ToolCalls, types.ToolCall{ID: c.ID, Type: types.ToolCallTypeFunction, Function: types.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
			}
			out = append(out, am)
		case "tool":
			tm := types.Message{ID: id, Role: types.RoleTool, Content: m.Content, ToolCallID: m.ToolCallID}
			if failed[m.ToolCallID] {
				tm.Error = "the tool call failed"
			}
			out = append(out, tm)
		default:
			out = append(out, types.Message{ID: id, Role: types.Role(m.Role), Content: m.Content})
		}
	}
	return out
}
