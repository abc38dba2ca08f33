// Package asuser starts the running test binary again as another user, for
// tests of what infer refuses to another local user (its bridge, the port
// it listens on). Only root can do that, and only on Linux is it needed;
// Command says so through t.Skip elsewhere.
package asuser

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// Nobody is the uid (and gid) tests run the other user's process as.
const Nobody = 65534

// Command returns the test binary as a command to run as uid and gid
// (Nobody, usually), with env as its whole environment; a negative uid
// runs it as the test's own user, from the same copy. The go tool builds
// test binaries in a folder only root may enter, so the command runs a
// copy in a folder every user can read, removed when t ends. The test is
// skipped where it cannot run: not Linux, or not root.
func Command(t testing.TB, uid int, env ...string) *exec.Cmd {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("starting a process as another user is tested on Linux only")
	}
	if os.Getuid() != 0 {
		t.Skip("starting a process as another user needs root")
	}
	dir, err := os.MkdirTemp("", "infer-asuser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(self))
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = env
	if uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	return cmd
}
