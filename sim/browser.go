// Package sim impersonates the browser extension side of the bridge: a
// client that dials infer, says hello, answers browser commands from a
// Browser, and exposes the side panel's frames as Go calls.
//
// Around the client:
//   - a Profile says which extension to be: the full contract, or the real
//     opentask 1.12.1 with what it sends on its own, refuses and ignores;
//   - a Panel runs the side panel's commands as typed (infer-sim --panel
//     and the scenarios), and a Renderer shows infer's frames as a chat;
//   - Faults make the extension misbehave on purpose, for infer's
//     reliability tests;
//   - a Tap sees the wire, for recordings and traces.
//
// The browsers live in sub-packages (fakebrowser, chrome), as do the
// scenario runner (scenario) and recording and replay (recording).
package sim

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
)

// Browser is what the simulated extension drives: the fake in-memory
// browser or real Chromium.
type Browser interface {
	// Do performs one browser command and returns its result as the
	// extension would put it on the wire. A failure is reported in the
	// result's Error field, never as a missing result. The client fills in
	// the result's ID. Do must honour ctx (the command's timeout_ms) and be
	// safe for concurrent use: the real extension runs commands concurrently.
	Do(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult
}

// Interrupted words the error of a command its context stopped: the
// command's timeout_ms ran out, or the command was cancelled. Both
// simulated browsers report it this way.
func Interrupted(action browser.Action, err error) string {
	what := string(action)
	if what == "" {
		what = "command"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return what + " timed out: the command's timeout_ms ran out"
	}
	return what + " canceled: " + err.Error()
}

// Complete gives res the shape the contract fixes for every answer to the
// command id: the command's id, content "" unless the action's answer was
// null (nullContent), and events as an array, never null.
func Complete(res wire.BrowserResult, id string, nullContent bool) wire.BrowserResult {
	res.ID = id
	if res.Content == nil && !nullContent {
		empty := ""
		res.Content = &empty
	}
	if res.Events == nil {
		res.Events = []json.RawMessage{}
	}
	return res
}
