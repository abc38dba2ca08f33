package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/infer-workspace/infer/session/netproxy"
)

// bwrapArgs turns p into bubblewrap's arguments, up to the command. Later
// mounts cover earlier ones, so the order is the policy: the whole file
// system read-only, then what may be written, then what must stay
// read-only inside that, then what may not be read at all.
func bwrapArgs(p Policy, root bool) ([]string, error) {
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
	// Through the proxy or not at all: either way the command gets a
	// network namespace of its own, with only loopback (bwrap brings it
	// up), no route out and no resolver.
	if !p.Network || p.NetProxy != "" {
		a = append(a, "--unshare-net")
	}
	a = append(a, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
	// The forwarder runs before every command, network or not: it also
	// gives the command a kernel session keyring of its own.
	helper, err := netproxy.Helper()
	if err != nil {
		return nil, err
	}
	netBinds := []string{"--ro-bind", helper, netHelperInside}
	if p.NetProxy != "" && p.Network {
		netBinds = append(netBinds, "--bind", p.NetProxy, netSocketInside)
	}
	a = append(a, hideRuntime(netBinds)...)
	if p.TempDir != "" && !p.ReadOnly {
		a = append(a, "--bind", resolved(p.TempDir), "/tmp")
	} else {
		a = append(a, "--tmpfs", "/tmp")
	}
	if isDir("/var/tmp") {
		a = append(a, "--tmpfs", "/var/tmp")
	}
	hostTmp := hostTemp(p.Home)
	if t := hostTmp; t != "" {
		// Like /tmp, and before the project and sandbox.writable are
		// bound, in case they are in it.
		a = append(a, "--tmpfs", t)
	}
	rootDir := resolved(p.Root)
	if p.ReadOnly || !writableRoot(rootDir, p.Home) {
		// Bound again: a project under /tmp would otherwise be hidden by
		// the private /tmp.
		a = append(a, "--ro-bind", rootDir, rootDir)
	} else {
		for _, w := range existing(p.Writable) {
			w = resolved(w)
			a = append(a, "--bind", w, w)
		}
		a = append(a, "--bind", rootDir, rootDir)
		prot, err := protect(rootDir)
		if err != nil {
			return nil, err
		}
		a = append(a, prot...)
	}
	hide := append(append([]string(nil), p.DenyRead...), hostSockets...)
	folder, err := netproxy.EnsureFolder()
	if err != nil {
		return nil, fmt.Errorf("sandbox: the folder of infer's network proxies: %w", err)
	}
	if f := resolved(folder); !replaced(f) && (hostTmp == "" || !strings.HasPrefix(f, hostTmp+"/")) {
		// Every proxy's socket folder, when its temp folder is not
		// covered already; this command's socket is bound at
		// /run/infer-net from outside.
		hide = append(hide, f)
	}
	for _, d := range existing(hide) {
		d = resolved(d)
		if underRuntime(d) {
			continue // hidden with /run, which is read-only by now
		}
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
	return a, nil
}

// hideRuntime covers /run (and a /var/run that is not a link to it) with
// an empty tmpfs: it holds the sockets of services that act for whoever
// connects — the session bus (systemd-run starts programs outside any
// sandbox), the system bus and systemd (which trust uid 0), gpg and ssh
// agents, Wayland, rootless container engines. Only the resolver's folders
// come back, read-only, because /etc/resolv.conf often links into them,
// and netBinds, which put the network forwarder and its proxy's socket
// into /run/infer-net.
func hideRuntime(netBinds []string) []string {
	var a []string
	for _, dir := range []string{"/run", "/var/run"} {
		if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
			continue // missing, or /var/run → /run, already covered
		}
		a = append(a, "--tmpfs", dir)
	}
	for _, keep := range []string{"/run/systemd/resolve", "/run/resolvconf", "/run/NetworkManager/resolv.conf"} {
		if _, err := os.Stat(keep); err == nil {
			a = append(a, "--ro-bind", keep, keep)
		}
	}
	if len(netBinds) > 0 && len(a) == 0 {
		a = append(a, "--tmpfs", "/run")
	}
	a = append(a, netBinds...)
	if len(a) > 0 {
		a = append(a, "--remount-ro", "/run")
	}
	return a
}

// Where the network forwarder and its proxy's socket are inside the
// sandbox; /run is the sandbox's own tmpfs, so nothing is left behind.
const (
	netHelperInside = "/run/infer-net/forward"
	netSocketInside = "/run/infer-net/proxy.sock"
)

// writableRoot reports whether a project at root may be bound writable.
// Not when it is / or the person's home or above it: infer started in the
// home (or under a dotfiles repository there) would otherwise let
// commands rewrite ~/.bashrc and every tool's configuration.
func writableRoot(root, home string) bool {
	if root == string(filepath.Separator) {
		return false
	}
	if home == "" {
		return true
	}
	home = resolved(home)
	rel, err := filepath.Rel(root, home)
	return err != nil || rel != "." && (rel == ".." || filepath.IsAbs(rel) || len(rel) >= 3 && rel[:3] == ".."+string(filepath.Separator))
}

// protect keeps root's ProtectedPaths read-only inside a writable project.
// A missing one is covered by an empty read-only folder, or the command
// could create it (git init, then a hook); bwrap leaves an empty folder
// behind as the mount point, which git and infer both ignore. A protected
// path that is a symbolic link cannot be covered (a mount follows it, and
// the command could replace the link), so the command is not run.
func protect(root string) ([]string, error) {
	var a []string
	for _, p := range ProtectedPaths(root) {
		fi, err := os.Lstat(p)
		switch {
		case err == nil && fi.Mode()&os.ModeSymlink != 0:
			return nil, fmt.Errorf("sandbox: %s is a symbolic link, which the sandbox cannot keep read-only; ask the person to run the command", p)
		case err == nil:
			a = append(a, "--ro-bind", p, p)
		default:
			a = append(a, "--tmpfs", p, "--remount-ro", p)
		}
	}
	return a, nil
}

// hostTemp is infer's temp folder (TMPDIR), resolved, when the sandbox
// should cover it with an empty tmpfs as it does /tmp: it holds the
// private temp folders of every infer of this user (another session's
// files) and their proxies' sockets. Not when it is /tmp or /var/tmp or
// in them, which are covered already, nor when it is missing (bwrap
// would have to make it), a top-level folder or holds the person's home,
// whose hiding would take the tools and their configuration away; ""
// then.
func hostTemp(home string) string {
	t := resolved(os.TempDir())
	if replaced(t) || filepath.Dir(t) == string(filepath.Separator) || !isDir(t) {
		return ""
	}
	if home != "" {
		if rel, err := filepath.Rel(t, resolved(home)); err == nil && (rel == "." || !filepath.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))) {
			return ""
		}
	}
	return t
}

// replaced reports whether p is a path the sandbox covers with a folder of
// its own whatever the policy: /tmp, /var/tmp, /run or /var/run, or
// something in them. Nothing more is mounted there: /run is read-only by
// then (bwrap could not make the mount point), and hidden already.
func replaced(p string) bool {
	return under(p, "/tmp", "/var/tmp") || underRuntime(p)
}

// underRuntime reports whether p is /run or /var/run or in them: covered
// by hideRuntime's tmpfs whatever the policy.
func underRuntime(p string) bool { return under(p, "/run", "/var/run") }

// under reports whether p is one of dirs or inside one.
func under(p string, dirs ...string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
