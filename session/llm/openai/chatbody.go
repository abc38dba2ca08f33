package openai

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/infer-workspace/infer/session/llm"
)

// Chat Completions requests are built from the SDK's params, and every
// part of them is encoded by the SDK's marshaller. What this file adds is
// reuse: each request carries the whole conversation, and an agent turn
// sends one request per tool call, so the history is sent again and again
// with one or two messages more each time. Re-encoding it reflectively took
// about a third of the CPU of a long tool loop. So each message is turned
// into its SDK param and marshalled once; later requests carry that JSON
// back into the params with param.Override, which the SDK's encoder writes
// out as it is.
//
// Reuse rests on messages being values: once a message is in a history its
// strings never change, and neither do the bytes of its images. A message
// is reused when it equals (field by field) the one encoded before, which
// costs next to nothing when both share their strings, as the copies of a
// history do.

// maxHistories is how many recently sent histories keep their encoding:
// one for a running turn, room for title requests and a second front end.
const maxHistories = 4

// chatEncoder builds Chat Completions params, reusing the JSON of messages
// it encoded for earlier requests. It is safe for concurrent use.
type chatEncoder struct {
	flavor Flavor

	mu sync.Mutex
	// recent holds the latest histories, most recently used first. Their
	// message slices are only ever appended to in place (past every length
	// handed out), so a caller may read a slice it got without the lock.
	recent []*encodedHistory
	system *encodedText
	tools  encodedTools
}

type encodedHistory struct{ msgs []encodedMessage }

// encodedMessage is one history message and the SDK's JSON of it.
type encodedMessage struct {
	src llm.Message
	// element is the SDK's encoding of the message's param, or nil for a
	// message that is not sent (an assistant message that said nothing).
	element []byte
	// param carries element back to the SDK. It is built once with the
	// encoding, so that a request copies it rather than wrapping the JSON
	// again (an allocation per message and request).
	param sdk.ChatCompletionMessageParamUnion
	// images are the SDK's encodings of a tool message's image parts:
	// Chat Completions tool messages carry text only, so they are sent in
	// a user message after the run of tool messages (see messages), and
	// imageParams carry them back as param does element.
	images      [][]byte
	imageParams []sdk.ChatCompletionContentPartUnionParam
}

type encodedText struct {
	text  string
	json  []byte
	param sdk.ChatCompletionMessageParamUnion
}

type encodedTools struct {
	src    []llm.Tool
	params []sdk.ChatCompletionToolUnionParam // overrides over each tool's JSON
}

func newChatEncoder(f Flavor) *chatEncoder { return &chatEncoder{flavor: f} }

// chatBody is what a request's params are built from, prepared once per
// Stream call and reused by its retries.
type chatBody struct {
	model    string
	messages []sdk.ChatCompletionMessageParamUnion
	tools    []sdk.ChatCompletionToolUnionParam
	// history is kept for the tests, which check what was reused.
	history []encodedMessage
}

// chatOptions are the per-attempt parts of a request: what the retry policy
// may drop or change between attempts.
type chatOptions struct {
	effort        string
	temperature   *float64
	streamOptions bool
}

// params returns the request's SDK params for one attempt.
func (b *chatBody) params(o chatOptions) sdk.ChatCompletionNewParams {
	p := sdk.ChatCompletionNewParams{Model: b.model, Messages: b.messages, Tools: b.tools}
	if o.effort != "" {
		p.ReasoningEffort = shared.ReasoningEffort(o.effort)
	}
	if o.temperature != nil {
		p.Temperature = sdk.Float(*o.temperature)
	}
	if o.streamOptions {
		p.StreamOptions.IncludeUsage = sdk.Bool(true)
	}
	return p
}

// prepare converts req. It fails only on a tool whose schema is not a JSON
// object, or a message the SDK cannot encode.
func (e *chatEncoder) prepare(req llm.Request) (chatBody, error) {
	b := chatBody{model: req.Model}
	var system *encodedText
	var err error
	if req.System != "" {
		if system, err = e.systemJSON(req.System); err != nil {
			return b, err
		}
	}
	if b.tools, err = e.toolParams(req.Tools); err != nil {
		return b, err
	}
	if b.history, err = e.history(req.Messages); err != nil {
		return b, err
	}
	b.messages = messages(system, b.history)
	return b, nil
}

// encoded carries JSON the SDK encoded earlier back into a param; the
// SDK's encoder writes an override out unchanged.
func encoded[T param.ParamStruct, PtrT param.InferPtr[T]](data []byte) T {
	return param.Override[T, PtrT](json.RawMessage(data))
}

func (e *chatEncoder) systemJSON(text string) (*encodedText, error) {
	e.mu.Lock()
	if e.system != nil && e.system.text == text {
		defer e.mu.Unlock()
		return e.system, nil
	}
	e.mu.Unlock()
	data, err := json.Marshal(sdk.SystemMessage(text))
	if err != nil {
		return nil, fmt.Errorf("encoding the system prompt: %w", err)
	}
	// A new value rather than an update in place: a request being built
	// may still hold the one it got.
	sys := &encodedText{text: text, json: data, param: encoded[sdk.ChatCompletionMessageParamUnion](data)}
	e.mu.Lock()
	e.system = sys
	e.mu.Unlock()
	return sys, nil
}

// toolParams returns the tools' params, each carrying the SDK's JSON of
// its definition: the schemas are maps, the costliest part to encode.
func (e *chatEncoder) toolParams(tools []llm.Tool) ([]sdk.ChatCompletionToolUnionParam, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	e.mu.Lock()
	if e.tools.params != nil && slices.EqualFunc(e.tools.src, tools, sameTool) {
		defer e.mu.Unlock()
		return e.tools.params, nil
	}
	e.mu.Unlock()
	defs, err := chatTools(tools)
	if err != nil {
		return nil, err
	}
	params := make([]sdk.ChatCompletionToolUnionParam, len(defs))
	for i, d := range defs {
		data, err := json.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("encoding the definition of tool %q: %w", tools[i].Name, err)
		}
		params[i] = encoded[sdk.ChatCompletionToolUnionParam](data)
	}
	e.mu.Lock()
	// The tools are copied because their Parameters are byte slices a
	// caller could reuse; the copy is what later requests compare with.
	src := slices.Clone(tools)
	for i := range src {
		src[i].Parameters = slices.Clone(src[i].Parameters)
	}
	e.tools = encodedTools{src: src, params: params}
	e.mu.Unlock()
	return params, nil
}

func sameTool(a, b llm.Tool) bool {
	return a.Name == b.Name && a.Description == b.Description && string(a.Parameters) == string(b.Parameters)
}

// history returns msgs encoded, reusing the longest prefix of a recently
// encoded history and encoding only the messages after it.
func (e *chatEncoder) history(msgs []llm.Message) ([]encodedMessage, error) {
	e.mu.Lock()
	var best *encodedHistory
	reused := 0
	for _, h := range e.recent {
		if n := commonPrefix(h.msgs, msgs); n > reused {
			best, reused = h, n
		}
	}
	var prefix []encodedMessage
	if best != nil {
		prefix = best.msgs[:reused:reused]
		e.touch(best)
	}
	e.mu.Unlock()
	if reused == len(msgs) {
		return prefix, nil
	}

	fresh := make([]encodedMessage, len(msgs)-reused)
	for i, m := range msgs[reused:] {
		em, err := encodeMessage(m, e.flavor)
		if err != nil {
			return nil, err
		}
		fresh[i] = em
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	at := slices.Index(e.recent, best)
	if at >= 0 && len(best.msgs) == reused {
		// The usual case: the same history with the turn's new messages.
		// Appending in place writes only past every slice handed out.
		best.msgs = append(best.msgs, fresh...)
		e.touch(best)
		return best.msgs[:len(msgs):len(msgs)], nil
	}
	all := make([]encodedMessage, 0, len(msgs)+len(msgs)/4+8)
	all = append(append(all, prefix...), fresh...)
	h := &encodedHistory{msgs: all}
	if at >= 0 {
		// The history it continued diverged (an earlier message changed,
		// say images were dropped), so that one is not asked for again.
		e.recent[at] = h
		e.touch(h)
	} else {
		e.recent = slices.Insert(e.recent, 0, h)
		if len(e.recent) > maxHistories {
			clear(e.recent[maxHistories:])
			e.recent = e.recent[:maxHistories]
		}
	}
	return all[:len(msgs):len(msgs)], nil
}

// touch moves h to the front of recent; the caller holds mu.
func (e *chatEncoder) touch(h *encodedHistory) {
	if i := slices.Index(e.recent, h); i > 0 {
		copy(e.recent[1:i+1], e.recent[:i])
		e.recent[0] = h
	}
}

// commonPrefix counts the leading messages of msgs that enc already holds.
func commonPrefix(enc []encodedMessage, msgs []llm.Message) int {
	n := min(len(enc), len(msgs))
	for i := range n {
		if !sameMessage(&enc[i].src, &msgs[i]) {
			return i
		}
	}
	return n
}

// sameMessage compares what a message's encoding depends on. Equal strings
// that share memory compare in constant time.
func sameMessage(a, b *llm.Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.ToolCallID == b.ToolCallID &&
		a.Reasoning == b.Reasoning &&
		a.ProviderData[providerDataKey] == b.ProviderData[providerDataKey] &&
		slices.Equal(a.ToolCalls, b.ToolCalls) &&
		slices.EqualFunc(a.Images, b.Images, func(x, y llm.Image) bool {
			return x.MIME == y.MIME && string(x.Data) == string(y.Data)
		})
}

// messageParam converts one message to its SDK param; false means the
// message is not sent. A tool message's images are not part of it (see
// encodeMessage).
func messageParam(m llm.Message, f Flavor) (sdk.ChatCompletionMessageParamUnion, bool) {
	switch m.Role {
	case llm.RoleSystem:
		return sdk.SystemMessage(m.Content), true
	case llm.RoleUser:
		if len(m.Images) == 0 {
			return sdk.UserMessage(m.Content), true
		}
		var parts []sdk.ChatCompletionContentPartUnionParam
		if m.Content != "" {
			parts = append(parts, sdk.TextContentPart(m.Content))
		}
		for _, img := range m.Images {
			parts = append(parts, imagePart(img))
		}
		return sdk.UserMessage(parts), true
	case llm.RoleAssistant:
		return assistantMessage(m, f)
	case llm.RoleTool:
		content := m.Content
		if content == "" {
			content = "(no output)"
		}
		return sdk.ToolMessage(content, m.ToolCallID), true
	}
	return sdk.ChatCompletionMessageParamUnion{}, false
}

// encodeMessage marshals one message's param, and a tool message's image
// parts, with the SDK's marshaller.
func encodeMessage(m llm.Message, f Flavor) (encodedMessage, error) {
	em := encodedMessage{src: m}
	// The tool calls and images are copied: the comparison with later
	// requests must see them as they were encoded.
	em.src.ToolCalls = slices.Clone(m.ToolCalls)
	em.src.Images = slices.Clone(m.Images)
	if p, send := messageParam(m, f); send {
		data, err := json.Marshal(p)
		if err != nil {
			return em, fmt.Errorf("encoding a %s message: %w", m.Role, err)
		}
		em.element = data
		em.param = encoded[sdk.ChatCompletionMessageParamUnion](data)
	}
	if m.Role == llm.RoleTool {
		for _, img := range m.Images {
			part, err := json.Marshal(imagePart(img))
			if err != nil {
				return em, fmt.Errorf("encoding an image of tool call %s: %w", m.ToolCallID, err)
			}
			em.images = append(em.images, part)
			em.imageParams = append(em.imageParams, encoded[sdk.ChatCompletionContentPartUnionParam](part))
		}
	}
	return em, nil
}

// messages lays out the request's messages: the system prompt, then the
// history, with the images of each run of tool messages in one user
// message after the run, because tool messages must directly follow the
// assistant message that called them.
func messages(system *encodedText, history []encodedMessage) []sdk.ChatCompletionMessageParamUnion {
	out := make([]sdk.ChatCompletionMessageParamUnion, 0, len(history)+2)
	if system != nil {
		out = append(out, system.param)
	}
	var pending []sdk.ChatCompletionContentPartUnionParam
	flush := func() {
		if len(pending) == 0 {
			return
		}
		parts := append([]sdk.ChatCompletionContentPartUnionParam{sdk.TextContentPart(toolImagesNote)}, pending...)
		out = append(out, sdk.UserMessage(parts))
		pending = nil
	}
	for i := range history {
		m := &history[i]
		if m.src.Role != llm.RoleTool {
			flush()
		}
		if m.element != nil {
			out = append(out, m.param)
		}
		pending = append(pending, m.imageParams...)
	}
	flush()
	if len(out) == 0 {
		return nil // the SDK leaves "messages" out only when the slice is nil
	}
	return out
}
