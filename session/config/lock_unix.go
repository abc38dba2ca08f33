//go:build unix

package config

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on path (created with mode 0600),
// waiting for it, and returns the function that releases it. The lock
// lives on a file of its own because the file it guards is replaced by
// rename and so cannot carry one. A crashed holder's lock goes with its
// descriptor, so nothing stays locked.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
