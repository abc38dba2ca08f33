package sandbox

import (
	"os"
	"path/filepath"
)

// bwrapArgs turns p into bubblewrap's arguments, up to the command. Later
// mounts cover earlier ones, so the order is the policy: the whole file
// system read-only, then what may be written, then what must stay
// read-only inside that, then what may not be read at all.
func bwrapArgs(p Policy, root bool) []string {
	a := []string{
		// The command and everything it starts die with the bwrap that
		// infer started, and with it when infer dies: the pid namespace's
		// first process ending takes the whole namespace down.
		// (No --new-session: the caller starts bwrap in a session of its
		// own, without the person's terminal, which keeps the command in
		// bwrap's process group, where a timeout's signal reaches it.)
		"--die-with-parent",
		// Other processes, infer's included, are not there to read.
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
	}
	if !p.Network {
		a = append(a, "--unshare-net")
	}
	a = append(a, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
	if p.TempDir != "" && !p.ReadOnly {
		a = append(a, "--bind", resolved(p.TempDir), "/tmp")
	} else {
		a = append(a, "--tmpfs", "/tmp")
	}
	if isDir("/var/tmp") {
		a = append(a, "--tmpfs", "/var/tmp")
	}
	rootDir := resolved(p.Root)
	if p.ReadOnly {
		// Bound again: a project under /tmp would otherwise be hidden by
		// the private /tmp.
		a = append(a, "--ro-bind", rootDir, rootDir)
	} else {
		for _, w := range existing(p.Writable) {
			w = resolved(w)
			a = append(a, "--bind", w, w)
		}
		a = append(a, "--bind", rootDir, rootDir)
		a = append(a, protect(rootDir)...)
	}
	for _, d := range existing(append(append([]string(nil), p.DenyRead...), hostSockets...)) {
		d = resolved(d)
		if isDir(d) {
			a = append(a, "--tmpfs", d, "--remount-ro", d)
		} else {
			a = append(a, "--ro-bind", os.DevNull, d)
		}
	}
	if root {
		// bwrap started by root keeps most capabilities inside, and
		// CAP_SYS_ADMIN would let the command unmount its own walls.
		a = append(a, "--cap-drop", "ALL")
	}
	a = append(a, "--chdir", rootDir, "--setenv", "TMPDIR", "/tmp")
	return a
}

// protect keeps root's ProtectedPaths read-only inside a writable project.
// A missing .infer or .git/hooks folder is covered by an empty read-only
// one, or the command could create it; bwrap leaves an empty folder behind
// as the mount point. A missing .git/config is left alone: inventing one
// would change what git sees.
func protect(root string) []string {
	var a []string
	for _, p := range ProtectedPaths(root) {
		if _, err := os.Lstat(p); err == nil {
			a = append(a, "--ro-bind", p, p)
			continue
		}
		if filepath.Base(p) == "config" || !isDir(filepath.Dir(p)) {
			continue
		}
		a = append(a, "--tmpfs", p, "--remount-ro", p)
	}
	return a
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
