package nolink

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// dirFlags opens directory handles with O_PATH, which needs no read
// permission on a folder that may only be entered.
const dirFlags = unix.O_PATH

// openFile opens abs with openat2 and RESOLVE_NO_SYMLINKS, one call that
// refuses a link at any element; kernels without openat2 (before 5.6, or
// a seccomp filter that hides it) get the element-by-element walk.
func openFile(abs string, flags int) (*os.File, error) {
	how := unix.OpenHow{
		Flags:   uint64(flags | unix.O_NOFOLLOW | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	fd, err := unix.Openat2(unix.AT_FDCWD, abs, &how)
	switch {
	case err == nil:
		return os.NewFile(uintptr(fd), abs), nil
	case errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EPERM):
		return walkOpen(abs, flags)
	}
	return nil, pathErr("open", abs, err)
}
