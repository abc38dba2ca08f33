//go:build !linux

package nolink

import (
	"os"

	"golang.org/x/sys/unix"
)

// dirFlags opens directory handles for reading: O_PATH is Linux's.
const dirFlags = unix.O_RDONLY

// openFile opens abs element by element (see walkOpen).
func openFile(abs string, flags int) (*os.File, error) { return walkOpen(abs, flags) }
