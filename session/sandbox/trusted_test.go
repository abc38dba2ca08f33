package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// plant puts programs that leave a mark when run into a folder first on
// PATH, as a command could in an activated virtualenv's bin folder.
func plant(t *testing.T, names ...string) (dir, mark string) {
	t.Helper()
	dir = t.TempDir()
	mark = filepath.Join(dir, "ran")
	for _, n := range names {
		script := "#!/bin/sh\necho " + n + " >> " + mark + "\nexit 0\n"
		if err := os.WriteFile(filepath.Join(dir, n), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir, mark
}

// TestAPlantedSandboxProgramIsNotUsed is the finding 4: a bwrap
// planted first on PATH made doctor say "ok sandbox" while nothing was
// confined. The sandbox program and the shell come from fixed places.
func TestAPlantedSandboxProgramIsNotUsed(t *testing.T) {
	dir, mark := plant(t, "bwrap", "sandbox-exec", "bash")
	sb := Detect()
	if strings.HasPrefix(sb.Program(), dir) {
		t.Errorf("the sandbox program came from PATH: %s", sb.Program())
	}
	shell, err := Shell()
	if err != nil {
		t.Skipf("no trusted bash here: %v", err)
	}
	if strings.HasPrefix(shell, dir) || !filepath.IsAbs(shell) {
		t.Errorf("the shell came from PATH: %s", shell)
	}
	if sb.Confines() {
		w := newWorld(t)
		cmd, err := sb.Command(w.policy(), []string{"PATH=" + os.Getenv("PATH")}, shell, "-c", "echo confined")
		if err != nil {
			t.Fatal(err)
		}
		if out, err := cmd.CombinedOutput(); err != nil || string(out) != "confined\n" {
			t.Errorf("a confined command: %q, %v", out, err)
		}
	}
	if b, err := os.ReadFile(mark); err == nil {
		t.Errorf("a planted program ran: %s", b)
	}
}

// TestOnlyRootOwnedProgramsAreTrusted: a program anyone but root can
// replace, or in a folder anyone but root can write, is not trusted.
func TestOnlyRootOwnedProgramsAreTrusted(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no owners here")
	}
	if p, err := Trusted("/bin/sh"); err != nil || !filepath.IsAbs(p) {
		t.Errorf("/bin/sh: %q, %v", p, err)
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "bwrap")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Trusted(prog); err == nil {
		t.Errorf("%s, under a temp folder, was trusted", prog)
	}
	if _, err := Trusted(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("a missing program: %v", err)
	}
	// One step at a time, for a root-owned file whose mode lets others
	// write it, and one owned by someone else.
	if err := os.Chmod(prog, 0o775); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(prog)
	if err != nil {
		t.Fatal(err)
	}
	if uid, _ := ownerOf(fi); uid == 0 {
		if err := rootOnly(prog, fi); err == nil || !strings.Contains(err.Error(), "written by others") {
			t.Errorf("a group-writable file: %v", err)
		}
		if err := os.Chmod(prog, 0o755); err != nil {
			t.Fatal(err)
		}
		if fi, err = os.Lstat(prog); err != nil {
			t.Fatal(err)
		}
		if err := rootOnly(prog, fi); err != nil {
			t.Errorf("a root-owned file only root writes: %v", err)
		}
		if err := os.Chown(prog, 1000, 1000); err != nil {
			t.Fatal(err)
		}
		if fi, err = os.Lstat(prog); err != nil {
			t.Fatal(err)
		}
	}
	if err := rootOnly(prog, fi); err == nil || !strings.Contains(err.Error(), "not root") {
		t.Errorf("a file owned by uid 1000: %v", err)
	}
	// A link to a trusted program is followed; the real file is used.
	link := filepath.Join(dir, "sh")
	if err := os.Symlink("/bin/sh", link); err != nil {
		t.Fatal(err)
	}
	if p, err := Trusted(link); err != nil || strings.HasPrefix(p, dir) {
		t.Errorf("a link to /bin/sh: %q, %v", p, err)
	}
}

// TestOneFileIsPassedOverOnce: two candidates that are one file (as /bin
// and /usr/bin often are) give its reason once, not twice.
func TestOneFileIsPassedOverOnce(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	var candidates []string
	for _, name := range []string{"a", "b"} {
		link := filepath.Join(dir, name)
		if err := os.Symlink(real, link); err != nil {
			t.Fatal(err)
		}
		candidates = append(candidates, link)
	}
	_, err := firstTrusted("tool", candidates)
	if err == nil {
		t.Fatal("a folder was trusted as a program")
	}
	if n := strings.Count(err.Error(), real); n != 1 {
		t.Fatalf("the shared file is named %d times: %v", n, err)
	}
}
