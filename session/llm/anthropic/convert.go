package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/infer-workspace/infer/session/llm"
)

// dataKey is this adapter's key in llm.Message.ProviderData.
const dataKey = "anthropic"

// savedBlock is one content block of an assistant answer, kept so the
// answer can be sent back as it came. Thinking blocks are kept whole (the
// API checks their signatures and requires them before tool use when
// thinking is on); text and tool_use blocks are only placeholders that
// record the order, their content being in the message itself.
type savedBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
	ID        string `json:"id,omitempty"`
}

// encodeBlocks returns the ProviderData for an answer, or nil when it had
// no thinking worth keeping.
func encodeBlocks(blocks []savedBlock) map[string]string {
	keep := false
	for _, b := range blocks {
		if (b.Type == "thinking" && b.Signature != "") || b.Type == "redacted_thinking" {
			keep = true
		}
	}
	if !keep {
		return nil
	}
	raw, err := json.Marshal(blocks)
	if err != nil {
		return nil
	}
	return map[string]string{dataKey: string(raw)}
}

// convert turns the conversation into the Messages API's system prompt and
// messages. System messages join the top-level system prompt; tool results
// become tool_result blocks (with their images) in a user message; turns of
// the same role are merged, as the API wants roles to alternate.
func convert(req llm.Request) ([]sdk.TextBlockParam, []sdk.MessageParam) {
	var system []sdk.TextBlockParam
	if req.System != "" {
		system = append(system, sdk.TextBlockParam{Text: req.System})
	}
	type turn struct {
		user   bool
		blocks []sdk.ContentBlockParamUnion
	}
	var turns []turn
	add := func(user bool, blocks []sdk.ContentBlockParamUnion) {
		if len(blocks) == 0 {
			return
		}
		if n := len(turns); n > 0 && turns[n-1].user == user {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			return
		}
		turns = append(turns, turn{user: user, blocks: blocks})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			if m.Content != "" {
				system = append(system, sdk.TextBlockParam{Text: m.Content})
			}
		case llm.RoleUser:
			var blocks []sdk.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, sdk.NewTextBlock(m.Content))
			}
			for _, img := range m.Images {
				blocks = append(blocks, imageBlock(img))
			}
			add(true, blocks)
		case llm.RoleAssistant:
			add(false, assistantBlocks(m))
		case llm.RoleTool:
			add(true, []sdk.ContentBlockParamUnion{toolResult(m)})
		}
	}
	msgs := make([]sdk.MessageParam, 0, len(turns))
	for _, t := range turns {
		if t.user {
			msgs = append(msgs, sdk.NewUserMessage(t.blocks...))
		} else {
			msgs = append(msgs, sdk.NewAssistantMessage(t.blocks...))
		}
	}
	return system, msgs
}

func imageBlock(img llm.Image) sdk.ContentBlockParamUnion {
	return sdk.NewImageBlockBase64(mediaType(img), base64.StdEncoding.EncodeToString(img.Data))
}

func mediaType(img llm.Image) string {
	if img.MIME == "" {
		return "image/png"
	}
	return img.MIME
}

func toolResult(m llm.Message) sdk.ContentBlockParamUnion {
	r := sdk.ToolResultBlockParam{ToolUseID: m.ToolCallID}
	if m.Content != "" {
		r.Content = append(r.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: m.Content}})
	}
	for _, img := range m.Images {
		src := sdk.ImageBlockParamSourceUnion{OfBase64: &sdk.Base64ImageSourceParam{
			Data: base64.StdEncoding.EncodeToString(img.Data), MediaType: sdk.Base64ImageSourceMediaType(mediaType(img)),
		}}
		r.Content = append(r.Content, sdk.ToolResultBlockParamContentUnion{OfImage: &sdk.ImageBlockParam{Source: src}})
	}
	return sdk.ContentBlockParamUnion{OfToolResult: &r}
}

// assistantBlocks rebuilds an assistant answer in its original block order
// when ProviderData recorded it, so signed thinking precedes the tool use it
// led to; otherwise text comes first, then the tool calls.
func assistantBlocks(m llm.Message) []sdk.ContentBlockParamUnion {
	var saved []savedBlock
	if raw := m.ProviderData[dataKey]; raw != "" {
		_ = json.Unmarshal([]byte(raw), &saved) // unreadable state: send the answer without it
	}
	calls := map[string]llm.ToolCall{}
	for _, tc := range m.ToolCalls {
		calls[tc.ID] = tc
	}
	var out []sdk.ContentBlockParamUnion
	textPlaced := false
	used := map[string]bool{}
	for _, b := range saved {
		switch b.Type {
		case "thinking":
			if b.Signature != "" {
				out = append(out, sdk.NewThinkingBlock(b.Signature, b.Thinking))
			}
		case "redacted_thinking":
			if b.Data != "" {
				out = append(out, sdk.NewRedactedThinkingBlock(b.Data))
			}
		case "text":
			if !textPlaced && m.Content != "" {
				out = append(out, sdk.NewTextBlock(m.Content))
				textPlaced = true
			}
		case "tool_use":
			if tc, ok := calls[b.ID]; ok && !used[b.ID] {
				out = append(out, toolUse(tc))
				used[b.ID] = true
			}
		}
	}
	if !textPlaced && m.Content != "" {
		out = append(out, sdk.NewTextBlock(m.Content))
	}
	for _, tc := range m.ToolCalls {
		if !used[tc.ID] {
			out = append(out, toolUse(tc))
			used[tc.ID] = true
		}
	}
	return out
}

// toolUse sends a call's arguments back as the JSON object they were.
// Arguments that are not an object (a model's malformed call) are wrapped,
// so the request stays valid and nothing is lost.
func toolUse(tc llm.ToolCall) sdk.ContentBlockParamUnion {
	args := strings.TrimSpace(tc.Arguments)
	var input any = json.RawMessage("{}")
	if args != "" {
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(args), &obj) == nil && obj != nil {
			input = json.RawMessage(args)
		} else {
			input = map[string]string{"invalid_arguments": tc.Arguments}
		}
	}
	return sdk.NewToolUseBlock(tc.ID, input, tc.Name)
}

// tools converts tool schemas: the API takes properties and required
// directly and every other schema keyword as extra fields.
func tools(ts []llm.Tool) ([]sdk.ToolUnionParam, error) {
	var out []sdk.ToolUnionParam
	for _, t := range ts {
		schema := sdk.ToolInputSchemaParam{}
		if len(t.Parameters) > 0 {
			var m map[string]any
			if err := json.Unmarshal(t.Parameters, &m); err != nil {
				return nil, fmt.Errorf("tool %q has a parameter schema that is not a JSON object: %v", t.Name, err)
			}
			extra := map[string]any{}
			for k, v := range m {
				switch k {
				case "type":
				case "properties":
					schema.Properties = v
				case "required":
					if list, ok := v.([]any); ok {
						for _, r := range list {
							if s, ok := r.(string); ok {
								schema.Required = append(schema.Required, s)
							}
						}
					}
				default:
					extra[k] = v
				}
			}
			if len(extra) > 0 {
				schema.ExtraFields = extra
			}
		}
		if schema.Properties == nil {
			schema.Properties = map[string]any{}
		}
		tool := sdk.ToolUnionParamOfTool(schema, t.Name)
		if t.Description != "" {
			tool.OfTool.Description = sdk.String(t.Description)
		}
		out = append(out, tool)
	}
	return out, nil
}
