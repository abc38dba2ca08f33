package netproxy

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProxiesShareOneOwnerOnlyFolder: every proxy's socket folder is in
// Folder, under TMPDIR as it is when the proxy starts, and a Folder that
// is a link (someone else's folder in a shared TMPDIR) is refused, not
// followed.
func TestProxiesShareOneOwnerOnlyFolder(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	p, err := Start(func(context.Context, Dest) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !strings.HasPrefix(p.Socket(), Folder()+string(filepath.Separator)) || !strings.HasPrefix(Folder(), tmp) {
		t.Fatalf("socket %s is not in %s", p.Socket(), Folder())
	}
	if fi, err := os.Stat(Folder()); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the folder: %v, %v", fi.Mode(), err)
	}
	other := t.TempDir()
	t.Setenv("TMPDIR", other)
	if err := os.Symlink(t.TempDir(), Folder()); err != nil {
		t.Fatal(err)
	}
	if p, err := Start(func(context.Context, Dest) error { return nil }); err == nil {
		p.Close()
		t.Fatal("a proxy started in a folder that is a link")
	}
}

// TestStartRemovesWhatKilledInfersLeft: a socket folder whose proxy is
// gone without its Close (infer was killed) is removed by the next Start;
// a live proxy's folder, and one not listening yet, are kept.
func TestStartRemovesWhatKilledInfersLeft(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	allow := func(context.Context, Dest) error { return nil }
	live, err := Start(allow)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	stale := filepath.Join(Folder(), "infer-net-killed")
	early := filepath.Join(Folder(), "infer-net-early")
	for _, d := range []string{stale, early} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("unix", filepath.Join(stale, "proxy.sock"))
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	next, err := Start(allow)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the killed proxy's folder is still there: %v", err)
	}
	for _, keep := range []string{filepath.Dir(live.Socket()), early} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s was removed: %v", keep, err)
		}
	}
}
