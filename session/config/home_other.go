//go:build !unix

package config

// checkHome has nothing to check where folders have no Unix modes.
func checkHome(home string) error { return nil }
