package openai

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/internal/call"
)

// responsesInput converts the conversation to Responses API input items.
// Unlike Chat Completions, a function call's output may carry images, so
// tool screenshots stay with their result.
//
// Reasoning items are not sent back: requests are stateless (store=false)
// and earlier reasoning is not replayed, which the API accepts at some cost
// in continuity.
func responsesInput(req llm.Request) (responses.ResponseInputParam, error) {
	var items responses.ResponseInputParam
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			items = append(items, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleSystem))
		case llm.RoleUser:
			if len(m.Images) == 0 {
				items = append(items, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleUser))
				continue
			}
			var content responses.ResponseInputMessageContentListParam
			if m.Content != "" {
				content = append(content, responses.ResponseInputContentParamOfInputText(m.Content))
			}
			for _, img := range m.Images {
				content = append(content, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
					Detail: responses.ResponseInputImageDetailAuto, ImageURL: param.NewOpt(dataURL(img)),
				}})
			}
			items = append(items, responses.ResponseInputItemParamOfMessage(content, responses.EasyInputMessageRoleUser))
		case llm.RoleAssistant:
			if m.Content != "" {
				items = append(items, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleAssistant))
			}
			for _, tc := range m.ToolCalls {
				args := tc.Arguments
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				items = append(items, responses.ResponseInputItemParamOfFunctionCall(args, tc.ID, tc.Name))
			}
		case llm.RoleTool:
			var item responses.ResponseInputItemUnionParam
			if len(m.Images) == 0 {
				item = responses.ResponseInputItemParamOfFunctionCallOutput(m.Content)
			} else {
				var out responses.ResponseFunctionCallOutputItemListParam
				if m.Content != "" {
					out = append(out, responses.ResponseFunctionCallOutputItemParamOfInputText(m.Content))
				}
				for _, img := range m.Images {
					out = append(out, responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: &responses.ResponseInputImageContentParam{
						Detail: responses.ResponseInputImageContentDetailAuto, ImageURL: param.NewOpt(dataURL(img)),
					}})
				}
				item = responses.ResponseInputItemParamOfFunctionCallOutput(out)
			}
			item.OfFunctionCallOutput.CallID = param.NewOpt(m.ToolCallID)
			items = append(items, item)
		}
	}
	return items, nil
}

func responsesTools(tools []llm.Tool) ([]responses.ToolUnionParam, error) {
	var out []responses.ToolUnionParam
	for _, t := range tools {
		schema, err := schemaMap(t)
		if err != nil {
			return nil, err
		}
		// Not strict: strict mode demands every property be required, which
		// our tools' optional arguments are not.
		tool := responses.ToolParamOfFunction(t.Name, schema, false)
		if t.Description != "" {
			tool.OfFunction.Description = param.NewOpt(t.Description)
		}
		out = append(out, tool)
	}
	return out, nil
}

func (p *Provider) responsesOnce(ctx context.Context, req llm.Request, input responses.ResponseInputParam,
	tools []responses.ToolUnionParam, adj call.Adjust, emit func(llm.Delta)) (call.Result, error) {
	params := responses.ResponseNewParams{
		Model: shared.ResponsesModel(req.Model),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input},
		Tools: tools,
		Store: sdk.Bool(false),
	}
	if req.System != "" {
		params.Instructions = sdk.String(req.System)
	}
	var sent call.Sent
	if effort := adjustedEffort(EffortValue(req.Model, req.Effort), adj); effort != "" {
		params.Reasoning.Effort = shared.ReasoningEffort(effort)
		sent.Effort = effort
	}
	if !adj.DropSummary {
		params.Reasoning.Summary = shared.ReasoningSummaryAuto
		sent.Summary = true
	}
	if t := TemperatureValue(req.Temperature); t != nil && !adj.DropTemperature {
		params.Temperature = sdk.Float(*t)
		sent.Temperature = true
	}

	stream := p.responses.NewStreaming(ctx, params)
	defer stream.Close()
	if err := stream.Err(); err != nil {
		return call.Result{Sent: sent}, err
	}
	acc := responsesAccumulator{chatAccumulator: chatAccumulator{emit: emit}, byItem: map[string]int{}}
	var failure error
	for failure == nil && stream.Next() {
		failure = acc.add(stream.Current())
	}
	res := call.Result{Completion: acc.completion(), Sent: sent, Emitted: acc.emitted}
	if failure != nil {
		return res, failure
	}
	if err := stream.Err(); err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		return res, streamFailure(err, acc.emitted)
	}
	if !acc.finished {
		return res, &call.StreamError{Reason: "the stream ended before the response completed"}
	}
	return res, nil
}

// responsesAccumulator assembles Responses API events.
type responsesAccumulator struct {
	chatAccumulator
	byItem        map[string]int // output item id → tool call position
	sawArgsDeltas map[int]bool
}

type outputItem struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type eventBody struct {
	Item     outputItem `json:"item"`
	Code     string     `json:"code"`
	Message  string     `json:"message"`
	Response struct {
		Status string `json:"status"`
		Error  *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Usage *struct {
			InputTokens         int `json:"input_tokens"`
			OutputTokens        int `json:"output_tokens"`
			OutputTokensDetails struct {
				ReasoningTokens int `json:"reasoning_tokens"`
			} `json:"output_tokens_details"`
		} `json:"usage"`
	} `json:"response"`
}

// add handles one event; it returns an error when the server reported that
// the response failed.
func (a *responsesAccumulator) add(ev responses.ResponseStreamEventUnion) error {
	switch ev.Type {
	case "response.output_text.delta", "response.refusal.delta":
		if ev.Delta != "" {
			a.text.WriteString(ev.Delta)
			a.send(llm.Delta{Kind: llm.TextDelta, Text: ev.Delta})
		}
		return nil
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if ev.Delta != "" {
			a.reasoning.WriteString(ev.Delta)
			a.send(llm.Delta{Kind: llm.ReasoningDelta, Text: ev.Delta})
		}
		return nil
	case "response.reasoning_summary_part.added":
		if a.reasoning.Len() > 0 {
			a.reasoning.WriteString("\n\n")
			a.send(llm.Delta{Kind: llm.ReasoningDelta, Text: "\n\n"})
		}
		return nil
	case "response.function_call_arguments.delta":
		if pos, ok := a.byItem[ev.ItemID]; ok && ev.Delta != "" {
			a.markArgs(pos)
			a.calls[pos].args.WriteString(ev.Delta)
			a.send(llm.Delta{Kind: llm.ToolCallDelta, ToolCall: llm.ToolCallFragment{Index: pos, Arguments: ev.Delta}})
		}
		return nil
	}

	var body eventBody
	if err := json.Unmarshal([]byte(ev.RawJSON()), &body); err != nil {
		return &call.StreamError{Reason: "the server sent an event that is not JSON", Err: err}
	}
	switch ev.Type {
	case "response.output_item.added":
		if body.Item.Type == "function_call" {
			pos := len(a.calls)
			c := &pendingCall{id: body.Item.CallID, name: body.Item.Name}
			c.args.WriteString(body.Item.Arguments)
			a.calls = append(a.calls, c)
			a.byItem[body.Item.ID] = pos
			a.send(llm.Delta{Kind: llm.ToolCallDelta, ToolCall: llm.ToolCallFragment{
				Index: pos, ID: c.id, Name: c.name, Arguments: body.Item.Arguments,
			}})
		}
	case "response.function_call_arguments.done", "response.output_item.done":
		// Arguments that arrived whole, without deltas.
		args := body.Item.Arguments
		id := ev.ItemID
		if ev.Type == "response.output_item.done" {
			id = body.Item.ID
		} else {
			args = ev.Arguments
		}
		if pos, ok := a.byItem[id]; ok && !a.sawArgsDeltas[pos] && args != "" && a.calls[pos].args.Len() == 0 {
			a.markArgs(pos)
			a.calls[pos].args.WriteString(args)
			a.send(llm.Delta{Kind: llm.ToolCallDelta, ToolCall: llm.ToolCallFragment{Index: pos, Arguments: args}})
		}
	case "response.completed", "response.incomplete":
		a.finished = true
		a.finish = "stop"
		if len(a.calls) > 0 {
			a.finish = "tool_calls"
		}
		if d := body.Response.IncompleteDetails; ev.Type == "response.incomplete" && d != nil {
			a.finish = "length"
			if d.Reason != "max_output_tokens" && d.Reason != "" {
				a.finish = d.Reason
			}
		}
		if u := body.Response.Usage; u != nil {
			a.usage = llm.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, ReasoningTokens: u.OutputTokensDetails.ReasoningTokens}
		}
	case "response.failed":
		code, msg := "", "the response failed"
		if e := body.Response.Error; e != nil {
			code, msg = e.Code, e.Message
		}
		return a.failure(code, msg)
	case "error":
		return a.failure(body.Code, body.Message)
	}
	return nil
}

func (a *responsesAccumulator) markArgs(pos int) {
	if a.sawArgsDeltas == nil {
		a.sawArgsDeltas = map[int]bool{}
	}
	a.sawArgsDeltas[pos] = true
}

// failure maps a failure the server reported inside the stream: before any
// output it is treated like the HTTP status it stands for, so rate limits
// and server errors are retried; after output it is a broken stream.
func (a *responsesAccumulator) failure(code, msg string) error {
	if a.emitted {
		return &call.StreamError{Reason: "the server reported an error mid-stream", Err: errors.New(msg)}
	}
	status := 400
	switch {
	case code == "rate_limit_exceeded":
		status = 429
	case code == "" || code == "server_error" || strings.Contains(code, "overloaded"):
		status = 500
	}
	return &call.HTTPError{Status: status, Message: msg}
}
