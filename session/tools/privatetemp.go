package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// privateTempPrefix starts the name of every private temp folder; the
// process id follows it, so a later infer can tell a folder whose process
// is gone.
const privateTempPrefix = "infer-sandbox-tmp-"

// makePrivateTemp makes an owner-only folder in the system temp folder,
// named after this process, and first removes the folders of infer
// processes that ended without their Close (killed, or crashed): nothing
// else would, and what commands left there may be large.
func makePrivateTemp() (string, error) {
	removeOrphanedTemps(os.TempDir())
	return os.MkdirTemp("", privateTempPrefix+strconv.Itoa(os.Getpid())+"-")
}

// removeOrphanedTemps removes dir's private temp folders whose process no
// longer runs. A folder of another user, or one whose name does not parse,
// is left alone; so is one whose process id now belongs to another
// process, which costs only the space until that process ends.
func removeOrphanedTemps(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), privateTempPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || !processGone(pid) || !ownedByUs(filepath.Join(dir, e.Name())) {
			continue
		}
		_ = os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// processGone reports whether no process has id pid. EPERM means one
// runs, under another user.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
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

// errNoPrivateTemp wraps a failure to make the folder.
func errNoPrivateTemp(err error) error {
	return fmt.Errorf("could not make the sandbox's private temp folder: %w", err)
}
