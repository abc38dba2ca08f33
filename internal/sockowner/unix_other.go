//go:build !linux && !darwin

package sockowner

import "net"

func unixPeerUID(*net.UnixConn) (int, error) { return -1, ErrUnsupported }
