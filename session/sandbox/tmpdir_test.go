package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/netproxy"
)

// TestOtherSandboxesAreOutOfSightWithATempFolderOutsideTmp: with infer's
// TMPDIR outside /tmp (which the sandbox replaces), a confined command
// sees its own proxy socket but not another command's or server's, and
// not another infer's private temp folder, with the network on or off.
func TestOtherSandboxesAreOutOfSightWithATempFolderOutsideTmp(t *testing.T) {
	sb := confined(t)
	if sb.Kind() != Bubblewrap {
		t.Skip("the proxies' sockets are bound in only under bubblewrap")
	}
	base := newWorldOffTmp(t).outside
	tmpdir := filepath.Join(base, "tmpd")
	project := filepath.Join(base, "proj")
	other := filepath.Join(tmpdir, "infer-sandbox-tmp-1-other")
	own := filepath.Join(tmpdir, "infer-sandbox-tmp-2-own")
	for _, d := range []string{project, other, own} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(other, "notes"), []byte("OTHER SESSION"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmpdir)
	refuse := func(context.Context, netproxy.Dest) error { return errors.New("no") }
	var sockets []string
	for range 2 {
		px, err := netproxy.Start(refuse)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { px.Close() })
		sockets = append(sockets, px.Socket())
	}
	if !strings.HasPrefix(sockets[0], tmpdir+"/") {
		t.Fatalf("the proxy's socket %s is not in TMPDIR %s", sockets[0], tmpdir)
	}
	script := "test -e " + sockets[0] + " && echo FIRST-VISIBLE; test -e " + sockets[1] + " && echo OWN-PATH-VISIBLE; " +
		"cat " + filepath.Join(other, "notes") + " 2>/dev/null; ls " + tmpdir + " | sed s/^/LS:/; test -S /run/infer-net/proxy.sock && echo OWN-SOCKET; echo kept > /tmp/kept"
	for _, network := range []bool{true, false} {
		out, _ := run(t, sb, Policy{Root: project, Network: network, NetProxy: sockets[1], TempDir: own}, script)
		if strings.Contains(out, "VISIBLE") || strings.Contains(out, "OTHER SESSION") || strings.Contains(out, "LS:") {
			t.Errorf("network %v: another sandbox's socket or temp folder is in sight: %q", network, out)
		}
		if network != strings.Contains(out, "OWN-SOCKET") {
			t.Errorf("network %v: the command's own socket: %q", network, out)
		}
		if b, _ := os.ReadFile(filepath.Join(own, "kept")); string(b) != "kept\n" {
			t.Errorf("network %v: the private temp folder did not keep the file: %q", network, b)
		}
	}
}

// TestProxiesAreOutOfSightWhenTheTempFolderCannotBeCovered: a TMPDIR that
// holds the person's home is not covered (that would hide the home), but
// the proxies' folder in it still is.
func TestProxiesAreOutOfSightWhenTheTempFolderCannotBeCovered(t *testing.T) {
	sb := confined(t)
	if sb.Kind() != Bubblewrap {
		t.Skip("the proxies' sockets are bound in only under bubblewrap")
	}
	tmpdir := newWorldOffTmp(t).outside
	home := filepath.Join(tmpdir, "home")
	project := filepath.Join(home, "proj")
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmpdir)
	first, err := netproxy.Start(func(context.Context, netproxy.Dest) error { return errors.New("no") })
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	out, _ := run(t, sb, Policy{Root: project, Home: home}, "test -e "+first.Socket()+" && echo FIRST-VISIBLE; test -d "+project+" && echo PROJECT")
	if strings.Contains(out, "FIRST-VISIBLE") || !strings.Contains(out, "PROJECT") {
		t.Errorf("want the project and not the other proxy's socket: %q", out)
	}
}

// TestWhichTempFolderIsCovered: only a TMPDIR that exists, is outside
// /tmp and /var/tmp, is not a top-level folder and does not hold the home
// is covered; bwrap could not cover a missing one without making it.
func TestWhichTempFolderIsCovered(t *testing.T) {
	base := newWorldOffTmp(t).outside
	for _, c := range []struct {
		tmpdir, home string
		covered      bool
	}{
		{base, "", true},
		{base, "/nonexistent-home", true},
		{base, filepath.Join(base, "home"), false},
		{filepath.Join(base, "missing"), "", false},
		{"/tmp", "", false},
		{"/", "", false},
		{"/usr", "", false},
	} {
		t.Setenv("TMPDIR", c.tmpdir)
		if got := hostTemp(c.home); (got != "") != c.covered {
			t.Errorf("TMPDIR %s, home %q: hostTemp = %q, want covered %v", c.tmpdir, c.home, got, c.covered)
		}
	}
}

// TestATempFolderUnderRunStillRuns: /run is an empty read-only tmpfs by
// the time the temp folder would be covered, so bwrap could not make a
// mount point there, and with TMPDIR=$XDG_RUNTIME_DIR every confined
// command failed to start. Such a temp folder is hidden with /run instead.
func TestATempFolderUnderRunStillRuns(t *testing.T) {
	sb := confined(t)
	w := newWorldOffTmp(t)
	if !isDir("/run") {
		t.Skip("this system has no /run")
	}
	dir, err := os.MkdirTemp("/run", "infer-test-tmp-")
	if err != nil {
		t.Skipf("cannot make a folder in /run here: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Setenv("TMPDIR", dir)
	if out, ok := run(t, sb, w.policy(), "echo ran"); !ok || strings.TrimSpace(out) != "ran" {
		t.Fatalf("with TMPDIR under /run: %q, %v", out, ok)
	}
}

// TestTheProxiesFolderIsCoveredBeforeAnyProxyStarts: with a temp folder
// the sandbox does not cover whole (here one at the top of the tree), the
// proxies' folder is covered on its own; it is made if missing, or a
// sandbox started before the first proxy would keep in sight the sockets
// of every proxy started after it.
func TestTheProxiesFolderIsCoveredBeforeAnyProxyStarts(t *testing.T) {
	w := newWorldOffTmp(t)
	top, err := os.MkdirTemp("/", "infer-test-tmpdir-")
	if err != nil {
		t.Skipf("cannot make a folder at the top of the tree here: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	t.Setenv("TMPDIR", top)
	folder := filepath.Join(top, fmt.Sprintf("infer-net-%d", os.Getuid()))
	p := w.policy()
	p.Network = false
	args, err := bwrapArgs(p, os.Geteuid() == 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(args, folder) || !isDir(folder) {
		t.Fatalf("the proxies' folder %s is not covered (made: %v): %q", folder, isDir(folder), args)
	}
}
