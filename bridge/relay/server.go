package relay

import (
	"log/slog"

	"github.com/infer-workspace/infer/session/browser"
)

// Server serves one Source to guests on the socket.
type Server struct{}

// Listen binds the socket at path (mode 0600) and serves src on it. A
// socket file left by a process that is gone is replaced; one a live
// process answers on is not (ErrInUse). Guests must first send the token
// (token() at that moment: the person may rotate it while infer runs).
func Listen(path string, token func() string, src Source, h Holder, log *slog.Logger) (*Server, error) {
	return nil, ErrInUse // TODO
}

// Publish sends st to every guest. The latest status wins: a slow guest
// misses intermediate ones rather than holding the caller up.
func (s *Server) Publish(st browser.Status) {}

// Close stops accepting, ends the guests' connections, cancels their
// commands in flight and removes the socket. It is idempotent.
func (s *Server) Close() error { return nil }
