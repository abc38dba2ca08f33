//go:build !unix

package config

// lockFile is a no-op where flock(2) does not exist: the store is still
// replaced atomically, so at worst one of two simultaneous changes is lost.
func lockFile(string) (func(), error) { return func() {}, nil }
