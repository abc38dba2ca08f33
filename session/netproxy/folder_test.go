package netproxy

import (
	"context"
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
