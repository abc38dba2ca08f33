package session

import (
	"encoding/json"

	"github.com/google/uuid"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/store"
)

func newID() string { return uuid.NewString() }

func jsonString(s string) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}

// toLLM converts stored messages to what a model reads.
func toLLM(ms []store.Message) []llm.Message {
	out := make([]llm.Message, 0, len(ms))
	for _, m := range ms {
		l := llm.Message{Role: llm.Role(m.Role), Content: m.Content, Reasoning: m.Reasoning, ToolCallID: m.ToolCallID, ProviderData: m.ProviderData}
		for _, c := range m.ToolCalls {
			l.ToolCalls = append(l.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		out = append(out, l)
	}
	return out
}

// fromLLM converts a model-side message to its stored shape.
func fromLLM(m llm.Message) store.Message {
	s := store.Message{Role: string(m.Role), Content: m.Content, Reasoning: m.Reasoning, ToolCallID: m.ToolCallID, ProviderData: m.ProviderData}
	for _, c := range m.ToolCalls {
		s.ToolCalls = append(s.ToolCalls, store.ToolCall{ID: c.ID, Type: "function", Function: store.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
	}
	return s
}

// keptImages is how many of the most recent image-bearing messages keep
// their images in a model request: screenshots are large, and only the
// latest ones help the model.
const keptImages = 3

// trimImages returns history with images dropped from all but the most
// recent keptImages messages that carry them. It copies only what changes.
func trimImages(h []llm.Message) []llm.Message {
	seen := 0
	var out []llm.Message
	for i := len(h) - 1; i >= 0; i-- {
		if len(h[i].Images) == 0 {
			continue
		}
		seen++
		if seen <= keptImages {
			continue
		}
		if out == nil {
			out = append([]llm.Message(nil), h...)
		}
		out[i].Images = nil
	}
	if out == nil {
		return h
	}
	return out
}
