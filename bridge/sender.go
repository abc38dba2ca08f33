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

// send encodes f and queues it for the writer.
func (c *conn) send(f wire.Frame) error {
	b, err := wire.Encode(f)
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

// SendMode implements Sender.
// Done is closed when the connection starts closing, so work done for it
// (a panel tool request waiting on an approval) can stop: the contract
// drops results for a connection that is gone.
func (c *conn) Done() <-chan struct{} { return c.done }

func (c *conn) SendMode(mode string) error { return c.send(wire.Mode{Mode: mode}) }

// ArtifactBase implements Sender.
func (c *conn) ArtifactBase() string { return c.srv.artifactBase() }

// SendConversations implements Sender. A nil list goes out as [] since the
// extension iterates it.
func (c *conn) SendConversations(list []wire.ConversationInfo) error {
	return c.send(wire.Conversations{Conversations: orEmpty(list)})
}

// SendSnapshot implements Sender.
func (c *conn) SendSnapshot(snap wire.ConversationSnapshot) error {
	snap.Messages = orEmpty(snap.Messages)
	return c.send(snap)
}

// SendChatEvent implements Sender.
func (c *conn) SendChatEvent(event json.RawMessage) error {
	return c.send(wire.ChatEvent{Event: event})
}

// SendInterrupted implements Sender.
func (c *conn) SendInterrupted() error { return c.send(wire.Interrupted{}) }

// SendHistory implements Sender.
func (c *conn) SendHistory(history []string) error {
	return c.send(wire.History{History: orEmpty(history)})
}

// SendSkills implements Sender.
func (c *conn) SendSkills(skills []wire.Skill) error {
	return c.send(wire.Skills{Skills: orEmpty(skills)})
}

// SendModels implements Sender.
func (c *conn) SendModels(models []string, current string) error {
	return c.send(wire.Models{Models: orEmpty(models), Current: current})
}

// SendApprovalRequest implements Sender.
func (c *conn) SendApprovalRequest(req wire.ApprovalRequest) error { return c.send(req) }

// SendApprovalResolved implements Sender.
func (c *conn) SendApprovalResolved(requestID string) error {
	return c.send(wire.ApprovalResolved{RequestID: requestID})
}

// SendToolResult implements Sender.
func (c *conn) SendToolResult(res wire.ToolResult) error { return c.send(res) }

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

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
