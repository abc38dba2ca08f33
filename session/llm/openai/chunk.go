package openai

import (
	"encoding/json"
	"strconv"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/tidwall/gjson"

	"github.com/infer-workspace/infer/session/llm"
)

// chatChunk is one streamed chat.completion.chunk, reduced to what the
// accumulator reads.
//
// The SDK's ChatCompletionChunk decodes through a reflective decoder that
// keeps every field's raw JSON and validity: about 34 µs and 85
// allocations for a chunk of a tool call, four of which end every tool
// call of an agent loop. The SDK reads the JSON with gjson; so does
// chatChunk, picking out only the fields the accumulator needs, when the
// chunk has the usual shape: each field it reads present at most once,
// with a value of the type the protocol gives it or null. Anything else
// (compatible servers vary) is decoded by the SDK, whose leniency is
// kept: it turns a number into text, ignores a value it cannot use, and
// so on.
type chatChunk struct {
	usage   *llm.Usage
	choices []chunkChoice
}

type chunkChoice struct {
	index            int64
	content, refusal string
	reasoning        string // reasoning_content, or else reasoning
	toolCalls        []chunkToolCall
	finishReason     string
}

type chunkToolCall struct {
	index               int64
	hasIndex            bool
	id, name, arguments string
}

// UnmarshalJSON implements json.Unmarshaler, which is how the SDK's event
// stream decodes each event's data (it has checked that data is JSON).
func (c *chatChunk) UnmarshalJSON(data []byte) error {
	if c.fromUsual(gjson.Parse(string(data))) {
		return nil
	}
	var ch sdk.ChatCompletionChunk
	if err := json.Unmarshal(data, &ch); err != nil {
		return err
	}
	c.fromSDK(&ch)
	return nil
}

// fields walks the members of object obj, calling visit with each key
// and value, and reports whether obj had the usual shape: an object (or
// null), no escaped keys (an escape could spell a known key), no key
// twice among those visit knows (it returns their bit, or 0 for a key
// it ignores), and visit content with every value.
func fields(obj gjson.Result, visit func(key string, v gjson.Result) (bit uint, ok bool)) bool {
	if obj.Type == gjson.Null {
		return true
	}
	if !obj.IsObject() {
		return false
	}
	var seen uint
	usual := true
	obj.ForEach(func(k, v gjson.Result) bool {
		if strings.IndexByte(k.Raw, '\\') >= 0 {
			usual = false
			return false
		}
		bit, ok := visit(k.Str, v)
		if !ok || seen&bit != 0 {
			usual = false
			return false
		}
		seen |= bit
		return true
	})
	return usual
}

// text reads a string member: a string, or null for none.
func text(v gjson.Result, dst *string) bool {
	switch v.Type {
	case gjson.String:
		*dst = v.Str
	case gjson.Null:
		*dst = ""
	default:
		return false
	}
	return true
}

// integer reads an integer member written plainly (no fraction, no
// exponent, no leading zeros); null is absent, reported by present.
func integer(v gjson.Result, dst *int64, present *bool) bool {
	if v.Type == gjson.Null {
		*dst, *present = 0, false
		return true
	}
	raw := strings.TrimPrefix(v.Raw, "-")
	if v.Type != gjson.Number || raw == "" || len(raw) > 18 || (raw[0] == '0' && len(raw) > 1) {
		return false
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] < '0' || raw[i] > '9' {
			return false
		}
	}
	n, err := strconv.ParseInt(v.Raw, 10, 64)
	*dst, *present = n, true
	return err == nil
}

// extraText reads reasoning the way reasoningText does from the SDK's
// extra fields: a string that decodes, else nothing.
func extraText(v gjson.Result) string {
	var s string
	if json.Unmarshal([]byte(v.Raw), &s) != nil {
		return ""
	}
	return s
}

// fromUsual fills c from a chunk of the usual shape, and reports false
// (leaving c to be filled again) for any other.
func (c *chatChunk) fromUsual(root gjson.Result) bool {
	*c = chatChunk{}
	var present bool
	return fields(root, func(key string, v gjson.Result) (uint, bool) {
		switch key {
		case "choices":
			if v.Type == gjson.Null {
				return 1, true
			}
			if !v.IsArray() {
				return 1, false
			}
			ok := true
			v.ForEach(func(_, item gjson.Result) bool {
				if item.Type == gjson.Null {
					ok = false
					return false
				}
				var ch chunkChoice
				var reasoningContent, reasoning string
				ok = fields(item, func(key string, v gjson.Result) (uint, bool) {
					switch key {
					case "index":
						return 1, integer(v, &ch.index, &present)
					case "finish_reason":
						return 2, text(v, &ch.finishReason)
					case "delta":
						return 4, fields(v, func(key string, v gjson.Result) (uint, bool) {
							switch key {
							case "content":
								return 1, text(v, &ch.content)
							case "refusal":
								return 2, text(v, &ch.refusal)
							case "reasoning_content":
								reasoningContent = extraText(v)
								return 4, true
							case "reasoning":
								reasoning = extraText(v)
								return 8, true
							case "tool_calls":
								return 16, ch.readToolCalls(v)
							}
							return 0, true
						})
					}
					return 0, true
				})
				ch.reasoning = reasoningContent
				if ch.reasoning == "" {
					ch.reasoning = reasoning
				}
				c.choices = append(c.choices, ch)
				return ok
			})
			return 1, ok
		case "usage":
			if v.Type == gjson.Null {
				return 2, true
			}
			var u struct{ in, out, reasoning int64 }
			ok := v.IsObject() && fields(v, func(key string, v gjson.Result) (uint, bool) {
				switch key {
				case "prompt_tokens":
					return 1, integer(v, &u.in, &present)
				case "completion_tokens":
					return 2, integer(v, &u.out, &present)
				case "completion_tokens_details":
					return 4, fields(v, func(key string, v gjson.Result) (uint, bool) {
						if key == "reasoning_tokens" {
							return 1, integer(v, &u.reasoning, &present)
						}
						return 0, true
					})
				}
				return 0, true
			})
			c.usage = &llm.Usage{InputTokens: int(u.in), OutputTokens: int(u.out), ReasoningTokens: int(u.reasoning)}
			return 2, ok
		}
		return 0, true
	})
}

// readToolCalls reads a delta's tool_calls: an array of objects, or null.
func (ch *chunkChoice) readToolCalls(v gjson.Result) bool {
	if v.Type == gjson.Null {
		return true
	}
	if !v.IsArray() {
		return false
	}
	ok := true
	v.ForEach(func(_, item gjson.Result) bool {
		if item.Type == gjson.Null {
			ok = false
			return false
		}
		var tc chunkToolCall
		ok = fields(item, func(key string, v gjson.Result) (uint, bool) {
			switch key {
			case "index":
				return 1, integer(v, &tc.index, &tc.hasIndex)
			case "id":
				return 2, text(v, &tc.id)
			case "function":
				return 4, fields(v, func(key string, v gjson.Result) (uint, bool) {
					switch key {
					case "name":
						return 1, text(v, &tc.name)
					case "arguments":
						return 2, text(v, &tc.arguments)
					}
					return 0, true
				})
			}
			return 0, true
		})
		ch.toolCalls = append(ch.toolCalls, tc)
		return ok
	})
	return ok
}

func (c *chatChunk) fromSDK(ch *sdk.ChatCompletionChunk) {
	*c = chatChunk{}
	if ch.JSON.Usage.Valid() {
		c.usage = &llm.Usage{
			InputTokens:     int(ch.Usage.PromptTokens),
			OutputTokens:    int(ch.Usage.CompletionTokens),
			ReasoningTokens: int(ch.Usage.CompletionTokensDetails.ReasoningTokens),
		}
	}
	for _, choice := range ch.Choices {
		d := choice.Delta
		cc := chunkChoice{
			index: choice.Index, content: d.Content, refusal: d.Refusal,
			reasoning: reasoningText(d), finishReason: choice.FinishReason,
		}
		for _, tc := range d.ToolCalls {
			cc.toolCalls = append(cc.toolCalls, chunkToolCall{
				index: tc.Index, hasIndex: tc.JSON.Index.Valid(),
				id: tc.ID, name: tc.Function.Name, arguments: tc.Function.Arguments,
			})
		}
		c.choices = append(c.choices, cc)
	}
}

// reasoningText reads the reasoning a compatible server put in the delta:
// reasoning_content (DeepSeek, vLLM, llama.cpp, LM Studio) or reasoning
// (Ollama, OpenRouter). Neither is in the SDK's typed struct.
func reasoningText(d sdk.ChatCompletionChunkChoiceDelta) string {
	for _, key := range []string{"reasoning_content", "reasoning"} {
		f, ok := d.JSON.ExtraFields[key]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}
