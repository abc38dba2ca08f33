//go:build !unix

package netproxy

import "os"

// terminating are the signals the forwarder outlives.
var terminating = []os.Signal{os.Interrupt}

// exitLike ends with the command's exit code.
func exitLike(ps *os.ProcessState) int { return ps.ExitCode() }
