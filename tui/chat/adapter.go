package chat

import (
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
)

// This file adapts the workspace's old events (AG-UI, UserMessage,
// ToolFinished, a snapshot's stored messages) to transcript changes, until
// the workspace publishes the transcript itself; it goes then.

// ApplyEvent folds one AG-UI event into the conversation as the
// transcript change it stands for.
func (m *Model) ApplyEvent(e events.Event) {
	switch e := e.(type) {
	case *events.TextMessageStartEvent:
		m.segment(e.MessageID, transcript.Text)
	case *events.TextMessageContentEvent:
		m.segment(e.MessageID, transcript.Text)
		m.Apply(transcript.Change{Op: transcript.DeltaAppended, Item: transcript.Item{ID: e.MessageID}, Delta: e.Delta})
	case *events.TextMessageEndEvent:
		m.segmentDone(e.MessageID, kText, transcript.Text)
	case *events.ReasoningMessageStartEvent:
		m.segment(e.MessageID, transcript.Reasoning)
	case *events.ReasoningMessageContentEvent:
		m.segment(e.MessageID, transcript.Reasoning)
		m.Apply(transcript.Change{Op: transcript.DeltaAppended, Item: transcript.Item{ID: e.MessageID}, Delta: e.Delta})
	case *events.ReasoningMessageEndEvent:
		m.segmentDone(e.MessageID, kReasoning, transcript.Reasoning)
	case *events.ToolCallStartEvent:
		if it := m.byID[e.ToolCallID]; it != nil && it.kind == kTool && it.origin == "" {
			m.set(it, transcript.Item{ID: e.ToolCallID, Kind: transcript.Tool, Call: transcript.Call{Name: e.ToolCallName}})
			return
		}
		m.Apply(transcript.Change{Op: transcript.ItemStarted, Item: transcript.Item{ID: e.ToolCallID, Kind: transcript.Tool, Call: transcript.Call{Name: e.ToolCallName}}})
	case *events.ToolCallArgsEvent:
		m.Apply(transcript.Change{Op: transcript.DeltaAppended, Item: transcript.Item{ID: e.ToolCallID}, Delta: e.Delta})
	case *events.ToolCallResultEvent:
		src := transcript.Item{ID: e.ToolCallID, Kind: transcript.Tool, Call: transcript.Call{Name: "tool", Result: e.Content, Unreported: true}}
		if it := m.byID[e.ToolCallID]; it != nil && it.kind == kTool {
			src.Call.Name, src.Call.Args = it.name, string(it.args)
			if it.known {
				src.Call.Unreported, src.Call.OK, src.Call.Duration = false, it.state == toolOK, it.dur
			}
		}
		m.Apply(transcript.Change{Op: transcript.ItemDone, Item: src})
	case *events.RunFinishedEvent:
		m.Apply(transcript.Change{Op: transcript.RunEnded, Status: transcript.Finished})
	case *events.RunErrorEvent:
		m.Apply(transcript.Change{Op: transcript.RunEnded, Status: transcript.Failed})
	}
}

func (m *Model) segment(id string, k transcript.Kind) {
	want := kText
	if k == transcript.Reasoning {
		want = kReasoning
	}
	if it := m.byID[id]; it != nil && it.kind == want {
		return
	}
	m.Apply(transcript.Change{Op: transcript.ItemStarted, Item: transcript.Item{ID: id, Kind: k}})
}

func (m *Model) segmentDone(id string, want kind, k transcript.Kind) {
	if it := m.byID[id]; it != nil && it.kind == want && it.streaming {
		m.Apply(transcript.Change{Op: transcript.ItemDone, Item: transcript.Item{ID: id, Kind: k, Text: string(it.buf)}})
	}
}

// ToolDone records a call's outcome and duration as the workspace
// reports them. Calls the pane does not show are ignored.
func (m *Model) ToolDone(id string, ok bool, d time.Duration) {
	it := m.byID[id]
	if it == nil || it.kind != kTool {
		return
	}
	if !it.hasResult {
		it.state, it.known, it.dur = stateOf(ok), true, d
		it.version++
		return
	}
	m.Apply(transcript.Change{Op: transcript.ItemDone, Item: transcript.Item{ID: id, Kind: transcript.Tool,
		Call: transcript.Call{Name: it.name, Args: string(it.args), Result: it.result, OK: ok, Duration: d}}})
}

// AddUser shows a message the person sent, from any front end.
func (m *Model) AddUser(text string, origin tools.Origin) {
	m.Apply(transcript.Change{Op: transcript.ItemDone, Item: transcript.Item{Kind: transcript.User, Text: text, Origin: origin}})
}
