package sandbox

import (
	"slices"
	"strings"
	"testing"
)

// TestTheNetworkIsAlwaysANamespaceOfItsOwn: with the proxy the command
// gets its own network namespace and the forwarder and socket under
// /run/infer-net; with the network off it gets the namespace and the
// forwarder (for its keyring) but no socket; only an embedder that sets neither keeps the host's network.
func TestTheNetworkIsAlwaysANamespaceOfItsOwn(t *testing.T) {
	root := t.TempDir()
	proxied, err := bwrapArgs(Policy{Root: root, Network: true, NetProxy: "/tmp/infer-net-x/proxy.sock"}, false)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(proxied, " ")
	if !slices.Contains(proxied, "--unshare-net") || !strings.Contains(joined, "--bind /tmp/infer-net-x/proxy.sock "+netSocketInside) || !strings.Contains(joined, " "+netHelperInside) {
		t.Fatalf("proxied: %v", proxied)
	}
	// The binds go in before /run turns read-only.
	if strings.Index(joined, netSocketInside) > strings.Index(joined, "--remount-ro /run") {
		t.Fatalf("the socket is bound after /run is read-only: %v", proxied)
	}
	off, err := bwrapArgs(Policy{Root: root, Network: false, NetProxy: "/tmp/infer-net-x/proxy.sock"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(off, "--unshare-net") || strings.Contains(strings.Join(off, " "), "proxy.sock") || !slices.Contains(off, netHelperInside) {
		t.Fatalf("network off: %v", off)
	}
}
