package netproxy

import (
	"strings"
	"testing"
)

// TestOnlyABinaryThatForwardsIsTheForwarder: a program that does not call
// MaybeForward first would run as itself inside the sandbox when started
// as the forwarder (a test binary would run its tests there), so Helper
// refuses to name it.
func TestOnlyABinaryThatForwardsIsTheForwarder(t *testing.T) {
	defer serves.Store(serves.Load())
	serves.Store(false)
	if _, err := Helper(); err == nil || !strings.Contains(err.Error(), "MaybeForward") {
		t.Fatalf("Helper() without MaybeForward: err = %v", err)
	}
	MaybeForward() // not started as the forwarder: it returns
	if p, err := Helper(); err != nil || p == "" {
		t.Fatalf("Helper() after MaybeForward = %q, %v", p, err)
	}
}
