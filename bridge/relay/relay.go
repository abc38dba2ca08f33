// Package relay lets the infer that holds the bridge lend its browser to the
// person's other infers. It serves the holder's browser.Driver and status on
// a private Unix socket in infer's home, beside mcp.sock; a guest dials it
// and gets a Driver of its own.
//
// The socket carries driver calls, not MCP tool calls: a guest runs its own
// tool pipeline, approvals and transcript, and the holder only passes each
// approved command to its extension. That is why this is not the MCP
// socket, whose callers borrow the holder's pipeline instead.
package relay

import (
	"errors"
	"path/filepath"

	"github.com/infer-workspace/infer/session/browser"
)

// SocketFile is the socket's name in infer's home, beside mcp.sock. The
// home is the person's alone (0700) and the sandbox hides it, so a command
// the agent runs cannot reach the browser through it.
const SocketFile = "browser.sock"

// SocketPath is the relay socket of the infer that holds the bridge for
// home.
func SocketPath(home string) string { return filepath.Join(home, SocketFile) }

// Holder describes the infer that holds the bridge, for guests to say where
// their browser comes from ("the browser is served by infer in ~/src/foo,
// pid 123").
type Holder struct {
	// Root is the holder's project folder.
	Root string `json:"root"`
	// PID is the holder's process id.
	PID int `json:"pid"`
	// Command is how the holder was started: "infer", "infer serve",
	// "infer headless" or "infer mcp".
	Command string `json:"command"`
	// Port is the bridge's port the extension is connected to.
	Port int `json:"port"`
}

// Source is what a holder relays: its bridge, which both performs commands
// and knows the extension's connection.
type Source interface {
	browser.Driver
	Status() browser.Status
}

// ErrInUse is returned by Listen when a live process answers on the socket:
// another infer already serves the browser for this home.
var ErrInUse = errors.New("another infer already serves the browser for this home")

// ErrRefused is returned by Dial, wrapped with the holder's reason, when the
// holder refused the connection (a wrong token, another version).
var ErrRefused = errors.New("the infer that holds the browser refused the connection")

// ErrHolderGone is Do's error for calls in flight when the connection to the
// holder ends, and for calls after that. It also matches
// browser.ErrDisconnected, so code that handles a dropped extension handles
// a vanished holder the same way.
var ErrHolderGone error = holderGone{}

// holderGone is ErrHolderGone's type: a comparable value whose Is method
// lets errors.Is see browser.ErrDisconnected in it too.
type holderGone struct{}

func (holderGone) Error() string {
	return "the infer that held the browser stopped before answering"
}

// Is reports browser.ErrDisconnected as a match.
func (holderGone) Is(target error) bool { return target == browser.ErrDisconnected }

// ErrNotOurs is Dial's error, wrapped with who it is, when the socket is
// served by a process of another user: the guest hangs up before sending
// the token or anything else.
var ErrNotOurs = errors.New("the browser socket is served by another user's process")
