package session

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
)

func newID() string { return uuid.NewString() }

func jsonString(s string) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}

// fromStore reads a stored conversation as a transcript: each message's
// parts become items (an assistant message's reasoning, text and calls
// share an answer), each tool message completes its call, and each notice
// takes its place among them. Items get ids from their place, stable
// across loads. A tool message that answers no call (only a hand edit
// writes one) is left out, as is an assistant message with nothing in it.
func fromStore(c store.Conversation) transcript.Transcript {
	var tr transcript.Transcript
	notices := c.Notices
	addNotices := func(before int) {
		for len(notices) > 0 && notices[0].After <= before {
			n := notices[0]
			notices = notices[1:]
			level := transcript.Info
			if n.Warn {
				level = transcript.Warn
			}
			tr.Items = append(tr.Items, transcript.Item{ID: fmt.Sprintf("n%d", len(tr.Items)), Kind: transcript.Notice, Text: n.Text,
				Origin: tools.Origin(n.Origin), Level: level, At: n.At, Done: true})
		}
	}
	for i, m := range c.Messages {
		addNotices(i)
		id := fmt.Sprintf("m%d", i)
		switch m.Role {
		case store.RoleUser:
			tr.Items = append(tr.Items, transcript.Item{ID: id, Kind: transcript.User, Text: m.Content, Done: true})
		case store.RoleAssistant:
			first := len(tr.Items)
			if m.Reasoning != "" {
				tr.Items = append(tr.Items, transcript.Item{ID: id + "r", Kind: transcript.Reasoning, Answer: id, Text: m.Reasoning, Done: true})
			}
			if m.Content != "" {
				tr.Items = append(tr.Items, transcript.Item{ID: id, Kind: transcript.Text, Answer: id, Text: m.Content, Done: true})
			}
			for _, call := range m.ToolCalls {
				tr.Items = append(tr.Items, transcript.Item{ID: call.ID, Kind: transcript.Tool, Answer: id,
					Call: transcript.Call{Name: call.Function.Name, Args: call.Function.Arguments}})
			}
			if len(tr.Items) > first {
				tr.Items[first].ProviderData = m.ProviderData
			}
		case store.RoleTool:
			ok, known := c.ToolResults[m.ToolCallID]
			answered := false
			for j := len(tr.Items) - 1; j >= 0 && !answered; j-- {
				it := &tr.Items[j]
				if it.Kind == transcript.Tool && it.ID == m.ToolCallID && !it.Done {
					it.Done, it.Call.Result, it.Call.OK, it.Call.Unreported = true, m.Content, ok, !known
					answered = true
				}
			}
		}
	}
	addNotices(int(^uint(0) >> 1))
	return tr
}

// storeMessage converts a model-side message to its stored shape.
func storeMessage(m llm.Message) store.Message {
	s := store.Message{Role: string(m.Role), Content: m.Content, Reasoning: m.Reasoning, ToolCallID: m.ToolCallID, ProviderData: m.ProviderData}
	for _, c := range m.ToolCalls {
		s.ToolCalls = append(s.ToolCalls, store.ToolCall{ID: c.ID, Type: "function", Function: store.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
	}
	return s
}
