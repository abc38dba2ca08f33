//go:build !unix

package relay

// privateFolder has nothing to check where folders have no Unix modes.
func privateFolder(dir string) error { return nil }
