//go:build !unix

package config

// CheckHome has nothing to check where folders have no Unix modes.
func CheckHome(home string) error { return nil }
