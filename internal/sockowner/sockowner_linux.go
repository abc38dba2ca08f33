package sockowner

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
)

// tables are the kernel's socket tables for this network namespace. A
// client that dialled 127.0.0.1 from a dual-stack socket appears in tcp6
// with a v4-mapped address, so both are read.
var tables = []string{"/proc/net/tcp", "/proc/net/tcp6"}

// tcpListen is the state column's value for a listening socket
// (include/net/tcp_states.h).
const tcpListen = 0x0A

// entry is one row of a socket table.
type entry struct {
	local, remote net.TCPAddr
	state         int
	uid           int
	inode         uint64 // 0 for a socket no process holds any more
}

func peerUID(local, remote *net.TCPAddr) (int, error) {
	uid := -1
	err := scan(func(e entry) bool {
		if sameAddr(&e.local, remote) && sameAddr(&e.remote, local) {
			uid = e.uid
			return true
		}
		return false
	})
	if err != nil {
		return -1, err
	}
	if uid < 0 {
		return -1, ErrNotFound
	}
	return uid, nil
}

func listenerUID(port int) (int, bool, error) {
	uid := -1
	err := scan(func(e entry) bool {
		if e.state == tcpListen && e.local.Port == port {
			uid = e.uid
			return true
		}
		return false
	})
	return uid, uid >= 0, err
}

// scan calls match on every row of both tables until it returns true.
func scan(match func(entry) bool) error {
	read := 0
	var firstErr error
	for _, name := range tables {
		f, err := os.Open(name)
		if err != nil {
			// tcp6 is missing when IPv6 is off; only both missing is an error.
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		read++
		found, err := scanTable(f, match)
		f.Close()
		if err != nil {
			return fmt.Errorf("sockowner: %s: %w", name, err)
		}
		if found {
			return nil
		}
	}
	if read == 0 {
		return fmt.Errorf("sockowner: cannot read the socket tables: %w", firstErr)
	}
	return nil
}

// scanTable parses one table: a header line, then rows of
// "sl local rem st tx:rx tr:when retrnsmt uid timeout inode ...".
func scanTable(r io.Reader, match func(entry) bool) (bool, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 512), 64<<10)
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		e, err := parseRow(sc.Text())
		if err != nil {
			return false, err
		}
		// A socket its owner has already closed (FIN_WAIT2, TIME_WAIT)
		// is kept by the kernel alone and printed with uid 0 and inode 0:
		// its row says nothing of who opened it, so it is never a match,
		// and a peer that wrote its request and hung up is not taken
		// for root.
		if e.inode == 0 {
			continue
		}
		if match(e) {
			return true, nil
		}
	}
	return false, sc.Err()
}

func parseRow(line string) (entry, error) {
	f := strings.Fields(line)
	if len(f) < 10 {
		return entry{}, errors.New("short row")
	}
	var e entry
	var err error
	if e.local, err = parseAddr(f[1]); err != nil {
		return entry{}, err
	}
	if e.remote, err = parseAddr(f[2]); err != nil {
		return entry{}, err
	}
	st, err := strconv.ParseUint(f[3], 16, 8)
	if err != nil {
		return entry{}, fmt.Errorf("state %q: %w", f[3], err)
	}
	e.state = int(st)
	uid, err := strconv.ParseUint(f[7], 10, 32)
	if err != nil {
		return entry{}, fmt.Errorf("uid %q: %w", f[7], err)
	}
	e.uid = int(uid)
	if e.inode, err = strconv.ParseUint(f[9], 10, 64); err != nil {
		return entry{}, fmt.Errorf("inode %q: %w", f[9], err)
	}
	return e, nil
}

// parseAddr reads "ADDR:PORT", where ADDR is the address's 32-bit words
// each printed in hex in the kernel's byte order, and PORT is plain hex.
func parseAddr(s string) (net.TCPAddr, error) {
	host, port, ok := strings.Cut(s, ":")
	if !ok || (len(host) != 8 && len(host) != 32) {
		return net.TCPAddr{}, fmt.Errorf("address %q", s)
	}
	raw, err := hex.DecodeString(host)
	if err != nil {
		return net.TCPAddr{}, fmt.Errorf("address %q: %w", s, err)
	}
	// The kernel printed each word as a number read from the address's
	// bytes in its own byte order; writing the number back the same way
	// gives the bytes again.
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return net.TCPAddr{}, fmt.Errorf("port %q: %w", s, err)
	}
	return net.TCPAddr{IP: ip, Port: int(p)}, nil
}

// sameAddr compares two addresses, a v4-mapped IPv6 one equal to its IPv4.
func sameAddr(a, b *net.TCPAddr) bool {
	return a.Port == b.Port && a.IP.Equal(b.IP)
}
