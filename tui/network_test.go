package tui

import (
	"testing"

	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/tools"
)

// TestANetworkRequestSaysWhichCommandWantsWhichHost: the approvals pane
// draws a confined command's request for a host as the host and the
// command, not as raw JSON.
func TestANetworkRequestSaysWhichCommandWantsWhichHost(t *testing.T) {
	t.Parallel()
	h := newHarness(t, newFakeWS(), 120, 40)
	h.events(session.ApprovalOpened{Approval: session.Approval{
		ID:        "net1",
		Call:      tools.Call{ID: "call_1/net/127.0.0.1:8080", Name: tools.NetworkTool, Origin: tools.OriginAgent, Args: `{"host":"127.0.0.1:8080","command":"The command ` + "`curl -d @.env http://127.0.0.1:8080`" + `","loopback":true}`},
		Why:       "The command `curl -d @.env http://127.0.0.1:8080` wants to connect to 127.0.0.1:8080, a service on your own machine",
		Options:   []tools.GrantOption{{Label: "Always allow sandboxed commands to reach 127.0.0.1:8080 in this project"}},
		LocalOnly: true,
		Opened:    epoch,
	}})
	screen := h.screen()
	for _, want := range []string{"Network", "host: 127.0.0.1:8080", "for: The command `curl -d @.env", "a service on your own machine"} {
		mustContain(t, screen, want)
	}
}
