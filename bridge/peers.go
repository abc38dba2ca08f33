package bridge

import (
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/infer-workspace/infer/internal/sockowner"
)

// ownerListener accepts only connections opened by infer's own user (or
// root), and closes any other before a byte of it is read or written. The
// token already keeps strangers out; this also keeps another user of the
// machine from talking to the bridge at all, so a token it stole while
// squatting the port (see SECURITY.md) is no use to it against this infer,
// and the artifacts and status endpoints are closed to it too.
type ownerListener struct {
	net.Listener
	s   *Server
	uid int
}

// Accept returns the next connection whose owner is allowed.
func (l *ownerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.allowed(c) {
			return c, nil
		}
		c.Close()
	}
}

// allowed decides on one accepted connection. Root is let in: it can read
// the token from the person's config and trace infer anyway, so refusing
// it would only break a browser run as root. Where the system cannot say
// who owns the socket (not Linux) the token alone decides, as before. On
// Linux a socket that cannot be found is refused: its owner has closed it,
// or it reaches this listener from another network namespace, through
// something that forwards connections for whoever asks.
func (l *ownerListener) allowed(c net.Conn) bool {
	local, lok := c.LocalAddr().(*net.TCPAddr)
	remote, rok := c.RemoteAddr().(*net.TCPAddr)
	if !lok || !rok {
		return true
	}
	uid, err := sockowner.PeerUID(local, remote)
	switch {
	case errors.Is(err, sockowner.ErrUnsupported):
		return true
	case err != nil:
		l.s.reject(refusedUser, "a connection whose owner could not be found was closed unanswered",
			"remote", remote.String(), "err", err)
		return false
	case uid == l.uid || uid == 0:
		return true
	}
	l.s.reject(refusedUser, fmt.Sprintf("a process of another user (uid %d) tried to connect; it was closed unanswered", uid),
		"remote", remote.String(), "uid", uid)
	return false
}

// newOwnerListener wraps ln for s, letting in this process's own user.
func newOwnerListener(ln net.Listener, s *Server) *ownerListener {
	return &ownerListener{Listener: ln, s: s, uid: os.Getuid()}
}
