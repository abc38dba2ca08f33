package sockowner

import (
	"encoding/binary"
	"net"
	"os"
	"strings"
	"testing"
)

// TestPeerUIDFindsOwnConnection dials a loopback listener and finds the
// dialling socket's owner: this process's own uid.
func TestPeerUIDFindsOwnConnection(t *testing.T) {
	for _, network := range []string{"tcp4", "tcp"} {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		// "tcp" may dial from a dual-stack socket, listed in tcp6 with a
		// v4-mapped address.
		c, err := net.Dial(network, ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		uid, err := PeerUID(s.LocalAddr().(*net.TCPAddr), s.RemoteAddr().(*net.TCPAddr))
		if err != nil || uid != os.Getuid() {
			t.Errorf("%s: PeerUID = %d, %v; want %d", network, uid, err, os.Getuid())
		}
		// The listener's own end is not a peer.
		if _, err := PeerUID(s.RemoteAddr().(*net.TCPAddr), &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}); err != ErrNotFound {
			t.Errorf("%s: an unrelated pair gave %v, want ErrNotFound", network, err)
		}
	}
}

func TestListenerUID(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	uid, found, err := ListenerUID(port)
	if err != nil || !found || uid != os.Getuid() {
		t.Errorf("ListenerUID = %d, %v, %v; want %d", uid, found, err, os.Getuid())
	}
	ln.Close()
	if _, found, err := ListenerUID(port); found || err != nil {
		t.Errorf("a closed port still has a listener (%v, %v)", found, err)
	}
}

func TestParseAddr(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the rows below are as a little-endian kernel prints them")
	}
	a, err := parseAddr("0100007F:CDF5")
	if err != nil || !a.IP.Equal(net.IPv4(127, 0, 0, 1)) || a.Port != 0xCDF5 {
		t.Errorf("v4: %v %v", a, err)
	}
	a, err = parseAddr("0000000000000000FFFF00000100007F:0050")
	if err != nil || !a.IP.Equal(net.IPv4(127, 0, 0, 1)) || a.Port != 80 {
		t.Errorf("v4-mapped: %v %v", a, err)
	}
}

// TestAClosedSocketHasNoOwner: a peer that writes its request and hangs up
// before the bridge accepts leaves a FIN_WAIT2 or TIME_WAIT row, which the
// kernel prints with uid 0 and inode 0. That row must not make the peer
// root (let in): it is skipped, so the peer's owner is not found.
func TestAClosedSocketHasNoOwner(t *testing.T) {
	table := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n" +
		"   0: 0100007F:C350 0100007F:1F90 05 00000000:00000000 03:00000d41 00000000     0        0 0 3 0000000000000000\n" +
		"   1: 0100007F:C351 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1002        0 4242 1 0000000000000000 20 4 30 10 -1\n"
	var found []entry
	if _, err := scanTable(strings.NewReader(table), func(e entry) bool {
		found = append(found, e)
		return false
	}); err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].uid != 1002 || found[0].local.Port != 0xC351 {
		t.Fatalf("rows taken: %+v, want only the live socket of uid 1002", found)
	}
}
