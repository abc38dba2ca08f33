package openai

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/internal/call"
)

// toolImagesNote introduces the images tools returned, which Chat
// Completions cannot carry in a tool message.
const toolImagesNote = "Images returned by the tool calls above:"

func assistantMessage(m llm.Message, f Flavor) (sdk.ChatCompletionMessageParamUnion, bool) {
	if m.Content == "" && len(m.ToolCalls) == 0 {
		return sdk.ChatCompletionMessageParamUnion{}, false // an interrupted turn that said nothing
	}
	var a sdk.ChatCompletionAssistantMessageParam
	if m.Content != "" {
		a.Content.OfString = sdk.String(m.Content)
	}
	for _, tc := range m.ToolCalls {
		args := tc.Arguments
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
				ID:       tc.ID,
				Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
			},
		})
	}
	// OpenRouter wants the reasoning_details it sent back unchanged (Gemini
	// and Anthropic models behind it refuse a tool continuation without
	// their signatures); the assembled array is replayed as it was kept.
	if f == FlavorOpenRouter {
		if d := m.ProviderData[providerDataKey]; d != "" && json.Valid([]byte(d)) {
			a.SetExtraFields(map[string]any{"reasoning_details": json.RawMessage(d)})
		}
	}
	return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}, true
}

func imagePart(img llm.Image) sdk.ChatCompletionContentPartUnionParam {
	return sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: dataURL(img)})
}

func dataURL(img llm.Image) string {
	mime := img.MIME
	if mime == "" {
		mime = "image/png"
	}
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
}

// schemaMap decodes a tool's JSON Schema; an empty schema means "no
// arguments".
func schemaMap(t llm.Tool) (map[string]any, error) {
	if len(t.Parameters) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(t.Parameters, &m); err != nil {
		return nil, fmt.Errorf("tool %q has a parameter schema that is not a JSON object: %v", t.Name, err)
	}
	return m, nil
}

func chatTools(tools []llm.Tool) ([]sdk.ChatCompletionToolUnionParam, error) {
	var out []sdk.ChatCompletionToolUnionParam
	for _, t := range tools {
		schema, err := schemaMap(t)
		if err != nil {
			return nil, err
		}
		def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schema)}
		if t.Description != "" {
			def.Description = sdk.String(t.Description)
		}
		out = append(out, sdk.ChatCompletionFunctionTool(def))
	}
	return out, nil
}

// chatOnce sends one Chat Completions request and streams its answer.
func (p *Provider) chatOnce(ctx context.Context, req llm.Request, body *chatBody, adj call.Adjust, emit func(llm.Delta)) (call.Result, error) {
	var o chatOptions
	var sent call.Sent
	if effort := adjustedEffort(EffortValue(req.Model, req.Effort), adj); effort != "" {
		o.effort = effort
		sent.Effort = effort
	}
	if t := TemperatureValue(req.Temperature); t != nil && !adj.DropTemperature {
		o.temperature = t
		sent.Temperature = true
	}
	// Every server we know accepts stream_options; one that rejects it is
	// retried without (the usage figures are then simply missing).
	if !adj.DropStreamOptions {
		o.streamOptions = true
		sent.StreamOptions = true
	}

	// The SDK's stream ends silently on "data: [DONE]"; done sees the
	// marker go by, so that a clean end and a cut connection differ.
	var done doneWatch
	stream := p.chat.NewStreaming(ctx, body.params(o), option.WithMiddleware(done.middleware))
	defer stream.Close()
	if err := stream.Err(); err != nil {
		return call.Result{Sent: sent}, err
	}
	acc := chatAccumulator{emit: emit, byIndex: map[int64]int{}}
	if p.cfg.Flavor == FlavorOpenRouter {
		acc.details = &reasoningDetails{}
	}
	for stream.Next() {
		ch := stream.Current()
		acc.add(&ch)
	}
	res := call.Result{Completion: acc.completion(), Sent: sent, Emitted: acc.emitted}
	if err := stream.Err(); err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		return res, streamFailure(err, acc.emitted)
	}
	if !acc.finished && !done.seen {
		return res, &call.StreamError{Reason: "the stream ended before the model finished"}
	}
	return res, nil
}

// doneWatch notices the "data: [DONE]" line that ends a Chat Completions
// stream. The SDK consumes it silently, which makes a clean end and a
// connection cut short look the same; a stream is complete when it carried
// a finish_reason or this marker.
type doneWatch struct{ seen bool }

func (d *doneWatch) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	// The request gets a context of its own, so that the wait for the
	// response's end after the marker can be cut short (see drain).
	ctx, cancel := context.WithCancel(req.Context())
	res, err := next(req.WithContext(ctx))
	if err != nil || res == nil || res.Body == nil {
		cancel()
		return res, err
	}
	res.Body = &doneReader{ReadCloser: res.Body, seen: &d.seen, cancel: cancel}
	return res, err
}

var doneMarker = []byte("data: [DONE]")

// doneReader scans the body for the marker as the SDK reads it, keeping a
// short tail so a marker split across reads is still found.
type doneReader struct {
	io.ReadCloser
	seen *bool
	tail []byte
	eof  bool
	// cancel ends the request's context; nil in tests that read a body
	// without a request.
	cancel context.CancelFunc
}

// Read passes the body through, watching for the marker.
func (r *doneReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if n > 0 && !*r.seen {
		buf := append(r.tail, p[:n]...)
		if bytes.Contains(buf, doneMarker) {
			*r.seen = true
		}
		keep := min(len(buf), len(doneMarker)-1)
		r.tail = append(r.tail[:0], buf[len(buf)-keep:]...)
	}
	if err == io.EOF {
		r.eof = true
	}
	return n, err
}

// Close drains what follows the marker before closing, then releases the
// request's context.
func (r *doneReader) Close() error {
	if *r.seen && !r.eof && r.cancel != nil {
		r.drain()
	}
	err := r.ReadCloser.Close()
	if r.cancel != nil {
		r.cancel()
	}
	return err
}

// The SDK stops reading at the marker, before the end of the response
// (over HTTP/1.1, the chunked body's last chunk), and net/http does not
// reuse a connection whose response was closed unread: the next request
// then opens a new connection (a new TLS handshake, for a remote server).
// Servers end the response right after the marker, so its end is usually
// in flight already. drain reads up to drainBytes for up to drainWait to
// reach it; a server that keeps the response open longer costs that wait
// once per request, and its connection is dropped as before.
const (
	drainBytes = 4 << 10
	drainWait  = 20 * time.Millisecond
)

func (r *doneReader) drain() {
	// Cancelling the request's context is what interrupts a read that
	// waits: the transport then closes the connection.
	stop := time.AfterFunc(drainWait, r.cancel)
	defer stop.Stop()
	var buf [512]byte
	for read := 0; read < drainBytes; {
		n, err := r.ReadCloser.Read(buf[:])
		read += n
		if err != nil {
			return
		}
	}
}

func adjustedEffort(effort string, adj call.Adjust) string {
	switch {
	case effort == "":
		return ""
	case adj.DropEffort:
		return ""
	case adj.Effort != "":
		return adj.Effort
	}
	return effort
}

// streamFailure classifies an error that ended a started stream. A server
// error event that arrives before anything was shown (OpenRouter reports
// upstream failures this way) is retried like the HTTP status it carries;
// anything else is a broken stream.
func streamFailure(err error, emitted bool) error {
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		var body struct {
			Error struct {
				Code    any    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(se.Event.Data, &body) == nil {
			status := 0
			if c, ok := body.Error.Code.(float64); ok {
				status = int(c)
			}
			if !emitted && (status == 429 || status >= 500) {
				return &call.HTTPError{Status: status, Message: body.Error.Message}
			}
			if body.Error.Message != "" {
				return &call.StreamError{Reason: "the server reported an error mid-stream", Err: errors.New(body.Error.Message)}
			}
		}
		return &call.StreamError{Reason: "the server reported an error mid-stream", Err: err}
	}
	return &call.StreamError{Reason: "the stream failed", Err: err}
}

// chatAccumulator assembles streamed chunks and forwards deltas.
type chatAccumulator struct {
	emit      func(llm.Delta)
	text      strings.Builder
	reasoning strings.Builder
	calls     []*pendingCall
	byIndex   map[int64]int // the server's tool call index → position in calls
	finish    string
	usage     llm.Usage
	emitted   bool
	finished  bool
	// details assembles OpenRouter's reasoning_details (nil elsewhere).
	details *reasoningDetails
}

type pendingCall struct {
	id, name string
	args     strings.Builder
}

func (a *chatAccumulator) send(d llm.Delta) {
	a.emitted = true
	a.emit(d)
}

// add takes in one chunk as the SDK decoded it.
func (a *chatAccumulator) add(ch *sdk.ChatCompletionChunk) {
	if ch.JSON.Usage.Valid() {
		a.usage = llm.Usage{
			InputTokens:     int(ch.Usage.PromptTokens),
			OutputTokens:    int(ch.Usage.CompletionTokens),
			ReasoningTokens: int(ch.Usage.CompletionTokensDetails.ReasoningTokens),
		}
	}
	for i := range ch.Choices {
		c := &ch.Choices[i]
		if c.Index != 0 {
			continue // we never ask for n > 1
		}
		if a.details != nil {
			a.details.add(&c.Delta)
		}
		if r := reasoningText(&c.Delta); r != "" {
			a.reasoning.WriteString(r)
			a.send(llm.Delta{Kind: llm.ReasoningDelta, Text: r})
		}
		for _, s := range []string{c.Delta.Content, c.Delta.Refusal} {
			if s != "" {
				a.text.WriteString(s)
				a.send(llm.Delta{Kind: llm.TextDelta, Text: s})
			}
		}
		for j := range c.Delta.ToolCalls {
			a.toolFragment(&c.Delta.ToolCalls[j])
		}
		if c.FinishReason != "" {
			a.finish = c.FinishReason
			a.finished = true
		}
	}
}

// reasoningText reads the reasoning a compatible server put in the delta:
// reasoning_content (DeepSeek, vLLM, llama.cpp, LM Studio) or reasoning
// (Ollama, OpenRouter). Neither is in the SDK's typed struct, which keeps
// them among its extra fields.
func reasoningText(d *sdk.ChatCompletionChunkChoiceDelta) string {
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

// toolFragment adds one piece of a streamed tool call. Fragments are
// matched by the server's index; servers that omit the index (or reuse one
// for a call with a new id) still get their calls kept apart. The SDK's
// own accumulator matches by index alone, which merges such calls.
func (a *chatAccumulator) toolFragment(tc *sdk.ChatCompletionChunkChoiceDeltaToolCall) {
	hasIndex := tc.JSON.Index.Valid()
	pos, known := -1, false
	if hasIndex {
		pos, known = a.byIndex[tc.Index]
	}
	switch {
	case known && tc.ID != "" && a.calls[pos].id != "" && tc.ID != a.calls[pos].id:
		known = false
	case !known && !hasIndex && tc.ID == "" && len(a.calls) > 0:
		pos, known = len(a.calls)-1, true
	}
	if !known {
		pos = len(a.calls)
		a.calls = append(a.calls, &pendingCall{})
		if hasIndex {
			a.byIndex[tc.Index] = pos
		}
	}
	c := a.calls[pos]
	frag := llm.ToolCallFragment{Index: pos, Arguments: tc.Function.Arguments}
	if tc.ID != "" && c.id == "" {
		c.id, frag.ID = tc.ID, tc.ID
	}
	if tc.Function.Name != "" && c.name == "" {
		c.name, frag.Name = tc.Function.Name, tc.Function.Name
	}
	c.args.WriteString(tc.Function.Arguments)
	a.send(llm.Delta{Kind: llm.ToolCallDelta, ToolCall: frag})
}

func (a *chatAccumulator) completion() llm.Completion {
	c := llm.Completion{
		Text:         a.text.String(),
		Reasoning:    a.reasoning.String(),
		ToolCalls:    finishCalls(a.calls),
		FinishReason: a.finish,
		Usage:        a.usage,
	}
	if a.details != nil {
		if d := a.details.json(); d != "" {
			c.ProviderData = map[string]string{providerDataKey: d}
		}
	}
	return c
}

// finishCalls turns pending calls into tool calls, giving an id to calls a
// server sent without one (tool results are matched by id).
func finishCalls(calls []*pendingCall) []llm.ToolCall {
	var out []llm.ToolCall
	for _, c := range calls {
		id := c.id
		if id == "" {
			id = newCallID()
		}
		args := c.args.String()
		if strings.TrimSpace(args) == "" {
			args = "{}"
		}
		out = append(out, llm.ToolCall{ID: id, Name: c.name, Arguments: args})
	}
	return out
}

func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
