package main

import (
	"fmt"
	"io"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/infer-workspace/infer/bridge/agui"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/transcript"
)

// Names of the CUSTOM events --output ag-ui adds to the workspace's own
// events, so an AG-UI client sees approvals it can answer on stdin.
const (
	customApprovalRequest  = "infer.approval_request"
	customApprovalResolved = "infer.approval_resolved"
)

// aguiOutput is --output ag-ui: newline-delimited AG-UI events, made by
// the panel's encoder (bridge/agui) and each encoded by the SDK's own
// ToJSON, exactly as the bridge sends them in chat_event frames.
type aguiOutput struct {
	out io.Writer
	enc agui.Encoder
}

func newAGUIOutput(out io.Writer) *aguiOutput { return &aguiOutput{out: out} }

func (g *aguiOutput) write(e events.Event) error {
	b, err := e.ToJSON()
	if err != nil {
		return fmt.Errorf("encoding a %s event: %w", e.Type(), err)
	}
	_, err = g.out.Write(append(b, '\n'))
	return err
}

// resumed writes the stored conversation as MESSAGES_SNAPSHOT, so a client
// starting from nothing can show the history the run continues.
func (g *aguiOutput) resumed(snap session.Snapshot) error {
	return g.write(events.NewMessagesSnapshotEvent(agui.Snapshot(snap.ID, snap.Transcript)))
}

// change writes the events the panel's encoder tells c with.
func (g *aguiOutput) change(c transcript.Change) error {
	for _, e := range g.enc.Encode(c) {
		if err := g.write(e.Event); err != nil {
			return err
		}
	}
	return nil
}

// aguiApproval is the value of the infer.approval_request CUSTOM event; it
// uses the bridge's approval_request vocabulary.
type aguiApproval struct {
	RequestID   string `json:"request_id"`
	ToolName    string `json:"tool_name"`
	ToolArgs    string `json:"tool_args"`
	Why         string `json:"why"`
	JudgeReason string `json:"judge_reason,omitempty"`
	Sandbox     string `json:"sandbox,omitempty"`
	Answerable  bool   `json:"answerable"`
}

// aguiResolved is the value of the infer.approval_resolved CUSTOM event.
type aguiResolved struct {
	RequestID string `json:"request_id"`
	Decision  string `json:"decision"`
	By        string `json:"by"`
	Reason    string `json:"reason,omitempty"`
}

func (g *aguiOutput) approvalOpened(a session.Approval, answerable bool) error {
	v := aguiApproval{RequestID: a.ID, ToolName: a.Call.Name, ToolArgs: a.Call.Args, Why: a.Why, JudgeReason: a.JudgeReason, Sandbox: a.Sandbox, Answerable: answerable}
	return g.write(events.NewCustomEvent(customApprovalRequest, events.WithValue(v)))
}

func (g *aguiOutput) approvalResolved(a session.Approval) error {
	v := aguiResolved{RequestID: a.ID, Decision: decisionWord(a.Decision), By: originName(a.By), Reason: a.Decision.Reason}
	return g.write(events.NewCustomEvent(customApprovalResolved, events.WithValue(v)))
}

func (g *aguiOutput) usage(llm.Usage) error { return nil }

// failedBeforeStart writes nothing: the workspace emitted no event, and
// the error reaches stderr as the command's error.
func (g *aguiOutput) failedBeforeStart(string) error { return nil }

func (g *aguiOutput) end() error { return nil }
