package bridge

import (
	"github.com/infer-workspace/infer/bridge/wire"
)

// Panel receives the side panel's frames from the live extension connection.
// The workspace adapter implements it; the bridge decides no policy.
//
// Handle is called synchronously from the connection's read loop, in the
// order the frames arrived, so that (as the contract requires) a
// user_message sent right after new_session lands in the new session.
// Implementations must therefore return quickly and move long work (a tool
// request waiting on an approval, a turn) to their own goroutines.
//
// s sends frames to the connection the frame came from; after that
// connection closes, s.Send returns ErrConnClosed and sends nothing,
// which is what the contract wants for late tool results.
type Panel interface {
	// Connected runs once per authenticated connection, after
	// browser_hello_ack and before any of its frames are dispatched: the
	// place to send `mode` and re-send pending approval requests.
	Connected(s Sender, extensionVersion string)
	// Handle is given every frame of the extension's side of the
	// contract (wire.SentBy) except the hello and browser results, which
	// the bridge answers itself. It ignores the types it does not answer,
	// as the contract says of unknown ones.
	Handle(s Sender, f wire.Frame)
}

// Sender writes typed frames to one extension connection. Writes are queued
// to the connection's single writer goroutine; a Send returns once the frame
// is queued, or an error if the connection is gone.
type Sender interface {
	// Done is closed when the connection goes away (never, for a sender
	// that is not bound to one connection).
	Done() <-chan struct{}
	// Send queues one frame of infer's side of the contract. Lists the
	// extension iterates go out as [] when nil (wire.NonNull).
	Send(f wire.Frame) error
	// ArtifactBase is the address the artifacts route is served under,
	// "http://127.0.0.1:<port>" ("" when none is served): the panel is a
	// web page elsewhere, so a root-relative /artifacts/ link means
	// nothing to it.
	ArtifactBase() string
}
