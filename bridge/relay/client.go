package relay

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/infer-workspace/infer/internal/privsock"
	"github.com/infer-workspace/infer/session/browser"
)

// Client is a guest's view of the holder's browser. It is a browser.Driver,
// safe for concurrent use.
type Client struct {
	conn     net.Conn
	holder   Holder
	onStatus func(browser.Status)
	done     chan struct{}
	wg       sync.WaitGroup
	once     sync.Once

	wmu sync.Mutex // one frame at a time

	mu      sync.Mutex
	status  browser.Status
	pending *browser.Status // for onStatus, latest wins
	wake    chan struct{}
	nextID  uint64
	calls   map[uint64]chan reply
	gone    bool
}

// Dial connects to the holder's socket at path and authenticates with
// token. When nobody serves the socket the error wraps os.ErrNotExist or
// ECONNREFUSED; when the holder refuses, it wraps ErrRefused with the
// holder's reason; when another user's process serves it, it wraps
// ErrNotOurs and that process was sent nothing. onStatus, when not nil, is called with every status the
// holder publishes after the handshake (Status has the handshake's), one
// call at a time and from a goroutine of the Client's; it must not call
// Close.
func Dial(ctx context.Context, path, token string, onStatus func(browser.Status)) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	// The token goes only to a holder of this user (or root, who can
	// read it anyway): a socket another user put there first, in a
	// folder they can write in, would otherwise receive it, and then
	// every browser command, typed text included.
	if uc, ok := conn.(*net.UnixConn); ok {
		var other *privsock.OtherUserError
		if err := privsock.CheckPeer(uc); errors.As(err, &other) {
			conn.Close()
			return nil, fmt.Errorf("relay: %w (uid %d) at %s; it was not sent the token. Remove it, and keep infer's home a folder only you can write in", ErrNotOurs, other.UID, path)
		} else if err != nil {
			conn.Close()
			return nil, fmt.Errorf("relay: cannot tell who serves %s: %w", path, err)
		}
	}
	deadline := time.Now().Add(handshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	fail := func(err error) (*Client, error) {
		conn.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("relay: handshake with the infer that holds the browser: %w", ctx.Err())
		}
		return nil, err
	}
	if err := writeFrame(conn, hello{Token: token, Version: protocolVersion}); err != nil {
		return fail(fmt.Errorf("relay: the infer that holds the browser did not take the handshake: %w", err))
	}
	r := bufio.NewReader(conn)
	line, err := readFrame(r, maxFrame)
	if err != nil {
		return fail(fmt.Errorf("relay: the infer that holds the browser did not answer the handshake: %w", err))
	}
	var w welcome
	if err := json.Unmarshal(line, &w); err != nil {
		return fail(fmt.Errorf("relay: the infer that holds the browser answered the handshake with something else: %w", err))
	}
	if !w.OK {
		reason := w.Error
		if reason == "" {
			reason = "no reason given"
		}
		return fail(fmt.Errorf("%w: %s", ErrRefused, reason))
	}
	if w.Holder == nil || w.Status == nil {
		return fail(errors.New("relay: the infer that holds the browser left its name or status out of the handshake"))
	}
	if !stop() {
		// ctx ended as the handshake finished: its deadline is on conn.
		return fail(ctx.Err())
	}
	_ = conn.SetDeadline(time.Time{})
	c := &Client{
		conn: conn, holder: *w.Holder, onStatus: onStatus, done: make(chan struct{}),
		status: *w.Status, wake: make(chan struct{}, 1), calls: map[uint64]chan reply{},
	}
	c.wg.Add(2)
	go c.read(r)
	go c.deliverStatus()
	return c, nil
}

// Do sends cmd to the holder's browser and waits for its outcome or ctx.
// When ctx ends first, the holder is told to cancel the command.
func (c *Client) Do(ctx context.Context, cmd browser.Command) (browser.Result, error) {
	if err := ctx.Err(); err != nil {
		return browser.Result{}, err
	}
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.gone {
		c.mu.Unlock()
		return browser.Result{}, ErrHolderGone
	}
	c.nextID++
	id := c.nextID
	c.calls[id] = ch
	c.mu.Unlock()
	if err := c.write(ctx, request{ID: id, Cmd: &cmd}); err != nil {
		c.forget(id)
		switch {
		case errors.Is(err, errFrameTooBig):
			return browser.Result{}, fmt.Errorf("relay: the %s command is too big to pass to the infer that holds the browser (%w)", cmd.Action, err)
		case ctx.Err() != nil:
			return browser.Result{}, ctx.Err()
		}
		return browser.Result{}, ErrHolderGone
	}
	select {
	case rep := <-ch:
		return outcome(rep)
	case <-ctx.Done():
		c.forget(id)
		_ = c.write(context.Background(), request{ID: id, Cancel: true})
		return browser.Result{}, ctx.Err()
	case <-c.done:
		// The reader hands over every answer it read before it ends.
		select {
		case rep := <-ch:
			return outcome(rep)
		default:
			return browser.Result{}, ErrHolderGone
		}
	}
}

// outcome is a reply as Do returns it.
func outcome(rep reply) (browser.Result, error) {
	switch {
	case rep.Error != nil:
		return browser.Result{}, decodeError(rep.Error)
	case rep.Result != nil:
		return *rep.Result, nil
	}
	return browser.Result{}, errors.New("relay: the infer that holds the browser answered with neither a result nor an error")
}

// forget drops the wait for id's answer.
func (c *Client) forget(id uint64) {
	c.mu.Lock()
	delete(c.calls, id)
	c.mu.Unlock()
}

// Status is the holder's latest status: received at the handshake and on
// every change.
func (c *Client) Status() browser.Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// Holder is the infer that serves the browser.
func (c *Client) Holder() Holder { return c.holder }

// Done is closed when the connection to the holder has ended: the holder
// stopped or crashed, or Close was called.
func (c *Client) Done() <-chan struct{} { return c.done }

// Close ends the connection; calls in flight fail with ErrHolderGone. It
// returns once the Client's goroutines have ended.
func (c *Client) Close() error {
	c.once.Do(func() { c.conn.Close() })
	c.wg.Wait()
	return nil
}

// read takes the holder's frames until the connection ends, then fails
// every call still waiting.
func (c *Client) read(r *bufio.Reader) {
	defer c.wg.Done()
	for {
		line, err := readFrame(r, maxFrame)
		if err != nil {
			break
		}
		var rep reply
		if json.Unmarshal(line, &rep) != nil {
			break
		}
		c.mu.Lock()
		if rep.Status != nil {
			c.status = *rep.Status
			c.pending = rep.Status
			select {
			case c.wake <- struct{}{}:
			default:
			}
		} else if ch := c.calls[rep.ID]; ch != nil {
			delete(c.calls, rep.ID)
			ch <- rep
		}
		c.mu.Unlock()
	}
	c.conn.Close()
	c.mu.Lock()
	c.gone = true
	c.calls = map[uint64]chan reply{}
	c.mu.Unlock()
	close(c.done)
}

// deliverStatus calls onStatus with the latest pushed status, until the
// connection ends.
func (c *Client) deliverStatus() {
	defer c.wg.Done()
	for {
		select {
		case <-c.done:
			return
		case <-c.wake:
		}
		c.mu.Lock()
		st := c.pending
		c.pending = nil
		c.mu.Unlock()
		if st != nil && c.onStatus != nil {
			c.onStatus(*st)
		}
	}
}

// write sends one frame, giving up when ctx ends. A frame too big is
// refused before any of it is written; a write that fails part way ends
// the connection, since the stream can no longer be read.
func (c *Client) write(ctx context.Context, v any) error {
	b, err := marshalFrame(v)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	// ctx ending cuts the write short. The next frame must not inherit
	// that deadline, so a late cut is waited for before the lock goes.
	cut := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = c.conn.SetWriteDeadline(time.Now())
		close(cut)
	})
	defer func() {
		if !stop() {
			<-cut
		}
	}()
	_ = c.conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := c.conn.Write(b); err != nil {
		c.conn.Close()
		return err
	}
	return nil
}
