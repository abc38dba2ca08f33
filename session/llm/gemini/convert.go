package gemini

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/infer-workspace/infer/session/llm"
)

// dataKey is this adapter's key in llm.Message.ProviderData.
const dataKey = "gemini"

// saved is what an assistant message keeps for Gemini: the model's parts as
// they came (thought parts, signatures and parts infer does not interpret
// included), sent back in place of a rebuilt turn, as function-call
// continuation requires.
type saved struct {
	Parts []*genai.Part `json:"parts"`
	// Synthetic lists the call ids infer made up because the model gave
	// none; their answers go back without an id, as the calls had none.
	Synthetic []string `json:"synthetic_ids,omitempty"`
}

func encodeSaved(s saved) map[string]string {
	if len(s.Parts) == 0 {
		return nil
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	return map[string]string{dataKey: string(raw)}
}

// decodeSaved reads an assistant message's saved parts; ok is false when
// there are none or they are unreadable.
func decodeSaved(m llm.Message) (saved, bool) {
	raw := m.ProviderData[dataKey]
	if raw == "" {
		return saved{}, false
	}
	var s saved
	if err := json.Unmarshal([]byte(raw), &s); err != nil || len(s.Parts) == 0 {
		return saved{}, false
	}
	return s, true
}

// unsignedTurn returns the index of an assistant message with tool calls in
// the current turn (after the last user message) that has no saved parts,
// or -1. Gemini checks signatures only within the current turn, so older
// turns of a conversation recorded without them are still accepted.
func unsignedTurn(req llm.Request) int {
	start := 0
	for i, m := range req.Messages {
		if m.Role == llm.RoleUser {
			start = i + 1
		}
	}
	for i := start; i < len(req.Messages); i++ {
		m := req.Messages[i]
		if m.Role != llm.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		if _, ok := decodeSaved(m); !ok {
			return i
		}
	}
	return -1
}

// callRef is what a tool answer needs from the call it answers.
type callRef struct {
	name   string
	wireID string // "" when the model's call had no id
}

// convert turns the conversation into Gemini contents and the system
// instruction. Assistant turns with saved parts are replayed as saved;
// tool answers become functionResponse parts (consecutive ones in one
// turn, as the calls were in one); images travel as inline data.
func convert(req llm.Request) ([]*genai.Content, *genai.Content, error) {
	var sys []string
	if req.System != "" {
		sys = append(sys, req.System)
	}
	calls := map[string]callRef{}
	for _, m := range req.Messages {
		if m.Role != llm.RoleAssistant {
			continue
		}
		s, _ := decodeSaved(m)
		synthetic := map[string]bool{}
		for _, id := range s.Synthetic {
			synthetic[id] = true
		}
		for _, tc := range m.ToolCalls {
			ref := callRef{name: tc.Name, wireID: tc.ID}
			if synthetic[tc.ID] {
				ref.wireID = ""
			}
			calls[tc.ID] = ref
		}
	}
	var out []*genai.Content
	lastTool := false
	for i, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			if m.Content != "" {
				sys = append(sys, m.Content)
			}
		case llm.RoleUser:
			var parts []*genai.Part
			if m.Content != "" {
				parts = append(parts, genai.NewPartFromText(m.Content))
			}
			for _, img := range m.Images {
				parts = append(parts, genai.NewPartFromBytes(img.Data, mimeOf(img)))
			}
			if len(parts) > 0 {
				out = append(out, genai.NewContentFromParts(parts, genai.RoleUser))
			}
			lastTool = false
		case llm.RoleAssistant:
			parts, err := assistantParts(m)
			if err != nil {
				return nil, nil, fmt.Errorf("message %d: %w", i+1, err)
			}
			if len(parts) > 0 {
				out = append(out, genai.NewContentFromParts(parts, genai.RoleModel))
			}
			lastTool = false
		case llm.RoleTool:
			ref, ok := calls[m.ToolCallID]
			if !ok {
				return nil, nil, fmt.Errorf("message %d answers tool call %q, which no earlier message made", i+1, m.ToolCallID)
			}
			parts := []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
				ID: ref.wireID, Name: ref.name, Response: map[string]any{"output": m.Content},
			}}}
			for _, img := range m.Images {
				parts = append(parts, genai.NewPartFromBytes(img.Data, mimeOf(img)))
			}
			if lastTool {
				prev := out[len(out)-1]
				prev.Parts = append(prev.Parts, parts...)
			} else {
				out = append(out, genai.NewContentFromParts(parts, genai.RoleUser))
			}
			lastTool = true
		}
	}
	var system *genai.Content
	if len(sys) > 0 {
		// No role: the system instruction is not a turn of the conversation.
		system = &genai.Content{Parts: []*genai.Part{genai.NewPartFromText(strings.Join(sys, "\n\n"))}}
	}
	return out, system, nil
}

// assistantParts replays saved parts unchanged, or rebuilds a turn that has
// none (a text answer, or one recorded by another provider) from its text
// and calls.
func assistantParts(m llm.Message) ([]*genai.Part, error) {
	if s, ok := decodeSaved(m); ok {
		return s.Parts, nil
	}
	var parts []*genai.Part
	if m.Content != "" {
		parts = append(parts, genai.NewPartFromText(m.Content))
	}
	for _, tc := range m.ToolCalls {
		args, err := argsObject(tc.Arguments)
		if err != nil {
			return nil, fmt.Errorf("tool call %s: %w", tc.Name, err)
		}
		parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: tc.ID, Name: tc.Name, Args: args}})
	}
	return parts, nil
}

// argsObject reads a call's arguments; arguments that are not an object (a
// model's malformed call) are wrapped so the request stays valid and
// nothing is lost.
func argsObject(raw string) (map[string]any, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return map[string]any{}, nil
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(raw), &obj); err == nil && obj != nil {
		return obj, nil
	}
	return map[string]any{"invalid_arguments": raw}, nil
}

func mimeOf(img llm.Image) string {
	if img.MIME == "" {
		return "image/png"
	}
	return img.MIME
}

// functionTools declares the tools with their JSON Schemas as given
// (parametersJsonSchema), which Gemini takes without translation.
func functionTools(ts []llm.Tool) ([]*genai.Tool, error) {
	if len(ts) == 0 {
		return nil, nil
	}
	decls := make([]*genai.FunctionDeclaration, 0, len(ts))
	for _, t := range ts {
		d := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
		if len(t.Parameters) > 0 {
			var schema map[string]any
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				return nil, fmt.Errorf("tool %q has a parameter schema that is not a JSON object: %v", t.Name, err)
			}
			d.ParametersJsonSchema = schema
		}
		decls = append(decls, d)
	}
	return []*genai.Tool{{FunctionDeclarations: decls}}, nil
}

// newCallID names a call the model gave no id.
func newCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "gemini_" + hex.EncodeToString(b[:])
}
