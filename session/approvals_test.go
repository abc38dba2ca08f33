package session

import (
	"context"
	"testing"

	"github.com/infer-workspace/infer/session/tools"
)

// TestThePanelsOutsideAnswerIsMarkedRemote: whatever the panel answers,
// the pipeline learns it came from the panel, so an answer to run a
// command outside the sandbox is refused there (see the tools tests); the
// terminal's is not marked. The request's offer of outside reaches the
// front ends.
func TestThePanelsOutsideAnswerIsMarkedRemote(t *testing.T) {
	for _, c := range []struct {
		by     Origin
		remote bool
	}{{tools.OriginPanel, true}, {tools.OriginTerminal, false}} {
		opened := make(chan Approval, 1)
		b := &approvals{publish: func(e Event) {
			if o, ok := e.(ApprovalOpened); ok {
				opened <- o.Approval
			}
		}}
		got := make(chan tools.Decision, 1)
		go func() {
			d, _ := b.Approve(context.Background(), tools.ApprovalRequest{Call: tools.Call{Name: "Bash"}, Outside: true})
			got <- d
		}()
		a := <-opened
		if !a.Outside {
			t.Errorf("the offer to run outside did not reach the front ends: %+v", a)
		}
		if !b.Answer(a.ID, tools.Decision{Kind: tools.AllowOutside}, c.by) {
			t.Fatalf("%s: the answer was not taken", c.by)
		}
		if d := <-got; d.Kind != tools.AllowOutside || d.Remote != c.remote {
			t.Errorf("%s: the pipeline got %+v, want remote %v", c.by, d, c.remote)
		}
	}
}
