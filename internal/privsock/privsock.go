// Package privsock holds what infer's private Unix sockets (mcp.sock and
// browser.sock, in infer's home) share: binding one in place of a file a
// dead process left, and refusing a process of another user at the other
// end before a byte is exchanged. Both sockets hand out the pairing token
// or what it guards, so both must do these the same way.
package privsock

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/infer-workspace/infer/internal/sockowner"
)

// ErrLive is Listen's error when a live process already answers on the
// path.
var ErrLive = errors.New("privsock: a live process serves this socket")

// OtherUserError is CheckPeer's error for a process of another user.
type OtherUserError struct{ UID int }

func (e *OtherUserError) Error() string {
	return fmt.Sprintf("a process of another user (uid %d)", e.UID)
}

// Listen binds a Unix socket at path, readable and writable by its owner
// only. A socket file a process that is gone left behind is replaced; one a
// live process answers on is not (ErrLive). The listener does not remove
// the file when closed: the caller does, once it knows the file is still
// its own (another process may have taken the path over).
func Listen(path string) (*net.UnixListener, error) {
	if _, err := os.Lstat(path); err == nil {
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, ErrLive
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("remove the stale socket %s: %w", path, err)
		}
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	ln.SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		os.Remove(path)
		return nil, err
	}
	return ln, nil
}

// CheckPeer returns nil when the process at the other end of c may be
// trusted with the token (this process's user, or root), or when the
// system cannot say (the owner-only home and the token then decide
// alone). Otherwise it returns an *OtherUserError, or the lookup's own
// failure.
func CheckPeer(c *net.UnixConn) error {
	uid, err := sockowner.UnixPeerUID(c)
	switch {
	case errors.Is(err, sockowner.ErrUnsupported):
		return nil
	case err != nil:
		return err
	case !sockowner.Trusted(uid):
		return &OtherUserError{UID: uid}
	}
	return nil
}
