// Package nolink opens files by absolute paths in which no element may be
// a symbolic link, and replaces files inside a directory handle.
//
// infer's file tools decide on a path (inside the project, outside but
// approved, protected or not) and act on it later. Whatever can write the
// project (a confined command, an MCP server) can swap a name for a link
// in between; opening by name would then reach the link's target, which
// nobody judged. Callers resolve a path once, judge the resolved path,
// and open exactly that path here: a link anywhere in it, planted after
// the judgement, makes the open fail instead of leading elsewhere.
package nolink

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrLink is returned when an element of a path is (now) a symbolic link.
var ErrLink = errors.New("a symbolic link is in the way")

// Open opens the file or directory at abs for reading. A FIFO or device
// is opened without blocking, so the caller can refuse it after a Stat.
func Open(abs string) (*os.File, error) {
	return openFile(abs, unix.O_RDONLY|unix.O_NONBLOCK)
}

// Dir opens the directory at abs as a handle for At, Replace and Lstat.
// With create, missing directories are made with perm, one at a time
// below the last one that exists, none of them through a link.
func Dir(abs string, create bool, perm fs.FileMode) (*os.File, error) {
	if !create {
		return openFile(abs, dirFlags|unix.O_DIRECTORY)
	}
	return walk(abs, true, perm)
}

// At opens name, one element, in dir for reading, never following a link.
func At(dir *os.File, name string) (*os.File, error) {
	if err := oneElement(name); err != nil {
		return nil, err
	}
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, pathErr("open", filepath.Join(dir.Name(), name), err)
	}
	return os.NewFile(uintptr(fd), filepath.Join(dir.Name(), name)), nil
}

// Lstat describes name in dir itself, a link rather than its target.
func Lstat(dir *os.File, name string) (unix.Stat_t, error) {
	var st unix.Stat_t
	if err := oneElement(name); err != nil {
		return st, err
	}
	if err := unix.Fstatat(int(dir.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return st, pathErr("lstat", filepath.Join(dir.Name(), name), err)
	}
	return st, nil
}

// IsLink reports whether st, from Lstat, is a symbolic link.
func IsLink(st unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFLNK }

// IsDir reports whether st, from Lstat, is a directory.
func IsDir(st unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFDIR }

// Replace gives name in dir the content data and permissions perm through
// a new file renamed into place, so a failure midway never leaves it half
// written. The rename replaces whatever name is then, a link included,
// and never writes through it.
func Replace(dir *os.File, name string, data []byte, perm fs.FileMode) error {
	if err := oneElement(name); err != nil {
		return err
	}
	dfd := int(dir.Fd())
	var tmp string
	var fd int
	for range 100 {
		var id [8]byte
		if _, err := rand.Read(id[:]); err != nil {
			return err
		}
		tmp = "." + name + "." + hex.EncodeToString(id[:]) + ".tmp"
		var err error
		fd, err = unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EEXIST) {
			return pathErr("create", filepath.Join(dir.Name(), tmp), err)
		}
		fd = -1
	}
	if fd < 0 {
		return errors.New("could not find a free temporary name in " + dir.Name())
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir.Name(), tmp))
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dfd, tmp, dfd, name)
		if err != nil {
			err = pathErr("rename", filepath.Join(dir.Name(), name), err)
		}
	}
	if err != nil {
		_ = unix.Unlinkat(dfd, tmp, 0)
	}
	return err
}

// walk opens the directory abs one element at a time from /, refusing
// links, and with create makes the missing ones.
func walk(abs string, create bool, perm fs.FileMode) (*os.File, error) {
	if !filepath.IsAbs(abs) {
		return nil, fmt.Errorf("%s is not an absolute path", abs)
	}
	fd, err := unix.Open("/", dirFlags|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, pathErr("open", "/", err)
	}
	at := "/"
	for _, elem := range strings.Split(filepath.Clean(abs), string(filepath.Separator)) {
		if elem == "" {
			continue
		}
		if elem == ".." {
			unix.Close(fd)
			return nil, fmt.Errorf("%s climbs with ..; give a clean path", abs)
		}
		at = filepath.Join(at, elem)
		next, err := unix.Openat(fd, elem, dirFlags|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(fd, elem, uint32(perm.Perm())); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = unix.Openat(fd, elem, dirFlags|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			}
		}
		if errors.Is(err, unix.ENOTDIR) {
			// O_PATH with O_NOFOLLOW reaches a link itself, which is
			// then no directory: say it was a link.
			var st unix.Stat_t
			if unix.Fstatat(fd, elem, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && IsLink(st) {
				err = unix.ELOOP
			}
		}
		unix.Close(fd)
		if err != nil {
			return nil, pathErr("open", at, err)
		}
		fd = next
	}
	return os.NewFile(uintptr(fd), filepath.Clean(abs)), nil
}

// oneElement refuses names that would leave the directory they are
// opened in.
func oneElement(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, filepath.Separator) {
		return fmt.Errorf("%q is not a single file name", name)
	}
	return nil
}

// pathErr wraps a system error, and names a link met on the way (ELOOP)
// as ErrLink.
func pathErr(op, path string, err error) error {
	if errors.Is(err, unix.ELOOP) {
		return &fs.PathError{Op: op, Path: path, Err: ErrLink}
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// walkOpen opens abs with flags after walking to its folder element by
// element, for systems without openat2.
func walkOpen(abs string, flags int) (*os.File, error) {
	dir, err := walk(filepath.Dir(abs), false, 0)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	name := filepath.Base(abs)
	if abs == "/" {
		name = "."
	}
	fd, err := unix.Openat(int(dir.Fd()), name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, pathErr("open", abs, err)
	}
	return os.NewFile(uintptr(fd), abs), nil
}

// Readlink returns the text of the link name in dir.
func Readlink(dir *os.File, name string) (string, error) {
	if err := oneElement(name); err != nil {
		return "", err
	}
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(int(dir.Fd()), name, buf)
		if err != nil {
			return "", pathErr("readlink", filepath.Join(dir.Name(), name), err)
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}
