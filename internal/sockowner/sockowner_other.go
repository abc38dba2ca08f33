//go:build !linux

package sockowner

import "net"

func peerUID(local, remote *net.TCPAddr) (int, error) { return -1, ErrUnsupported }

func listenerUID(port int) (int, bool, error) { return -1, false, ErrUnsupported }
