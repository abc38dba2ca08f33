package store

import (
	"io"
	"io/fs"
	"os"
)

// FS is the handful of file operations the store performs. It exists so that
// tests can inject disk failures (a full disk, a failing fsync) where they
// would really happen; production code uses OS, which is the os package.
type FS interface {
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	Stat(name string) (fs.FileInfo, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	MkdirAll(path string, perm fs.FileMode) error
}

// File is an open file as the store uses it. *os.File satisfies it; Fd is
// needed for advisory locks, so a wrapper must pass the real descriptor
// through.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.Closer
	Stat() (fs.FileInfo, error)
	Sync() error
	Truncate(size int64) error
	Fd() uintptr
}

// OS is the real filesystem.
var OS FS = osFS{}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		// A nil *os.File inside a non-nil File interface would defeat
		// callers' nil checks, so return an untyped nil.
		return nil, err
	}
	return f, nil
}

func (osFS) Stat(name string) (fs.FileInfo, error)        { return os.Stat(name) }
func (osFS) ReadDir(name string) ([]fs.DirEntry, error)   { return os.ReadDir(name) }
func (osFS) Rename(oldpath, newpath string) error         { return os.Rename(oldpath, newpath) }
func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) MkdirAll(path string, perm fs.FileMode) error { return os.MkdirAll(path, perm) }
