package openai

import (
	"fmt"
	"testing"
	"time"

	"github.com/infer-workspace/infer/session/llm/internal/llmtest"
)

const testKey = "sk-test-0123456789abcdef"

type reply = llmtest.Reply

// fake is the shared fake server with this package's conveniences.
type fake struct{ *llmtest.Server }

func newFake(t testing.TB, replies ...reply) *fake { return &fake{llmtest.New(t, replies...)} }

func (f *fake) requests() []llmtest.Recorded { return f.Requests() }
func (f *fake) last() llmtest.Recorded       { return f.Last() }

// provider returns a provider pointed at the fake server whose retry
// policy records waits instead of sleeping.
func (f *fake) provider(flavor Flavor, waits *[]time.Duration) *Provider {
	return New(Config{
		Name: "testprov", Flavor: flavor, BaseURL: f.URL + "/v1", APIKey: testKey,
		KeyHint: "TEST_API_KEY", HTTPClient: f.Client, Policy: llmtest.Policy(waits),
	})
}

// sse replies with Chat Completions chunks, then [DONE].
func sse(payloads ...string) reply {
	return llmtest.SSE(append(dataEvents(payloads), llmtest.Event{Data: "[DONE]"})...)
}

// broken sends chunks, then cuts the connection.
func broken(payloads ...string) reply { return llmtest.Broken(dataEvents(payloads)...) }

func dataEvents(payloads []string) []llmtest.Event {
	var evs []llmtest.Event
	for _, p := range payloads {
		evs = append(evs, llmtest.Event{Data: p})
	}
	return evs
}

// events replies with named events, the Responses API's shape.
func events(evs ...[2]string) reply {
	var out []llmtest.Event
	for _, e := range evs {
		out = append(out, llmtest.Event{Name: e[0], Data: e[1]})
	}
	return llmtest.SSE(out...)
}

var (
	status  = llmtest.Status
	collect = llmtest.Collect
	joined  = llmtest.Joined
	at      = llmtest.At
	kindOf  = llmtest.Kind
)

// chunk builds a chat.completion.chunk payload with the given delta JSON.
func chunk(delta string) string {
	return `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}`
}

func finish(reason string) string {
	return `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
}

func usageChunk(in, out, reasoning int) string {
	return fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"completion_tokens_details":{"reasoning_tokens":%d}}}`, in, out, in+out, reasoning)
}
