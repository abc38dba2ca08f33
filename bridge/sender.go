package bridge

import (
	"encoding/json"
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

// SendMode implements Sender.
func (c *conn) SendMode(mode string) error { return c.Send(wire.Mode{Mode: mode}) }

// ArtifactBase implements Sender.
func (c *conn) ArtifactBase() string { return c.srv.artifactBase() }

// SendConversations implements Sender. A nil list goes out as [] since the
// extension iterates it.
func (c *conn) SendConversations(list []wire.ConversationInfo) error {
	return c.Send(wire.Conversations{Conversations: list})
}

// SendSnapshot implements Sender.
func (c *conn) SendSnapshot(snap wire.ConversationSnapshot) error {
	return c.Send(snap)
}

// SendChatEvent implements Sender.
func (c *conn) SendChatEvent(event json.RawMessage) error {
	return c.Send(wire.ChatEvent{Event: event})
}

// SendInterrupted implements Sender.
func (c *conn) SendInterrupted() error { return c.Send(wire.Interrupted{}) }

// SendHistory implements Sender.
func (c *conn) SendHistory(history []string) error {
	return c.Send(wire.History{History: history})
}

// SendSkills implements Sender.
func (c *conn) SendSkills(skills []wire.Skill) error {
	return c.Send(wire.Skills{Skills: skills})
}

// SendModels implements Sender.
func (c *conn) SendModels(models []string, current string) error {
	return c.Send(wire.Models{Models: models, Current: current})
}

// SendApprovalRequest implements Sender.
func (c *conn) SendApprovalRequest(req wire.ApprovalRequest) error { return c.Send(req) }

// SendApprovalResolved implements Sender.
func (c *conn) SendApprovalResolved(requestID string) error {
	return c.Send(wire.ApprovalResolved{RequestID: requestID})
}

// SendToolResult implements Sender.
func (c *conn) SendToolResult(res wire.ToolResult) error { return c.Send(res) }

// Live returns a Sender for whatever connection is live at the moment of
// each call, for broadcasts such as chat events and approval requests.
// With no live connection its methods return browser.ErrNotConnected;
// if the connection closes during a call, ErrConnClosed.
func (s *Server) Live() Sender { return liveSender{s} }

type liveSender struct{ s *Server }

// Done is never closed: the live sender outlives every connection.
func (l liveSender) Done() <-chan struct{} { return nil }

func (l liveSender) with(send func(Sender) error) error {
	c := l.s.liveConn()
	if c == nil {
		return browser.ErrNotConnected
	}
	return send(c)
}

func (l liveSender) ArtifactBase() string { return l.s.artifactBase() }

func (l liveSender) Send(f wire.Frame) error {
	return l.with(func(s Sender) error { return s.Send(f) })
}

func (l liveSender) SendMode(mode string) error {
	return l.with(func(s Sender) error { return s.SendMode(mode) })
}

func (l liveSender) SendConversations(list []wire.ConversationInfo) error {
	return l.with(func(s Sender) error { return s.SendConversations(list) })
}

func (l liveSender) SendSnapshot(snap wire.ConversationSnapshot) error {
	return l.with(func(s Sender) error { return s.SendSnapshot(snap) })
}

func (l liveSender) SendChatEvent(event json.RawMessage) error {
	return l.with(func(s Sender) error { return s.SendChatEvent(event) })
}

func (l liveSender) SendInterrupted() error {
	return l.with(func(s Sender) error { return s.SendInterrupted() })
}

func (l liveSender) SendHistory(history []string) error {
	return l.with(func(s Sender) error { return s.SendHistory(history) })
}

func (l liveSender) SendSkills(skills []wire.Skill) error {
	return l.with(func(s Sender) error { return s.SendSkills(skills) })
}

func (l liveSender) SendModels(models []string, current string) error {
	return l.with(func(s Sender) error { return s.SendModels(models, current) })
}

func (l liveSender) SendApprovalRequest(req wire.ApprovalRequest) error {
	return l.with(func(s Sender) error { return s.SendApprovalRequest(req) })
}

func (l liveSender) SendApprovalResolved(requestID string) error {
	return l.with(func(s Sender) error { return s.SendApprovalResolved(requestID) })
}

func (l liveSender) SendToolResult(res wire.ToolResult) error {
	return l.with(func(s Sender) error { return s.SendToolResult(res) })
}
