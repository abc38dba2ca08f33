package relay

import (
	"context"

	"github.com/infer-workspace/infer/session/browser"
)

// Client is a guest's view of the holder's browser. It is a browser.Driver.
type Client struct{}

// Dial connects to the holder's socket at path and authenticates with
// token. When nobody serves the socket the error wraps os.ErrNotExist or
// ECONNREFUSED; when the holder refuses, it wraps ErrRefused with the
// holder's reason. onStatus, when not nil, is called with every status the
// holder publishes, one at a time.
func Dial(ctx context.Context, path, token string, onStatus func(browser.Status)) (*Client, error) {
	return nil, ErrRefused // TODO
}

// Do sends cmd to the holder's browser and waits for its outcome or ctx.
func (c *Client) Do(ctx context.Context, cmd browser.Command) (browser.Result, error) {
	return browser.Result{}, ErrHolderGone // TODO
}

// Status is the holder's latest status: received at the handshake and on
// every change.
func (c *Client) Status() browser.Status { return browser.Status{} }

// Holder is the infer that serves the browser.
func (c *Client) Holder() Holder { return Holder{} }

// Done is closed when the connection to the holder has ended: the holder
// stopped or crashed, or Close was called.
func (c *Client) Done() <-chan struct{} { return nil }

// Close ends the connection; calls in flight fail with ErrHolderGone.
func (c *Client) Close() error { return nil }
