package session

import (
	"context"
	"sync"
	"time"

	"github.com/infer-workspace/infer/session/tools"
)

// Approval is one tool call waiting for the person's decision.
type Approval struct {
	ID   string
	Call tools.Call
	// Why says why the call needs approval; JudgeReason is the judge's
	// reason when auto-with-judge passed it on to the person.
	Why         string
	JudgeReason string
	// Options are the "always allow" grants the person may choose from
	// (Decision.Option indexes them); empty when none applies.
	Options []tools.GrantOption
	// Sandbox says where a command runs if approved (see
	// tools.ApprovalRequest.Sandbox); empty for other tools.
	Sandbox string
	// Outside is set when the person may run the command outside the
	// sandbox instead (tools.AllowOutside), at infer's terminal only.
	Outside bool
	// LocalOnly is set when only infer's terminal may answer (a network
	// host): the browser panel is not shown it.
	LocalOnly bool
	Opened    time.Time
	// Decision and By are set on ApprovalResolved events.
	Decision tools.Decision
	By       Origin

	answer chan answer
}

type answer struct {
	d  tools.Decision
	by Origin
}

// approvals is the approvals broker: it implements tools.Approver for the
// pipeline, so a request is open in every front end at once and the first
// answer wins, and publishes ApprovalOpened and ApprovalResolved. Its
// exported methods are promoted to Workspace.
type approvals struct {
	publish func(Event)

	mu      sync.Mutex
	pending []*Approval // oldest first
}

// PendingApprovals returns the open approval requests, oldest first.
func (b *approvals) PendingApprovals() []Approval {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Approval, len(b.pending))
	for i, a := range b.pending {
		out[i] = *a
		out[i].answer = nil
	}
	return out
}

// Answer decides an open approval request. The first answer wins; later
// answers (and unknown ids) are no-ops that return false.
func (b *approvals) Answer(requestID string, d tools.Decision, by Origin) bool {
	a := b.take(requestID)
	if a == nil {
		return false
	}
	a.answer <- answer{d: d, by: by} // buffered: never blocks
	return true
}

// take removes an open request and returns it, nil when it is not open.
func (b *approvals) take(id string) *Approval {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, p := range b.pending {
		if p.ID == id {
			b.pending = append(b.pending[:i:i], b.pending[i+1:]...)
			return p
		}
	}
	return nil
}

// Approve opens a request and waits for its first answer, or for ctx (the
// turn) to end, which withdraws it as denied.
func (b *approvals) Approve(ctx context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	a := &Approval{ID: newID(), Call: req.Call, Why: req.Why, JudgeReason: req.JudgeReason, Options: req.Options, Sandbox: req.Sandbox, Outside: req.Outside, LocalOnly: req.LocalOnly, Opened: time.Now(), answer: make(chan answer, 1)}
	b.mu.Lock()
	b.pending = append(b.pending, a)
	b.mu.Unlock()
	opened := *a
	opened.answer = nil
	b.publish(ApprovalOpened{Approval: opened})

	var got answer
	var err error
	select {
	case got = <-a.answer:
	case <-ctx.Done():
		// Withdraw the request unless an answer raced in first.
		if b.take(a.ID) == nil {
			got = <-a.answer
		} else {
			got = answer{d: tools.Decision{Kind: tools.Deny, Reason: "the turn was interrupted"}, by: ""}
			err = ctx.Err()
		}
	}
	// The panel is a web page: what it allows runs confined, and its
	// choice to run a command outside the sandbox is refused.
	got.d.Remote = got.by == tools.OriginPanel
	resolved := opened
	resolved.Decision, resolved.By = got.d, got.by
	b.publish(ApprovalResolved{Approval: resolved})
	return got.d, err
}
