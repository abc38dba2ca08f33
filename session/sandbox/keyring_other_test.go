//go:build !linux

package sandbox

// keyringHelpers does nothing where there are no kernel keyrings.
func keyringHelpers() {}
