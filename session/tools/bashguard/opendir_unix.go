//go:build unix

package bashguard

import (
	"os"
	"syscall"
)

// openDir opens a folder for reading its entries. O_DIRECTORY makes the
// kernel refuse anything else before opening it, so a FIFO put where a
// folder was expected cannot block the guard (opening a FIFO to read
// waits for a writer), even if it replaced the folder a moment ago.
func openDir(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0)
}
