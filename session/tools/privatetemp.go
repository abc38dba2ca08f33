package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// privateTempPrefix starts the name of every private temp folder. The
// process id follows, for a person looking at /tmp; what says a folder's
// infer still runs is its owner lock.
const privateTempPrefix = "infer-sandbox-tmp-"

// ownerLock is the file in a private temp folder that its infer holds an
// exclusive flock(2) on while it runs. The kernel drops the lock when the
// process ends, however it ends, and the lock works across PID namespaces,
// where a process id would not say whether the owner still runs.
const ownerLock = ".infer-owner"

// privateTempDir is a private temp folder and its owner lock, held open.
type privateTempDir struct {
	path  string
	owner *os.File
}

// makePrivateTemp makes an owner-only folder in the system temp folder and
// locks it as this process's, after removing the folders of infer
// processes that ended without their Close (killed, or crashed): nothing
// else would, and what commands left there may be large.
func makePrivateTemp() (privateTempDir, error) {
	removeOrphanedTemps(os.TempDir())
	dir, err := os.MkdirTemp("", privateTempPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return privateTempDir{}, err
	}
	// The lock is taken on a file of another name and then renamed into
	// place, so a lock file another infer finds is always held already.
	tmp := filepath.Join(dir, ownerLock+".new")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		if err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			err = os.Rename(tmp, filepath.Join(dir, ownerLock))
		}
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return privateTempDir{}, fmt.Errorf("locking %s as this process's: %w", dir, err)
	}
	return privateTempDir{path: dir, owner: f}, nil
}

// remove releases the lock and removes the folder.
func (d privateTempDir) remove() error {
	d.owner.Close()
	return os.RemoveAll(d.path)
}

// removeOrphanedTemps removes dir's private temp folders whose owner lock
// nobody holds. A folder without the lock file (an older infer's, or one
// whose commands deleted it) is left alone, as is one of another user.
func removeOrphanedTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), privateTempPrefix) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if ownedByUs(path) && orphaned(path) {
			_ = os.RemoveAll(path)
		}
	}
}

// orphaned reports whether folder's owner lock exists and nobody holds it.
// Confined commands could write the folder, so the lock file is opened
// without following a link or waiting on a FIFO, and must be a regular
// file.
func orphaned(folder string) bool {
	f, err := os.OpenFile(filepath.Join(folder, ownerLock), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

// ownedByUs reports whether path (not followed if a link) belongs to this
// process's user.
func ownedByUs(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.IsDir() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
