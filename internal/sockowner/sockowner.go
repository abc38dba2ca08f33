// Package sockowner tells which local user owns the other end of a loopback
// TCP connection, or the socket listening on a loopback port. The bridge
// uses it to refuse other users' processes, and `infer doctor` to say who
// holds the bridge's port; a token alone cannot stop a squatter that the
// extension hands its token to.
package sockowner

import (
	"errors"
	"net"
	"os"
)

// ErrUnsupported is returned where the operating system offers no way this
// package knows to find a socket's owner.
var ErrUnsupported = errors.New("sockowner: finding a socket's owner is not supported on this system")

// ErrNotFound is returned when no socket matches: the peer closed its end
// before it was looked up, or it lives in another network namespace.
var ErrNotFound = errors.New("sockowner: no such socket")

// PeerUID is the uid owning the socket at the other end of a connection
// accepted on local from remote: the socket whose own address is remote and
// whose peer is local.
func PeerUID(local, remote *net.TCPAddr) (int, error) {
	return peerUID(local, remote)
}

// ListenerUID is the uid owning a socket listening on the loopback (or any
// address) at port, and whether one was found at all.
func ListenerUID(port int) (uid int, found bool, err error) {
	return listenerUID(port)
}

// UnixPeerUID is the uid of the process at the other end of a Unix socket
// connection, as the kernel recorded it when the connection was made: the
// client's for a listener, the listener's for a client. It returns
// ErrUnsupported where the system offers no way this package knows.
func UnixPeerUID(c *net.UnixConn) (int, error) { return unixPeerUID(c) }

// Trusted reports whether a socket owned by uid may be talked to with the
// person's secrets: one of this process's own user, or root (who can read
// them and trace infer anyway).
func Trusted(uid int) bool { return uid == os.Getuid() || uid == 0 }
