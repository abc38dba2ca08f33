package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// openLocked opens path and takes an advisory lock on it. A writer may delete
// or atomically replace the file while we wait for the lock; locking the old
// inode would then protect nothing, so after locking it checks that the path
// still names the descriptor's file and otherwise tries again. Closing the
// returned file releases the lock.
func openLocked(fsys FS, path string, flag int, mode lockMode) (File, error) {
	f, _, err := openLockedStat(fsys, path, flag, mode)
	return f, err
}

// openLockedStat is openLocked that also returns the locked file's
// information, taken under the lock, which spares callers that need its
// size another stat.
func openLockedStat(fsys FS, path string, flag int, mode lockMode) (File, fs.FileInfo, error) {
	for {
		f, err := fsys.OpenFile(path, flag, 0o600)
		if err != nil {
			return nil, nil, err
		}
		if err := flock(f, mode); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("locking %s: %w", path, err)
		}
		held, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, nil, err
		}
		cur, err := fsys.Stat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && flag&os.O_CREATE != 0:
			f.Close()
			continue
		case err != nil:
			f.Close()
			return nil, nil, err
		case os.SameFile(held, cur):
			return f, held, nil
		}
		f.Close()
	}
}

// completeEnd returns the length of the prefix of f's first size bytes that
// ends in a newline: everything after it is an unterminated last line.
func completeEnd(f File, size int64) (int64, error) {
	const chunk = 4096
	buf := make([]byte, chunk)
	end := size
	for end > 0 {
		start := max(end-chunk, 0)
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// readAll reads the first size bytes of f in one allocation.
func readAll(f File, size int64) ([]byte, error) {
	buf := make([]byte, size)
	n, err := f.ReadAt(buf, 0)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return buf[:n], err
}

// writeFileAtomic replaces path with data through a temporary file and a
// rename, so a reader sees the old or the new content, never a mix. The
// temporary name is fixed per target: callers hold the lock that serialises
// writers of path, and a leftover from a crash is simply overwritten.
func writeFileAtomic(fsys FS, path string, data []byte, sync bool) error {
	tmp := tempName(path)
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, path)
	}
	if err != nil {
		fsys.Remove(tmp)
	}
	return err
}

// tempName is the hidden sibling a file is prepared under before a rename.
func tempName(path string) string {
	dir, base := splitPath(path)
	return dir + "." + base + ".tmp"
}

func splitPath(path string) (dir, base string) {
	i := len(path) - 1
	for i >= 0 && !os.IsPathSeparator(path[i]) {
		i--
	}
	return path[:i+1], path[i+1:]
}

// syncDir makes a rename or creation in dir durable.
func syncDir(fsys FS, dir string) error {
	d, err := fsys.OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
