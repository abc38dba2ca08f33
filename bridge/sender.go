package bridge

import (
	"errors"
	"fmt"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/browser"
)

// ErrConnClosed is returned by a Sender whose connection has closed: the
// frame was not sent and never will be (the contract has no replay).
var ErrConnClosed = errors.New("bridge: the extension connection is closed")

var _ Sender = (*conn)(nil)

// Send implements Sender: it encodes f and queues it for the writer.
func (c *conn) Send(f wire.Frame) error {
	b, err := wire.Encode(wire.NonNull(f))
	if err != nil {
		return fmt.Errorf("bridge: %w", err)
	}
	return c.enqueue(b)
}

// enqueue waits for room in the queue: a full queue means the peer reads
// slowly, and backpressure beats dropping frames. It gives up once the
// connection closes, which a stuck peer causes within WriteTimeout.
func (c *conn) enqueue(b []byte) error {
	select {
	case <-c.done:
		return ErrConnClosed
	default:
	}
	c.queued.Add(1)
	select {
	case c.out <- b:
		return nil
	case <-c.done:
		c.queued.Add(-1)
		return ErrConnClosed
	}
}

// Done is closed when the connection starts closing, so work done for it
// (a panel tool request waiting on an approval) can stop: the contract
// drops results for a connection that is gone.
func (c *conn) Done() <-chan struct{} { return c.done }

// ArtifactBase implements Sender.
func (c *conn) ArtifactBase() string { return c.srv.artifactBase() }

// Live returns a Sender for whatever connection is live at the moment of
// each call, for broadcasts such as chat events and approval requests.
// With no live connection its methods return browser.ErrNotConnected;
// if the connection closes during a call, ErrConnClosed.
func (s *Server) Live() Sender { return liveSender{s} }

type liveSender struct{ s *Server }

// Done is never closed: the live sender outlives every connection.
func (l liveSender) Done() <-chan struct{} { return nil }

func (l liveSender) ArtifactBase() string { return l.s.artifactBase() }

func (l liveSender) Send(f wire.Frame) error {
	c := l.s.liveConn()
	if c == nil {
		return browser.ErrNotConnected
	}
	return c.Send(f)
}
