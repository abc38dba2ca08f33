package sandbox

import (
	"os"
	"testing"

	"github.com/infer-workspace/infer/session/netproxy"
)

// TestMain lets the test binary be what confined commands run under, the
// forwarder, as infer's own binary is, and the helpers of the keyring
// test; otherwise it runs the tests.
func TestMain(m *testing.M) {
	netproxy.MaybeForward()
	keyringHelpers()
	os.Exit(m.Run())
}
