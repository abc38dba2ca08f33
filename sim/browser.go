// Package sim impersonates the browser extension side of the bridge: a
// client that dials infer, says hello, answers browser commands from a
// Browser, and exposes the side panel's frames as Go calls.
package sim

import (
	"context"

	"github.com/infer-workspace/infer/bridge/wire"
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
