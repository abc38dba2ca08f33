package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A killed infer never ran its Close, so its private temp folder stayed
// in /tmp. The next one to make its own removes such folders, and only
// those: a folder whose owner still holds its lock stays, and so do
// folders without a lock file and names infer did not make.
func TestPrivateTempRemovesFoldersOfEndedProcesses(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)

	// Another process makes a folder and ends without its Close: its
	// lock goes with it.
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperMakesAPrivateTemp$")
	helper.Env = append(os.Environ(), "INFER_TEST_PRIVATE_TEMP=1")
	out, err := helper.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	_, rest, found := strings.Cut(string(out), "dir=")
	if !found || len(strings.Fields(rest)) == 0 {
		t.Fatalf("the helper named no folder:\n%s", out)
	}
	orphan := strings.Fields(rest)[0]
	if _, err := os.Stat(filepath.Join(orphan, "left-by-a-command")); err != nil {
		t.Fatalf("the helper's folder %q: %v", orphan, err)
	}

	// A running infer's folder, held by this test.
	live, err := makePrivateTemp()
	if err != nil {
		t.Fatal(err)
	}
	defer live.remove()
	mk := func(name string) string {
		t.Helper()
		p := filepath.Join(tmp, name)
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unlocked := mk(privateTempPrefix + "123-from-an-older-infer") // no lock file
	// What a confined command might leave in its folder's place of the
	// lock: a FIFO (opening it would wait for a writer) and a link.
	fifo := mk(privateTempPrefix + "124-fifo")
	if err := syscall.Mkfifo(filepath.Join(fifo, ownerLock), 0o600); err != nil {
		t.Fatal(err)
	}
	link := mk(privateTempPrefix + "125-link")
	if err := os.Symlink(filepath.Join(tmp, "elsewhere"), filepath.Join(link, ownerLock)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "elsewhere"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	other := mk("someone-elses-folder")

	e := &Env{}
	dir, err := e.privateTemp()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("the ended process's folder is still there (%v)", err)
	}
	for _, keep := range []string{live.path, unlocked, other, fifo, link} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(keep), err)
		}
	}
	if want := privateTempPrefix + strconv.Itoa(os.Getpid()) + "-"; !strings.HasPrefix(filepath.Base(dir), want) || filepath.Dir(dir) != tmp {
		t.Errorf("the new folder is %s, want %s… in %s", dir, want, tmp)
	}
	if orphaned(dir) {
		t.Error("a running Env's folder reads as orphaned")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Close left %s (%v)", dir, err)
	}
}

// TestHelperMakesAPrivateTemp is the process that ends without its Close
// in the test above; on its own it does nothing.
func TestHelperMakesAPrivateTemp(t *testing.T) {
	if os.Getenv("INFER_TEST_PRIVATE_TEMP") != "1" {
		t.Skip("a helper process of TestPrivateTempRemovesFoldersOfEndedProcesses")
	}
	d, err := makePrivateTemp()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(d.path, "left-by-a-command"), 0o700); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("dir=" + d.path + "\n")
	os.Exit(0) // no Close, as if killed
}
