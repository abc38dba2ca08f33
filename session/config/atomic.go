package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces path with data so that readers see either the
// old file or the new one, never a torn write: it writes a temporary file in
// the same directory, fsyncs it, renames it over path and fsyncs the
// directory. Missing directories are created with mode 0700.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTemp(path, data, perm)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", DisplayPath(path), err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

// CreateFileAtomic is WriteFileAtomic that never replaces an existing file:
// when path exists it returns an error matching fs.ErrExist and leaves the
// file alone. Two concurrent callers cannot both succeed.
func CreateFileAtomic(path string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTemp(path, data, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	// A hard link fails when the target exists, which rename would not.
	linkErr := os.Link(tmp, path)
	if linkErr == nil {
		syncDir(filepath.Dir(path))
		return nil
	}
	if errors.Is(linkErr, fs.ErrExist) {
		return fmt.Errorf("create %s: %w", DisplayPath(path), fs.ErrExist)
	}
	// Some filesystems have no hard links; fall back to check-then-rename.
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("create %s: %w", DisplayPath(path), fs.ErrExist)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("create %s: %w", DisplayPath(path), err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

// writeTemp writes data to a synced temporary file next to path and returns
// its name.
func writeTemp(path string, data []byte, perm fs.FileMode) (string, error) {
	dir := filepath.Dir(path)
	if err := EnsureDir(dir); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", DisplayPath(path), err)
	}
	tmp := f.Name()
	fail := func(err error) (string, error) {
		f.Close()
		os.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", DisplayPath(path), err)
	}
	// Chmod before writing so the secret is never readable by others, even
	// briefly, whatever the umask.
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("write %s: %w", DisplayPath(path), err)
	}
	return tmp, nil
}

// syncDir makes a rename durable. Failure is ignored: some platforms cannot
// fsync a directory, and the data itself is already on disk.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
