//go:build !unix

package bashguard

import (
	"errors"
	"os"
)

// openDir opens a folder for reading its entries, refusing anything else
// (see the Unix version for why).
func openDir(name string) (*os.File, error) {
	info, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, errors.New(name + " is not a folder")
	}
	return os.Open(name)
}
