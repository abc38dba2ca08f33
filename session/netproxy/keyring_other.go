//go:build !linux

package netproxy

// newSessionKeyring does nothing: only Linux has kernel keyrings, and the
// forwarder runs only under bubblewrap.
func newSessionKeyring() error { return nil }
