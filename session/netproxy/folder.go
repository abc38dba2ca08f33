package netproxy

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Folder is the one folder under the system's temp folder (read when
// called, so TMPDIR counts as it is then) that holds the socket folders
// of all of this user's proxies. The sandbox hides it from every
// confined command and server, each of which sees only its own socket,
// bound elsewhere: with a TMPDIR outside /tmp, which the sandbox
// replaces, one could otherwise connect to another's proxy and ride on
// the hosts the person allowed that one.
func Folder() string {
	return filepath.Join(os.TempDir(), "infer-net-"+strconv.Itoa(os.Getuid()))
}

// EnsureFolder makes Folder if it is missing, so that the sandbox can
// cover it before the first proxy starts: a sandbox started earlier would
// otherwise keep in sight the sockets of proxies started after it.
func EnsureFolder() (string, error) { return makeFolder() }

// makeFolder makes Folder, or checks that the one there is this user's
// own folder (not a link) and no one else's to enter, and returns it.
func makeFolder() (string, error) {
	dir := Folder()
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() || !ownedByUs(fi) {
		return "", fmt.Errorf("%s is not a folder of this user's; remove it", dir)
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// removeStale removes the socket folders in parent that an infer killed
// before its Close left behind: those whose socket is there and refuses
// connections, which a listening proxy's never does. A folder without a
// socket may be a proxy between making its folder and listening, and is
// left alone.
func removeStale(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "infer-net-") {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		c, err := net.Dial("unix", filepath.Join(dir, "proxy.sock"))
		if err == nil {
			c.Close()
			continue
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			os.RemoveAll(dir)
		}
	}
}
