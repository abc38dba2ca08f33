//go:build !unix

package netproxy

import (
	"errors"
	"os"
)

// terminating are the signals the forwarder outlives.
var terminating = []os.Signal{os.Interrupt}

// exitLike ends with the command's exit code.
func exitLike(ps *os.ProcessState) int { return ps.ExitCode() }

// replaceWith cannot replace the process here; the forwarder runs only
// under bubblewrap, on Linux.
func replaceWith(string, []string) error { return errors.ErrUnsupported }
