package perf

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/openai"
)

// scriptedProvider is infer's own OpenAI-compatible adapter pointed at m.
func scriptedProvider(t *testing.T, m *scriptedModel) *openai.Provider {
	t.Helper()
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return openai.New(openai.Config{Name: "scripted", Flavor: openai.FlavorCompatible, BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()})
}

var readTool = llm.Tool{Name: "BrowserRead", Description: "read the page", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}

// TestScriptedModelSpeaksChatCompletions drives the script with infer's
// adapter, as headless does: two tool calls, then the final text, each
// exchange timed.
func TestScriptedModelSpeaksChatCompletions(t *testing.T) {
	m := newScriptedModel(2, "page text")
	close(m.release)
	p := scriptedProvider(t, m)
	ctx := context.Background()
	history := []llm.Message{{Role: llm.RoleUser, Content: "read it twice"}}
	for i := 0; i < 2; i++ {
		comp, err := p.Stream(ctx, llm.Request{Model: "loop", Messages: history, Tools: []llm.Tool{readTool}}, func(llm.Delta) {})
		if err != nil {
			t.Fatal(err)
		}
		if len(comp.ToolCalls) != 1 || comp.ToolCalls[0].Name != "BrowserRead" || comp.ToolCalls[0].Arguments != "{}" {
			t.Fatalf("answer %d: %+v", i, comp)
		}
		call := comp.ToolCalls[0]
		history = append(history,
			llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}},
			llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Content: "the page text, read"})
	}
	comp, err := p.Stream(ctx, llm.Request{Model: "loop", Messages: history, Tools: []llm.Tool{readTool}}, func(llm.Delta) {})
	if err != nil || len(comp.ToolCalls) != 0 || comp.Text != "Read the page 2 times." {
		t.Fatalf("final answer: %+v %v", comp, err)
	}
	gaps, err := m.gaps()
	if err != nil || len(gaps) != 2 || gaps[0] <= 0 || gaps[1] <= 0 {
		t.Fatalf("gaps %v, %v", gaps, err)
	}
	if _, _, err := m.memory(); err == nil {
		t.Fatal("no process was watched, so no memory can have been read")
	}
	title, err := p.Stream(ctx, llm.Request{Model: "loop", Messages: []llm.Message{{Role: llm.RoleUser, Content: "name it"}}}, func(llm.Delta) {})
	if err != nil || title.Text == "" {
		t.Fatalf("title: %+v %v", title, err)
	}
}

// TestScriptedModelRefusesResultsNotFromTheBrowser checks that a call the
// browser never answered cannot pass for a fast one.
func TestScriptedModelRefusesResultsNotFromTheBrowser(t *testing.T) {
	m := newScriptedModel(1, "page text")
	close(m.release)
	p := scriptedProvider(t, m)
	ctx := context.Background()
	req := llm.Request{Model: "loop", Tools: []llm.Tool{readTool}, Messages: []llm.Message{{Role: llm.RoleUser, Content: "read"}}}
	comp, err := p.Stream(ctx, req, func(llm.Delta) {})
	if err != nil || len(comp.ToolCalls) != 1 {
		t.Fatalf("%+v %v", comp, err)
	}
	call := comp.ToolCalls[0]
	req.Messages = append(req.Messages,
		llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call}},
		llm.Message{Role: llm.RoleTool, ToolCallID: call.ID, Content: "browser read: not connected"})
	if _, err := p.Stream(ctx, req, func(llm.Delta) {}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.gaps(); err == nil || !strings.Contains(err.Error(), "not the simulated browser's page") {
		t.Fatalf("gaps error = %v", err)
	}
}
