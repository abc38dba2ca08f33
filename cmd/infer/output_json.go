package main

import (
	"encoding/json"
	"io"

	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/llm"
)

// jsonSchemaVersion is the version of the --output json line schema
// (docs/headless.md). Adding a field or a line type keeps the version;
// renaming, removing or changing the meaning of one bumps it.
const jsonSchemaVersion = 1

// jsonOutput is the --output json format: one object per line. The first
// line is always run_started (carrying the schema version) and the last is
// always run_finished or run_error, so a reader can rely on both.
type jsonOutput struct {
	enc         *json.Encoder
	model, mode string
	resumed     bool

	started         bool
	threadID, runID string
}

func newJSONOutput(out io.Writer, model, mode string, resumed bool) *jsonOutput {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false) // tool output is shown, not embedded in HTML
	return &jsonOutput{enc: enc, model: model, mode: mode, resumed: resumed}
}

// The line types, as structs so that field order is stable.
type (
	jsonRunStarted struct {
		Type           string `json:"type"`
		Schema         int    `json:"schema"`
		ConversationID string `json:"conversation_id"`
		RunID          string `json:"run_id"`
		Model          string `json:"model"`
		Mode           string `json:"mode"`
		Resumed        bool   `json:"resumed"`
	}
	jsonDelta struct {
		Type      string `json:"type"`
		MessageID string `json:"message_id"`
		Delta     string `json:"delta"`
	}
	jsonToolCall struct {
		Type      string `json:"type"`
		ID        string `json:"id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	jsonToolResult struct {
		Type       string `json:"type"`
		ID         string `json:"id"`
		Name       string `json:"name"`
		OK         bool   `json:"ok"`
		DurationMS int64  `json:"duration_ms"`
		Output     string `json:"output"`
	}
	jsonApprovalRequest struct {
		Type        string `json:"type"`
		RequestID   string `json:"request_id"`
		ToolName    string `json:"tool_name"`
		ToolArgs    string `json:"tool_args"`
		Why         string `json:"why"`
		JudgeReason string `json:"judge_reason,omitempty"`
		Sandbox     string `json:"sandbox,omitempty"`
		Answerable  bool   `json:"answerable"`
	}
	jsonApprovalResolved struct {
		Type      string `json:"type"`
		RequestID string `json:"request_id"`
		Decision  string `json:"decision"`
		By        string `json:"by"`
		Reason    string `json:"reason,omitempty"`
	}
	jsonUsage struct {
		Type            string `json:"type"`
		InputTokens     int    `json:"input_tokens"`
		OutputTokens    int    `json:"output_tokens"`
		ReasoningTokens int    `json:"reasoning_tokens"`
	}
	jsonRunFinished struct {
		Type           string `json:"type"`
		ConversationID string `json:"conversation_id"`
		RunID          string `json:"run_id"`
	}
	jsonRunError struct {
		Type           string `json:"type"`
		ConversationID string `json:"conversation_id"`
		RunID          string `json:"run_id"`
		Message        string `json:"message"`
		Code           string `json:"code"`
	}
)

// emit writes one line, after run_started if none was written yet.
func (j *jsonOutput) emit(v any) error {
	if !j.started {
		if err := j.runStarted("", ""); err != nil {
			return err
		}
	}
	return j.enc.Encode(v)
}

func (j *jsonOutput) runStarted(threadID, runID string) error {
	if j.started {
		return nil
	}
	j.started = true
	j.threadID, j.runID = threadID, runID
	return j.enc.Encode(jsonRunStarted{Type: "run_started", Schema: jsonSchemaVersion, ConversationID: threadID, RunID: runID, Model: j.model, Mode: j.mode, Resumed: j.resumed})
}

func (j *jsonOutput) text(id, delta string) error {
	return j.emit(jsonDelta{Type: "text", MessageID: id, Delta: delta})
}

func (j *jsonOutput) textEnd(string) error { return nil }

func (j *jsonOutput) reasoning(id, delta string) error {
	return j.emit(jsonDelta{Type: "reasoning", MessageID: id, Delta: delta})
}

func (j *jsonOutput) reasoningEnd(string) error { return nil }

func (j *jsonOutput) toolCall(id, name, args string) error {
	return j.emit(jsonToolCall{Type: "tool_call", ID: id, Name: name, Arguments: args})
}

func (j *jsonOutput) toolResult(r toolOutcome) error {
	return j.emit(jsonToolResult{Type: "tool_result", ID: r.ID, Name: r.Name, OK: r.OK, DurationMS: r.Duration.Milliseconds(), Output: r.Output})
}

func (j *jsonOutput) approvalOpened(a session.Approval, answerable bool) error {
	return j.emit(jsonApprovalRequest{Type: "approval_request", RequestID: a.ID, ToolName: a.Call.Name, ToolArgs: a.Call.Args, Why: a.Why, JudgeReason: a.JudgeReason, Sandbox: a.Sandbox, Answerable: answerable})
}

func (j *jsonOutput) approvalResolved(a session.Approval) error {
	return j.emit(jsonApprovalResolved{Type: "approval_resolved", RequestID: a.ID, Decision: decisionWord(a.Decision), By: originName(a.By), Reason: a.Decision.Reason})
}

// originName is the front end that answered, "none" when the request was
// withdrawn.
func originName(by session.Origin) string {
	if by == "" {
		return "none"
	}
	return string(by)
}

func (j *jsonOutput) usage(u llm.Usage) error {
	return j.emit(jsonUsage{Type: "usage", InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, ReasoningTokens: u.ReasoningTokens})
}

func (j *jsonOutput) ended(e runEnd) error {
	conv, run := j.threadID, j.runID
	if e.RunID != "" {
		run = e.RunID
	}
	switch {
	case !e.seen:
		return j.emit(jsonRunError{Type: "run_error", ConversationID: conv, RunID: run, Message: "the end of the run was not seen: output fell too far behind and events were lost", Code: "events_lost"})
	case e.Finished:
		return j.emit(jsonRunFinished{Type: "run_finished", ConversationID: conv, RunID: run})
	}
	return j.emit(jsonRunError{Type: "run_error", ConversationID: conv, RunID: run, Message: e.Message, Code: e.Code})
}
