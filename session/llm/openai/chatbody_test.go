package openai

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/infer-workspace/infer/session/llm"
)

// The tests below check the encoder's reuse against the SDK: for every
// request, the params it builds, carrying JSON encoded for earlier
// requests, must encode as the same request's params built afresh do.

// chatMessages is the reference conversion the encoder is checked against:
// it converts the conversation to Chat Completions messages.
// Tool messages are text-only in this protocol, so the images tools returned
// follow the run of tool messages as one user message of image parts: tool
// messages must directly follow the assistant message that called them.
func chatMessages(req llm.Request, f Flavor) []sdk.ChatCompletionMessageParamUnion {
	var out []sdk.ChatCompletionMessageParamUnion
	if req.System != "" {
		out = append(out, sdk.SystemMessage(req.System))
	}
	var pending []llm.Image
	flush := func() {
		if len(pending) == 0 {
			return
		}
		parts := []sdk.ChatCompletionContentPartUnionParam{sdk.TextContentPart(toolImagesNote)}
		for _, img := range pending {
			parts = append(parts, imagePart(img))
		}
		out = append(out, sdk.UserMessage(parts))
		pending = nil
	}
	for _, m := range req.Messages {
		if m.Role != llm.RoleTool {
			flush()
		}
		switch m.Role {
		case llm.RoleSystem:
			out = append(out, sdk.SystemMessage(m.Content))
		case llm.RoleUser:
			if len(m.Images) == 0 {
				out = append(out, sdk.UserMessage(m.Content))
				continue
			}
			var parts []sdk.ChatCompletionContentPartUnionParam
			if m.Content != "" {
				parts = append(parts, sdk.TextContentPart(m.Content))
			}
			for _, img := range m.Images {
				parts = append(parts, imagePart(img))
			}
			out = append(out, sdk.UserMessage(parts))
		case llm.RoleAssistant:
			if a, ok := assistantMessage(m, f); ok {
				out = append(out, a)
			}
		case llm.RoleTool:
			content := m.Content
			if content == "" {
				content = "(no output)"
			}
			out = append(out, sdk.ToolMessage(content, m.ToolCallID))
			pending = append(pending, m.Images...)
		}
	}
	flush()
	return out
}

// sdkBody is the SDK's encoding of req's params built afresh.
func sdkBody(t testing.TB, req llm.Request, f Flavor, o chatOptions) any {
	t.Helper()
	params := sdk.ChatCompletionNewParams{Model: req.Model, Messages: chatMessages(req, f)}
	if len(req.Tools) > 0 {
		tools, err := chatTools(req.Tools)
		if err != nil {
			t.Fatal(err)
		}
		params.Tools = tools
	}
	if o.effort != "" {
		params.ReasoningEffort = shared.ReasoningEffort(o.effort)
	}
	if o.temperature != nil {
		params.Temperature = sdk.Float(*o.temperature)
	}
	if o.streamOptions {
		params.StreamOptions.IncludeUsage = sdk.Bool(true)
	}
	data, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// encodedBody is the SDK's encoding of the params the encoder builds for
// req, decoded.
func encodedBody(t testing.TB, e *chatEncoder, req llm.Request, o chatOptions) any {
	t.Helper()
	b, err := e.prepare(req)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(b.params(o))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("the encoded body is not JSON: %v\n%s", err, data)
	}
	return v
}

func checkBody(t testing.TB, e *chatEncoder, req llm.Request, o chatOptions) {
	t.Helper()
	got, want := encodedBody(t, e, req, o), sdkBody(t, req, e.flavor, o)
	if !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("encoded body differs from the SDK's:\ngot  %s\nwant %s", g, w)
	}
}

var (
	png  = llm.Image{MIME: "image/png", Data: []byte{0x89, 'P', 'N', 'G', 0, 1, 2}}
	jpeg = llm.Image{MIME: "image/jpeg", Data: []byte("jpeg data")}
	bare = llm.Image{Data: []byte("no mime")}
)

// variedHistory has every kind of message the conversion treats apart.
func variedHistory() []llm.Message {
	return []llm.Message{
		{Role: llm.RoleUser, Content: "look at <this> & \"that\" — ünïcode\n\ttab"},
		{Role: llm.RoleUser, Content: "bad \xff byte, \x01 control, \u2028 separator, \\ backslash, \U0001F600"},
		{Role: llm.RoleUser, Content: "with a picture", Images: []llm.Image{jpeg}},
		{Role: llm.RoleUser, Images: []llm.Image{png, bare}},
		{Role: llm.RoleAssistant, Content: "opening", Reasoning: "first I think", ToolCalls: []llm.ToolCall{
			{ID: "call_a", Name: "BrowserNavigate", Arguments: `{"url":"https://example.com/?a=1&b=<2>"}`},
			{ID: "call_b", Name: "BrowserScreenshot", Arguments: "  "},
		}},
		{Role: llm.RoleTool, ToolCallID: "call_a", Content: "Example Domain\r\n\x7f\xc3"},
		{Role: llm.RoleTool, ToolCallID: "call_b", Images: []llm.Image{png}},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_c", Name: "BrowserScreenshot", Arguments: "{}"}, {ID: "call_d", Name: "BrowserRead", Arguments: "{}"}}},
		{Role: llm.RoleTool, ToolCallID: "call_c", Content: "shot", Images: []llm.Image{jpeg, png}},
		{Role: llm.RoleTool, ToolCallID: "call_d", Content: "text only"},
		{Role: llm.RoleAssistant},                                  // interrupted before saying anything
		{Role: llm.RoleAssistant, Reasoning: "thought, no answer"}, // not sent either
		{Role: llm.RoleSystem, Content: "a system note in the middle"},
		{Role: "narrator", Content: "a role the conversion does not know"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_e", Name: "Bash", Arguments: `{"command":"ls"}`}}},
		{Role: llm.RoleTool, ToolCallID: "call_e", Content: "a.txt", Images: []llm.Image{bare}},
		{Role: llm.RoleAssistant, Content: "done"},
	}
}

var testTools = []llm.Tool{{
	Name: "BrowserNavigate", Description: "open a page",
	Parameters: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}`),
}, {Name: "BrowserScreenshot"}}

func TestChatBodyMatchesTheSDK(t *testing.T) {
	t.Parallel()
	temp := 0.7
	tiny := 0.0000001
	zero := 0.0
	for _, f := range []Flavor{FlavorOpenAI, FlavorOpenRouter, FlavorCompatible} {
		for _, system := range []string{"", "be brief"} {
			for _, tools := range [][]llm.Tool{nil, testTools} {
				for _, o := range []chatOptions{
					{},
					{effort: "high", temperature: &temp, streamOptions: true},
					{effort: "none", temperature: &tiny},
					{temperature: &zero, streamOptions: true},
				} {
					temp := "default"
					if o.temperature != nil {
						temp = fmt.Sprint(*o.temperature)
					}
					name := fmt.Sprintf("flavor%d/system=%t/tools=%d/effort=%q/temperature=%s/usage=%t", f, system != "", len(tools), o.effort, temp, o.streamOptions)
					t.Run(name, func(t *testing.T) {
						e := newChatEncoder(f)
						h := variedHistory()
						// Every prefix, in order, as a turn sends them; then
						// the whole history again from a cold encoder.
						for n := 0; n <= len(h); n++ {
							checkBody(t, e, llm.Request{Model: "m-1", System: system, Messages: h[:n], Tools: tools}, o)
						}
						checkBody(t, newChatEncoder(f), llm.Request{Model: "m-1", System: system, Messages: h, Tools: tools}, o)
					})
				}
			}
		}
	}
}

func TestChatBodyNoticesChangedMessages(t *testing.T) {
	t.Parallel()
	e := newChatEncoder(FlavorOpenAI)
	req := func(h []llm.Message) llm.Request {
		return llm.Request{Model: "m", System: "s", Messages: h, Tools: testTools}
	}
	h := variedHistory()
	checkBody(t, e, req(h), chatOptions{})

	// A later turn drops old images: the same messages, images gone.
	trimmed := append([]llm.Message(nil), h...)
	for i := range trimmed[:6] {
		trimmed[i].Images = nil
	}
	checkBody(t, e, req(trimmed), chatOptions{})
	checkBody(t, e, req(h), chatOptions{})

	// Tool calls changed in place in the caller's slice after encoding.
	calls := []llm.ToolCall{{ID: "call_x", Name: "BrowserRead", Arguments: "{}"}}
	own := []llm.Message{{Role: llm.RoleUser, Content: "go"}, {Role: llm.RoleAssistant, ToolCalls: calls}}
	checkBody(t, e, req(own), chatOptions{})
	calls[0].Arguments = `{"selector":"main"}`
	checkBody(t, e, req(own), chatOptions{})

	// An image's bytes replaced by other bytes of the same length.
	img := []llm.Message{{Role: llm.RoleUser, Images: []llm.Image{{MIME: "image/png", Data: []byte("abcd")}}}}
	checkBody(t, e, req(img), chatOptions{})
	img2 := []llm.Message{{Role: llm.RoleUser, Images: []llm.Image{{MIME: "image/png", Data: []byte("abce")}}}}
	checkBody(t, e, req(img2), chatOptions{})

	// Each field a message's encoding depends on, changed alone.
	base := llm.Message{Role: llm.RoleAssistant, Content: "c", Reasoning: "r", ToolCalls: []llm.ToolCall{{ID: "i", Name: "n", Arguments: "{}"}}}
	router := newChatEncoder(FlavorOpenRouter)
	for _, change := range []func(*llm.Message){
		func(m *llm.Message) { m.Content = "c2" },
		func(m *llm.Message) { m.Reasoning = "r2" },
		func(m *llm.Message) { m.ToolCalls = []llm.ToolCall{{ID: "i2", Name: "n", Arguments: "{}"}} },
		func(m *llm.Message) { m.ToolCalls = append(m.ToolCalls, llm.ToolCall{ID: "j", Name: "n"}) },
		func(m *llm.Message) { m.Role = llm.RoleUser },
		func(m *llm.Message) { m.Role, m.ToolCallID = llm.RoleTool, "i" },
	} {
		m := base
		m.ToolCalls = append([]llm.ToolCall(nil), base.ToolCalls...)
		checkBody(t, router, req([]llm.Message{{Role: llm.RoleUser, Content: "q"}, base}), chatOptions{})
		change(&m)
		checkBody(t, router, req([]llm.Message{{Role: llm.RoleUser, Content: "q"}, m}), chatOptions{})
	}

	// New tools and a new system prompt replace the cached ones.
	other := []llm.Tool{{Name: "Read", Description: "read a file", Parameters: json.RawMessage(`{"type":"object"}`)}}
	checkBody(t, e, llm.Request{Model: "m", System: "other", Messages: h, Tools: other}, chatOptions{})
	checkBody(t, e, req(h), chatOptions{})
}

func TestChatBodyReusesEncodedMessages(t *testing.T) {
	t.Parallel()
	e := newChatEncoder(FlavorOpenAI)
	h := loopHistory(40)
	first, err := e.prepare(llm.Request{Model: "m", Messages: h[:20]})
	if err != nil {
		t.Fatal(err)
	}
	// A copy of the history, as the agent's turn and the workspace hold:
	// the same strings in other slices.
	again := append([]llm.Message(nil), h...)
	second, err := e.prepare(llm.Request{Model: "m", Messages: again})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if &first.history[i].element[0] != &second.history[i].element[0] {
			t.Fatalf("message %d was encoded again", i)
		}
	}
	// Another conversation in between does not evict the first.
	for i := range maxHistories - 1 {
		other := []llm.Message{{Role: llm.RoleUser, Content: fmt.Sprintf("other %d", i)}}
		if _, err := e.prepare(llm.Request{Model: "m", Messages: other}); err != nil {
			t.Fatal(err)
		}
	}
	third, err := e.prepare(llm.Request{Model: "m", Messages: h})
	if err != nil {
		t.Fatal(err)
	}
	if &third.history[39].element[0] != &second.history[39].element[0] {
		t.Fatal("the history was encoded again after other requests")
	}
}

func TestChatBodyConcurrentHistories(t *testing.T) {
	t.Parallel()
	e := newChatEncoder(FlavorOpenAI)
	h := loopHistory(60)
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := h
			if g%2 == 1 {
				// Diverges from the shared history after its first user message.
				own = append([]llm.Message{h[0]}, loopHistory(30)[1:]...)
				own[1].Content = fmt.Sprintf("goroutine %d", g)
			}
			for n := 1; n <= len(own); n += 1 + g%3 {
				checkBody(t, e, llm.Request{Model: "m", Messages: own[:n], Tools: testTools}, chatOptions{streamOptions: true})
			}
		}()
	}
	wg.Wait()
}

// loopHistory is a user message followed by n/2 BrowserRead calls and
// their results, as a long tool loop builds it.
func loopHistory(n int) []llm.Message {
	h := []llm.Message{{Role: llm.RoleUser, Content: "Please read the page, again and again."}}
	for i := 0; len(h) < n; i++ {
		id := fmt.Sprintf("call_%04d", i)
		h = append(h,
			llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: id, Name: "BrowserRead", Arguments: "{}"}}},
			llm.Message{Role: llm.RoleTool, ToolCallID: id, Content: strings.Repeat("Page text with \"quotes\" and <tags>.\n", 4)})
	}
	return h[:n]
}

// BenchmarkChatBodyToolLoop encodes the requests of a 200-call tool loop,
// each carrying the whole history so far; ns/op is per request.
func BenchmarkChatBodyToolLoop(b *testing.B) {
	h := loopHistory(401)
	tools := append([]llm.Tool(nil), testTools...)
	for i := 0; b.Loop(); i++ {
		e := newChatEncoder(FlavorCompatible)
		for n := 1; n <= len(h); n += 2 {
			body, err := e.prepare(llm.Request{Model: "loop", System: "be brief", Messages: h[:n], Tools: tools})
			if err != nil {
				b.Fatal(err)
			}
			// MarshalJSON, not json.Marshal: the SDK calls it directly,
			// and json.Marshal would compact the whole body once more.
			if _, err := body.params(chatOptions{streamOptions: true}).MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*201), "ns/request")
}

// BenchmarkChatBodyToolLoopSDK is the same loop with every message
// converted and encoded afresh for each request: the baseline.
func BenchmarkChatBodyToolLoopSDK(b *testing.B) {
	h := loopHistory(401)
	for b.Loop() {
		for n := 1; n <= len(h); n += 2 {
			req := llm.Request{Model: "loop", System: "be brief", Messages: h[:n], Tools: testTools}
			tools, err := chatTools(req.Tools)
			if err != nil {
				b.Fatal(err)
			}
			params := sdk.ChatCompletionNewParams{Model: req.Model, Messages: chatMessages(req, FlavorCompatible), Tools: tools}
			params.StreamOptions.IncludeUsage = sdk.Bool(true)
			if _, err := params.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*201), "ns/request")
}
