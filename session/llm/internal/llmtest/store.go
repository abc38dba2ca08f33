package llmtest

import (
	"testing"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/store"
)

// ThroughStore saves a tool-call turn (the person's text, the completion
// c with its first tool call, and that call's result) in a store on disk,
// opens the store again and loads the conversation, as resuming one does,
// and returns its messages as a request carries them. What a provider
// keeps in ProviderData must come through this unchanged.
func ThroughStore(t testing.TB, user string, c llm.Completion, result string) []llm.Message {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(dir, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	meta, err := st.Create()
	if err != nil {
		t.Fatal(err)
	}
	tc := c.ToolCalls[0]
	if err := st.Append(meta.ID,
		store.Message{Role: store.RoleUser, Content: user},
		store.Message{Role: store.RoleAssistant, Content: c.Text, Reasoning: c.Reasoning, ProviderData: c.ProviderData,
			ToolCalls: []store.ToolCall{{ID: tc.ID, Type: "function", Function: store.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}}}},
		store.Message{Role: store.RoleTool, ToolCallID: tc.ID, Content: result}); err != nil {
		t.Fatal(err)
	}
	if st, err = store.Open(dir, store.Options{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	conv, err := st.Load(meta.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []llm.Message
	for _, m := range conv.Messages {
		lm := llm.Message{Role: llm.Role(m.Role), Content: m.Content, Reasoning: m.Reasoning, ToolCallID: m.ToolCallID, ProviderData: m.ProviderData}
		for _, c := range m.ToolCalls {
			lm.ToolCalls = append(lm.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		out = append(out, lm)
	}
	return out
}
