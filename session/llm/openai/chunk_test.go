package openai

import (
	"encoding/json"
	"reflect"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/tidwall/gjson"
)

// chunkSamples are chunks as servers send them, and as some compatible
// servers bend them.
var chunkSamples = []string{
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"BrowserRead","arguments":""}}]},"finish_reason":null}]}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":1}"}}]},"finish_reason":null}]}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":10,"total_tokens":60,"completion_tokens_details":{"reasoning_tokens":4}}}`,
	`{"choices":[{"index":0,"delta":{"content":"Hel\u00e9 \"quoted\" <b>"}}],"usage":null}`,
	`{"choices":[{"index":0,"delta":{"refusal":"no"}}],"usage":{}}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":"think","reasoning":"other"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":"","reasoning":"ollama thinks"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":null,"reasoning":"openrouter thinks"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":5,"reasoning":"after a number"}}]}`,
	`{"choices":[{"index":1,"delta":{"content":"second choice"}},{"index":0,"delta":{"content":"first"},"finish_reason":"stop"}]}`,
	`{"choices":[{"delta":{"tool_calls":[{"id":"no_index","function":{"name":"Bash","arguments":"{}"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":null,"id":"null_index","function":{"name":"Bash"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":"0","id":"string_index","function":{"name":"Bash","arguments":"{}"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"object_args","function":{"name":"Bash","arguments":{"command":"ls"}}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"content":["parts"]}}]}`,
	`{"choices":[{"index":"0","delta":{"content":"string index"}}]}`,
	`{"choices":null,"usage":{"prompt_tokens":"12","completion_tokens":3}}`,
	`{"choices":[{"index":0,"delta":null,"finish_reason":"length"}],"extra":{"nested":[1,2,3]}}`,
	`{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":7}]}`,
	`{"choices":[{"index":1e0,"delta":{"content":"exponent"}}]}`,
	`{}`,
	`null`,
}

// viaSDK decodes data as the SDK's chunk type and converts it, which is
// what every chunk went through before chatChunk had a fast path.
func viaSDK(data []byte) (chatChunk, error) {
	var ch sdk.ChatCompletionChunk
	if err := json.Unmarshal(data, &ch); err != nil {
		return chatChunk{}, err
	}
	var c chatChunk
	c.fromSDK(&ch)
	return c, nil
}

func agreeChunk(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := viaSDK(data)
	var got chatChunk
	gotErr := json.Unmarshal(data, &got)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("%s: error %v, the SDK's %v", data, gotErr, wantErr)
	}
	if gotErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\ndecoded  %+v\nthe SDK's %+v", data, got, want)
	}
}

func TestChatChunkDecodesAsTheSDKDoes(t *testing.T) {
	for i, s := range chunkSamples {
		agreeChunk(t, []byte(s))
		// What real servers send takes the fast path.
		var c chatChunk
		if usual := c.fromUsual(gjson.Parse(s)); usual != (i < 13 || i == 18 || i >= 21) {
			t.Errorf("sample %d: usual %v\n%s", i, usual, s)
		}
	}
}

func FuzzChatChunk(f *testing.F) {
	for _, s := range chunkSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		agreeChunk(t, data)
	})
}

// BenchmarkChatChunk decodes the chunks that end a tool call, as the
// event stream does; BenchmarkChatChunkSDK decodes them as the SDK's type.
func BenchmarkChatChunk(b *testing.B) {
	for b.Loop() {
		for _, s := range chunkSamples[:4] {
			var c chatChunk
			if err := json.Unmarshal([]byte(s), &c); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkChatChunkSDK(b *testing.B) {
	for b.Loop() {
		for _, s := range chunkSamples[:4] {
			var c sdk.ChatCompletionChunk
			if err := json.Unmarshal([]byte(s), &c); err != nil {
				b.Fatal(err)
			}
		}
	}
}
