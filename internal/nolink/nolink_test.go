package nolink

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// tree makes dir/real/f.txt ("inside"), a secret beside it, and links:
// dir/link → real (a folder), dir/real/lf → f.txt, dir/real/out → secret.
func tree(t *testing.T) (dir, secret string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	secret = filepath.Join(dir, "secret")
	must(t, os.Mkdir(filepath.Join(dir, "real"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "real/f.txt"), []byte("inside"), 0o644))
	must(t, os.WriteFile(secret, []byte("SECRET"), 0o600))
	must(t, os.Symlink("real", filepath.Join(dir, "link")))
	must(t, os.Symlink("f.txt", filepath.Join(dir, "real/lf")))
	must(t, os.Symlink(secret, filepath.Join(dir, "real/out")))
	return dir, secret
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func content(t *testing.T, f *os.File, err error) string {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Both ways of opening, openat2 where the kernel has it and the walk
// element by element, refuse a link anywhere in the path and open the
// rest.
func TestOpenRefusesLinks(t *testing.T) {
	dir, _ := tree(t)
	for name, open := range map[string]func(string) (*os.File, error){
		"Open":     Open,
		"walkOpen": func(p string) (*os.File, error) { return walkOpen(p, os.O_RDONLY) },
	} {
		f, err := open(filepath.Join(dir, "real/f.txt"))
		if got := content(t, f, err); got != "inside" {
			t.Errorf("%s: read %q", name, got)
		}
		for _, p := range []string{"link/f.txt", "real/lf", "real/out", "link"} {
			f, err := open(filepath.Join(dir, p))
			if err == nil {
				f.Close()
				t.Errorf("%s(%s) opened through a link", name, p)
			} else if !errors.Is(err, ErrLink) {
				t.Errorf("%s(%s): %v, want ErrLink", name, p, err)
			}
		}
		if _, err := open(filepath.Join(dir, "real/none")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s of a missing file: %v", name, err)
		}
	}
}

func TestDirCreatesAndRefusesLinks(t *testing.T) {
	dir, _ := tree(t)
	d, err := Dir(filepath.Join(dir, "real/a/b"), true, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if info, err := os.Lstat(filepath.Join(dir, "real/a/b")); err != nil || !info.IsDir() {
		t.Fatalf("the folders were not made: %v, %v", info, err)
	}
	for _, create := range []bool{false, true} {
		if d, err := Dir(filepath.Join(dir, "link/c"), create, 0o755); !errors.Is(err, ErrLink) {
			if d != nil {
				d.Close()
			}
			t.Errorf("Dir(link/c, create %v): %v, want ErrLink", create, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "real/c")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a folder was made through the link: %v", err)
	}
}

// Replace puts a new file in place of a link, never writing through it,
// and of a file, keeping nothing of the old content.
func TestReplaceNeverWritesThroughALink(t *testing.T) {
	dir, secret := tree(t)
	d, err := Dir(filepath.Join(dir, "real"), false, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st, err := Lstat(d, "out")
	if err != nil || !IsLink(st) {
		t.Fatalf("Lstat(out): %v, %v", st, err)
	}
	must(t, Replace(d, "out", []byte("new"), 0o640))
	if data, _ := os.ReadFile(secret); string(data) != "SECRET" {
		t.Errorf("the link's target changed to %q", data)
	}
	info, err := os.Lstat(filepath.Join(dir, "real/out"))
	if err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != 0o640 {
		t.Errorf("out is %v, %v; want a regular file with mode 0640", info, err)
	}
	must(t, Replace(d, "f.txt", []byte("two"), 0o644))
	f, err := At(d, "f.txt")
	if got := content(t, f, err); got != "two" {
		t.Errorf("f.txt is %q", got)
	}
	if _, err := At(d, "lf"); !errors.Is(err, ErrLink) {
		t.Errorf("At(lf): %v, want ErrLink", err)
	}
	if target, err := Readlink(d, "lf"); err != nil || target != "f.txt" {
		t.Errorf("Readlink(lf) = %q, %v", target, err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "real"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Errorf("temporary files were left: %v", entries)
	}
	for _, bad := range []string{"", ".", "..", "a/b"} {
		if err := Replace(d, bad, nil, 0o644); err == nil {
			t.Errorf("Replace(%q) worked", bad)
		}
	}
}
