package openai

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/openai/openai-go/v3"

	"github.com/infer-workspace/infer/session/llm"
)

// chunkSamples are chunks as servers send them, and as some compatible
// servers bend them.
var chunkSamples = []string{
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"BrowserRead","arguments":""}}]},"finish_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":1}"}}]},"finish_reason":null}]}`,
	`{"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":10,"total_tokens":60,"completion_tokens_details":{"reasoning_tokens":4}}}`,
	`{"choices":[{"index":0,"delta":{"content":"Hel\u00e9 \"quoted\" <b>"}}],"usage":null}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":"","reasoning":"ollama thinks"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":5,"reasoning":"after a number"}}]}`,
	`{"choices":[{"index":1,"delta":{"content":"second choice"}},{"index":0,"delta":{"content":"first"},"finish_reason":"stop"}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"id":"no_index","function":{"name":"Bash","arguments":"{}"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":null,"id":"null_index","function":{"name":"Bash"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":"0","id":"string_index","function":{"name":"Bash","arguments":"{}"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"object_args","function":{"name":"Bash","arguments":{"command":"ls"}}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"content":["parts"]}}]}`,
	`{"choices":null,"usage":{"prompt_tokens":"12","completion_tokens":3}}`,
	`{"choices":[{"index":0,"delta":null,"finish_reason":"length"}],"extra":{"nested":[1,2,3]}}`,
	`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":7}]}`,
	`{}`,
	`null`,
}

// accumulate feeds each chunk the SDK can decode to one accumulator, and
// checks what it kept against what it emitted.
func accumulate(t *testing.T, chunks ...[]byte) {
	t.Helper()
	var text, reasoning strings.Builder
	args := map[int]string{}
	acc := chatAccumulator{byIndex: map[int64]int{}, emit: func(d llm.Delta) {
		switch d.Kind {
		case llm.TextDelta:
			text.WriteString(d.Text)
		case llm.ReasoningDelta:
			reasoning.WriteString(d.Text)
		case llm.ToolCallDelta:
			args[d.ToolCall.Index] += d.ToolCall.Arguments
		}
	}}
	for _, data := range chunks {
		var ch sdk.ChatCompletionChunk
		if json.Unmarshal(data, &ch) != nil {
			continue // the SDK's stream ends on a chunk it cannot decode
		}
		acc.add(&ch)
	}
	c := acc.completion()
	if c.Text != text.String() || c.Reasoning != reasoning.String() {
		t.Fatalf("completion %q/%q, emitted %q/%q", c.Text, c.Reasoning, text.String(), reasoning.String())
	}
	if len(c.ToolCalls) != len(args) {
		t.Fatalf("%d tool calls, fragments for %d", len(c.ToolCalls), len(args))
	}
	for i, tc := range c.ToolCalls {
		if tc.ID == "" || (tc.Arguments != args[i] && !(strings.TrimSpace(args[i]) == "" && tc.Arguments == "{}")) {
			t.Fatalf("tool call %d = %+v, fragments %q", i, tc, args[i])
		}
	}
}

func TestChatAccumulatorOnBentChunks(t *testing.T) {
	t.Parallel()
	var all [][]byte
	for _, s := range chunkSamples {
		accumulate(t, []byte(s))
		all = append(all, []byte(s))
	}
	accumulate(t, all...)
}

// FuzzChatChunk feeds arbitrary chunks, as the SDK decodes them, to the
// accumulator: it must neither panic nor lose what it emitted.
func FuzzChatChunk(f *testing.F) {
	for _, s := range chunkSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		accumulate(t, data, data)
	})
}
