package openai

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	sdk "github.com/openai/openai-go/v3"

	"github.com/infer-workspace/infer/session/llm"
)

// Chat Completions requests are encoded here rather than by the SDK.
//
// Every request carries the whole conversation, and an agent turn sends one
// request per tool call, so the history is sent again and again with one or
// two messages more each time. The SDK's reflective encoder took about a
// third of the CPU of a long tool loop re-encoding messages it had already
// encoded. The encoder below converts each message with the SDK's own types
// and encoder once, keeps the JSON, and assembles each request body from
// those pieces; the SDK still sends the request and reads the stream
// (see chatOnce).
//
// Reuse rests on messages being values: once a message is in a history its
// strings never change, and neither do the bytes of its images. A message
// is reused when it equals (field by field) the one encoded before, which
// costs next to nothing when both share their strings, as the copies of a
// history do.

// maxHistories is how many recently sent histories keep their encoding:
// one for a running turn, room for title requests and a second front end.
const maxHistories = 4

// chatEncoder encodes Chat Completions request bodies, reusing the JSON of
// messages it encoded for earlier requests. It is safe for concurrent use.
type chatEncoder struct {
	flavor Flavor

	mu sync.Mutex
	// recent holds the latest histories, most recently used first. Their
	// message slices are only ever appended to in place (past every length
	// handed out), so a caller may read a slice it got without the lock.
	recent []*encodedHistory
	system encodedText
	tools  encodedTools
}

type encodedHistory struct{ msgs []encodedMessage }

// encodedMessage is one history message and the JSON it becomes.
type encodedMessage struct {
	src llm.Message
	// element is the message as one element of "messages", or nil for a
	// message that is not sent (an assistant message that said nothing).
	element []byte
	// images are a tool message's image parts, comma-separated: Chat
	// Completions tool messages carry text only, so they are sent in a
	// user message after the run of tool messages (see appendMessages).
	images []byte
}

type encodedText struct {
	text string
	json []byte
}

type encodedTools struct {
	src  []llm.Tool
	json []byte // the "tools" array, nil for none
}

func newChatEncoder(f Flavor) *chatEncoder { return &chatEncoder{flavor: f} }

// chatBody is what a request body is assembled from, encoded once per
// Stream call and reused by its retries.
type chatBody struct {
	model   string
	system  []byte // the system message element, or nil
	history []encodedMessage
	tools   []byte
}

// prepare encodes what req's body needs. It fails only on a tool whose
// schema is not a JSON object, or a message the SDK cannot encode.
func (e *chatEncoder) prepare(req llm.Request) (chatBody, error) {
	b := chatBody{model: req.Model}
	var err error
	if req.System != "" {
		if b.system, err = e.systemJSON(req.System); err != nil {
			return b, err
		}
	}
	if b.tools, err = e.toolsJSON(req.Tools); err != nil {
		return b, err
	}
	b.history, err = e.history(req.Messages)
	return b, err
}

func (e *chatEncoder) systemJSON(text string) ([]byte, error) {
	e.mu.Lock()
	if e.system.json != nil && e.system.text == text {
		defer e.mu.Unlock()
		return e.system.json, nil
	}
	e.mu.Unlock()
	data, err := json.Marshal(sdk.SystemMessage(text))
	if err != nil {
		return nil, fmt.Errorf("encoding the system prompt: %w", err)
	}
	e.mu.Lock()
	e.system = encodedText{text: text, json: data}
	e.mu.Unlock()
	return data, nil
}

func (e *chatEncoder) toolsJSON(tools []llm.Tool) ([]byte, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	e.mu.Lock()
	if e.tools.json != nil && slices.EqualFunc(e.tools.src, tools, sameTool) {
		defer e.mu.Unlock()
		return e.tools.json, nil
	}
	e.mu.Unlock()
	params, err := chatTools(tools)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encoding the tool definitions: %w", err)
	}
	e.mu.Lock()
	// The tools are copied because their Parameters are byte slices a
	// caller could reuse; the copy is what later requests compare with.
	src := slices.Clone(tools)
	for i := range src {
		src[i].Parameters = slices.Clone(src[i].Parameters)
	}
	e.tools = encodedTools{src: src, json: data}
	e.mu.Unlock()
	return data, nil
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
		slices.Equal(a.ToolCalls, b.ToolCalls) &&
		slices.EqualFunc(a.Images, b.Images, func(x, y llm.Image) bool {
			return x.MIME == y.MIME && string(x.Data) == string(y.Data)
		})
}

// encodeMessage converts one message with the SDK's types and encoder,
// exactly as a whole request would be converted (see chatMessages in the
// tests, which the encoder is checked against).
func encodeMessage(m llm.Message, f Flavor) (encodedMessage, error) {
	em := encodedMessage{src: m}
	// The tool calls are copied: the comparison with later requests must
	// see them as they were encoded.
	em.src.ToolCalls = slices.Clone(m.ToolCalls)
	em.src.Images = slices.Clone(m.Images)
	if len(m.Images) == 0 {
		em.element = plainMessage(m, f)
		return em, nil
	}
	var (
		param sdk.ChatCompletionMessageParamUnion
		send  = true
	)
	switch m.Role {
	case llm.RoleSystem:
		param = sdk.SystemMessage(m.Content)
	case llm.RoleUser:
		if len(m.Images) == 0 {
			param = sdk.UserMessage(m.Content)
			break
		}
		var parts []sdk.ChatCompletionContentPartUnionParam
		if m.Content != "" {
			parts = append(parts, sdk.TextContentPart(m.Content))
		}
		for _, img := range m.Images {
			parts = append(parts, imagePart(img))
		}
		param = sdk.UserMessage(parts)
	case llm.RoleAssistant:
		param, send = assistantMessage(m, f)
	case llm.RoleTool:
		content := m.Content
		if content == "" {
			content = "(no output)"
		}
		param = sdk.ToolMessage(content, m.ToolCallID)
		for i, img := range m.Images {
			part, err := json.Marshal(imagePart(img))
			if err != nil {
				return em, fmt.Errorf("encoding an image of tool call %s: %w", m.ToolCallID, err)
			}
			if i > 0 {
				em.images = append(em.images, ',')
			}
			em.images = append(em.images, part...)
		}
	default:
		send = false
	}
	if send {
		data, err := json.Marshal(param)
		if err != nil {
			return em, fmt.Errorf("encoding a %s message: %w", m.Role, err)
		}
		em.element = data
	}
	return em, nil
}

// plainMessage encodes a message without images, or returns nil for one
// that is not sent. These are nearly all the messages of a conversation,
// and the SDK's reflective encoder spent about 15 µs on each, so they are
// written here, as the SDK writes them (the tests compare the two).
func plainMessage(m llm.Message, f Flavor) []byte {
	var b []byte
	switch m.Role {
	case llm.RoleSystem, llm.RoleUser:
		b = append(b, `{"role":"`...)
		b = append(b, m.Role...)
		b = append(b, `","content":`...)
		b = appendString(b, m.Content)
	case llm.RoleTool:
		content := m.Content
		if content == "" {
			content = "(no output)"
		}
		b = append(b, `{"role":"tool","content":`...)
		b = appendString(b, content)
		b = append(b, `,"tool_call_id":`...)
		b = appendString(b, m.ToolCallID)
	case llm.RoleAssistant:
		if m.Content == "" && len(m.ToolCalls) == 0 {
			return nil // an interrupted turn that said nothing
		}
		b = append(b, `{"role":"assistant"`...)
		if m.Content != "" {
			b = append(b, `,"content":`...)
			b = appendString(b, m.Content)
		}
		for i, tc := range m.ToolCalls {
			if i == 0 {
				b = append(b, `,"tool_calls":[`...)
			} else {
				b = append(b, ',')
			}
			args := tc.Arguments
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			b = append(b, `{"type":"function","id":`...)
			b = appendString(b, tc.ID)
			b = append(b, `,"function":{"name":`...)
			b = appendString(b, tc.Name)
			b = append(b, `,"arguments":`...)
			b = appendString(b, args)
			b = append(b, "}}"...)
		}
		if len(m.ToolCalls) > 0 {
			b = append(b, ']')
		}
		// See assistantMessage: only Ollama reads earlier reasoning back.
		if f == FlavorOllama && m.Reasoning != "" {
			b = append(b, `,"reasoning":`...)
			b = appendString(b, m.Reasoning)
		}
	default:
		return nil
	}
	return append(b, '}')
}

// toolImagesOpening starts the user message that carries the images of a
// run of tool messages: everything up to its first image part.
var toolImagesOpening = func() []byte {
	note, err := json.Marshal(sdk.TextContentPart(toolImagesNote))
	if err != nil {
		panic(err) // a constant text part always encodes
	}
	return append([]byte(`{"role":"user","content":[`), note...)
}()

const toolImagesClosing = `]}`

// size is an upper bound on the body's length, so it is built in one
// allocation.
func (b *chatBody) size() int {
	n := 256 + 2*len(b.model) + len(b.system) + len(b.tools) + len(toolImagesOpening)
	for i := range b.history {
		m := &b.history[i]
		n += len(m.element) + len(m.images) + 2
		if len(m.images) > 0 {
			n += len(toolImagesOpening) + len(toolImagesClosing)
		}
	}
	return n
}

// chatOptions are the per-attempt parts of a request: what the retry policy
// may drop or change between attempts.
type chatOptions struct {
	effort        string
	temperature   *float64
	streamOptions bool
}

// encode assembles the request body.
func (b *chatBody) encode(o chatOptions) []byte {
	buf := make([]byte, 0, b.size())
	buf = append(buf, `{"stream":true,"model":`...)
	buf = appendString(buf, b.model)
	// The SDK leaves "messages" out when there are none; so does this.
	start := len(buf)
	buf = append(buf, `,"messages":[`...)
	opened := len(buf)
	if buf = b.appendMessages(buf); len(buf) > opened {
		buf = append(buf, ']')
	} else {
		buf = buf[:start]
	}
	if b.tools != nil {
		buf = append(buf, `,"tools":`...)
		buf = append(buf, b.tools...)
	}
	if o.effort != "" {
		buf = append(buf, `,"reasoning_effort":`...)
		buf = appendString(buf, o.effort)
	}
	if o.temperature != nil {
		buf = append(buf, `,"temperature":`...)
		buf = appendFloat(buf, *o.temperature)
	}
	if o.streamOptions {
		buf = append(buf, `,"stream_options":{"include_usage":true}`...)
	}
	return append(buf, '}')
}

// appendMessages appends the elements of the "messages" array,
// comma-separated. The images of a run of tool messages follow the run as
// one user message, because tool messages must directly follow the
// assistant message that called them.
func (b *chatBody) appendMessages(buf []byte) []byte {
	first := true
	sep := func() {
		if !first {
			buf = append(buf, ',')
		}
		first = false
	}
	if b.system != nil {
		sep()
		buf = append(buf, b.system...)
	}
	runStart := -1 // the first tool message with images in the current run
	flush := func(end int) {
		if runStart < 0 {
			return
		}
		sep()
		buf = append(buf, toolImagesOpening...)
		for _, m := range b.history[runStart:end] {
			if len(m.images) > 0 {
				buf = append(buf, ',')
				buf = append(buf, m.images...)
			}
		}
		buf = append(buf, toolImagesClosing...)
		runStart = -1
	}
	for i := range b.history {
		m := &b.history[i]
		if m.src.Role != llm.RoleTool {
			flush(i)
		}
		if m.element != nil {
			sep()
			buf = append(buf, m.element...)
		}
		if len(m.images) > 0 && runStart < 0 {
			runStart = i
		}
	}
	flush(len(b.history))
	return buf
}

// appendString writes s as a JSON string. Bytes that are not UTF-8 become
// U+FFFD, as encoding/json makes them; unlike it, "<", ">" and "&" are
// written as they are, which JSON allows.
func appendString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// appendFloat writes f as a JSON number. Temperatures are checked to be
// within 0 and 2 before a request is made, so f is always finite.
func appendFloat(buf []byte, f float64) []byte {
	return strconv.AppendFloat(buf, f, 'g', -1, 64)
}
