package sim

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"

	"github.com/infer-workspace/infer/bridge/wire"
)

// The side panel's requests, as Go calls. The contract correlates answers
// with requests only by frame type (except tool requests, which carry an
// id), so a call takes the first matching frame that arrives after it was
// made. A frame infer sends on its own (a mode frame after connecting, a
// models frame another front end caused) can therefore answer a call made
// at the same moment: tests that care should wait for the unprompted frame
// first through a Subscription.

// waiter is a call waiting for its answer on one connection.
type waiter struct {
	conn  *clientConn
	match func(wire.Frame) bool
	ch    chan wire.Frame // buffered: publish never blocks on it
}

// request sends out and waits for the first frame from the same
// connection that match accepts.
func (c *Client) request(ctx context.Context, out wire.Frame, match func(wire.Frame) bool) (wire.Frame, error) {
	if err := c.outgoing(out); err != nil {
		return nil, err
	}
	cc := c.current()
	if cc == nil {
		return nil, fmt.Errorf("%s: %w", out.FrameType(), ErrNotConnected)
	}
	w := &waiter{conn: cc, match: match, ch: make(chan wire.Frame, 1)}
	c.mu.Lock()
	c.waiters = append(c.waiters, w)
	c.mu.Unlock()
	defer c.removeWaiter(w)

	b, err := wire.Encode(out)
	if err != nil {
		return nil, err
	}
	if err := cc.write(ctx, b); err != nil {
		return nil, fmt.Errorf("%s: %w", out.FrameType(), err)
	}
	select {
	case f := <-w.ch:
		return f, nil
	case <-cc.done:
		select {
		case f := <-w.ch:
			return f, nil
		default:
		}
		return nil, fmt.Errorf("%s: %w", out.FrameType(), cc.errOf())
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: no answer: %w", out.FrameType(), ctx.Err())
	}
}

func (c *Client) removeWaiter(w *waiter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.waiters {
		if x == w {
			c.waiters = append(c.waiters[:i], c.waiters[i+1:]...)
			return
		}
	}
}

// reply sends out and waits for the next frame of type T.
func reply[T wire.Frame](ctx context.Context, c *Client, out wire.Frame) (T, error) {
	f, err := c.request(ctx, out, func(f wire.Frame) bool {
		_, ok := f.(T)
		return ok
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return f.(T), nil
}

// publish hands a frame from cc to the call waiting for it (the oldest
// one that matches), to every subscription, and to OnFrame.
func (c *Client) publish(cc *clientConn, f wire.Frame) {
	c.mu.Lock()
	c.trackLocked(f)
	_, isSnapshot := f.(wire.ConversationSnapshot)
	for i, w := range c.waiters {
		if isSnapshot && cc != nil && !cc.greeted {
			break // the greeting's snapshot answers nothing
		}
		if w.conn == cc && w.match(f) {
			w.ch <- f
			c.waiters = append(c.waiters[:i], c.waiters[i+1:]...)
			break
		}
	}
	for s := range c.subs {
		s.push(f)
	}
	c.mu.Unlock()
	if c.opts.OnFrame != nil {
		c.opts.OnFrame(f)
	}
}

// Send sends any frame without waiting for an answer. A frame the
// profile's extension never sends is refused with a *RefusedError.
func (c *Client) Send(ctx context.Context, f wire.Frame) error {
	if err := c.outgoing(f); err != nil {
		return err
	}
	b, err := wire.Encode(f)
	if err != nil {
		return err
	}
	return c.SendRaw(ctx, b)
}

// SendRaw sends one text message as given, valid or not and whatever the
// profile: for tests of how infer copes with a misbehaving extension.
func (c *Client) SendRaw(ctx context.Context, msg []byte) error {
	cc := c.current()
	if cc == nil {
		return ErrNotConnected
	}
	return cc.write(ctx, msg)
}

// ListConversations asks for the stored conversations.
func (c *Client) ListConversations(ctx context.Context) (wire.Conversations, error) {
	return reply[wire.Conversations](ctx, c, wire.ListConversations{})
}

// Resume makes a stored conversation active and returns its snapshot.
// infer ignores an unknown id, so for one this waits until ctx ends.
func (c *Client) Resume(ctx context.Context, id string) (wire.ConversationSnapshot, error) {
	return reply[wire.ConversationSnapshot](ctx, c, wire.ResumeConversation{ID: id})
}

// NewSession starts a fresh conversation and returns its (empty) snapshot.
func (c *Client) NewSession(ctx context.Context) (wire.ConversationSnapshot, error) {
	return reply[wire.ConversationSnapshot](ctx, c, wire.NewSession{})
}

// SendUserMessage types a message into the panel. Its effects arrive as
// chat_event frames on a Subscription.
func (c *Client) SendUserMessage(ctx context.Context, content string) error {
	return c.Send(ctx, wire.UserMessage{Content: content})
}

// Interrupt stops the running turn.
func (c *Client) Interrupt(ctx context.Context) error {
	return c.Send(ctx, wire.Interrupt{})
}

// ListHistory asks for the shared input history.
func (c *Client) ListHistory(ctx context.Context) (wire.History, error) {
	return reply[wire.History](ctx, c, wire.ListHistory{})
}

// ListSkills asks for the skill list.
func (c *Client) ListSkills(ctx context.Context) (wire.Skills, error) {
	return reply[wire.Skills](ctx, c, wire.ListSkills{})
}

// ListModels asks for the configured models.
func (c *Client) ListModels(ctx context.Context) (wire.Models, error) {
	return reply[wire.Models](ctx, c, wire.ListModels{})
}

// SelectModel switches the model; the answer's Current shows whether the
// switch took effect. infer also sends models frames on its own, so an
// answer that shows another model is believed only once no second one
// follows (see settled).
func (c *Client) SelectModel(ctx context.Context, model string) (wire.Models, error) {
	return settled(ctx, c, wire.SelectModel{Model: model}, func(m wire.Models) bool { return m.Current == model })
}

// SetMode switches the agent mode and returns the mode infer reports
// afterwards (unchanged for an unknown mode), settled as SelectModel's.
func (c *Client) SetMode(ctx context.Context, mode string) (wire.Mode, error) {
	return settled(ctx, c, wire.SetMode{Mode: mode}, func(m wire.Mode) bool { return m.Mode == mode })
}

// Approve answers an approval request with approve.
func (c *Client) Approve(ctx context.Context, requestID string) error {
	return c.Send(ctx, wire.ApprovalResponse{RequestID: requestID, Action: wire.ActionApprove})
}

// Reject answers an approval request with reject.
func (c *Client) Reject(ctx context.Context, requestID string) error {
	return c.Send(ctx, wire.ApprovalResponse{RequestID: requestID, Action: wire.ActionReject})
}

// ToolRequest runs one of infer's tools and waits for its result, matched
// by a fresh request id. An approval_request may arrive meanwhile (see
// Subscribe); answer it with Approve or Reject.
func (c *Client) ToolRequest(ctx context.Context, toolName, toolArgs string) (wire.ToolResult, error) {
	id := uuid.NewString()
	f, err := c.request(ctx, wire.ToolRequest{ID: id, ToolName: toolName, ToolArgs: toolArgs}, func(f wire.Frame) bool {
		r, ok := f.(wire.ToolResult)
		return ok && r.ID == id
	})
	if err != nil {
		return wire.ToolResult{}, err
	}
	return f.(wire.ToolResult), nil
}

// ErrSubscriptionClosed is returned by Next after Close.
var ErrSubscriptionClosed = errors.New("sim: subscription closed")

// Subscription receives every frame from infer (except keepalives and
// unknown types) from the moment it was made, in order, across
// reconnections. Its queue is unbounded, so no frame is ever dropped
// because a test was slow to read.
type Subscription struct {
	c    *Client
	wake chan struct{}

	mu     sync.Mutex
	queue  []wire.Frame
	closed bool
}

// Subscribe starts a subscription; Close it when done.
func (c *Client) Subscribe() *Subscription {
	s := &Subscription{c: c, wake: make(chan struct{}, 1)}
	c.mu.Lock()
	c.subs[s] = struct{}{}
	c.mu.Unlock()
	return s
}

func (s *Subscription) push(f wire.Frame) {
	s.mu.Lock()
	s.queue = append(s.queue, f)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Next returns the oldest frame not yet returned, waiting for one until
// ctx ends.
func (s *Subscription) Next(ctx context.Context) (wire.Frame, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, ErrSubscriptionClosed
		}
		if len(s.queue) > 0 {
			f := s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return f, nil
		}
		s.mu.Unlock()
		select {
		case <-s.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close ends the subscription; frames still queued are discarded.
func (s *Subscription) Close() {
	s.c.mu.Lock()
	delete(s.c.subs, s)
	s.c.mu.Unlock()
	s.mu.Lock()
	s.closed = true
	s.queue = nil
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// WaitFor returns the next frame of type T that match accepts (any frame
// of type T when match is nil), consuming the frames before it from s.
func WaitFor[T wire.Frame](ctx context.Context, s *Subscription, match func(T) bool) (T, error) {
	for {
		f, err := s.Next(ctx)
		if err != nil {
			var zero T
			return zero, fmt.Errorf("waiting for a %T frame: %w", zero, err)
		}
		if t, ok := f.(T); ok && (match == nil || match(t)) {
			return t, nil
		}
	}
}
