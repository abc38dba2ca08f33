package panelsync

import (
	"testing"

	"github.com/infer-workspace/infer/session"
)

// TestThePanelIsNotShownNetworkRequests: a request only infer's terminal
// can answer (a network host) is never offered to the panel.
func TestThePanelIsNotShownNetworkRequests(t *testing.T) {
	got := panelApprovals([]session.Approval{{ID: "a"}, {ID: "net", LocalOnly: true}, {ID: "b"}})
	if len(got) != 2 || got[0].ID != "a" || got[1].ID != "b" {
		t.Fatalf("the panel is offered %+v", got)
	}
}
