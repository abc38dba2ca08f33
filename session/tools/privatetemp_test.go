package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A killed infer never ran its Close, so its private temp folder stayed
// in /tmp. The next one to make its own removes such folders, and only
// those: a running process's folder and names it did not make stay.
func TestPrivateTempRemovesFoldersOfEndedProcesses(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name string) string {
		t.Helper()
		p := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(p, "left-by-a-command"), 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	orphan := mk(privateTempPrefix + strconv.Itoa(ended.Process.Pid) + "-123")
	live := mk(privateTempPrefix + strconv.Itoa(os.Getppid()) + "-456")
	odd := mk(privateTempPrefix + "not-a-pid")
	other := mk("someone-elses-folder")

	e := &Env{}
	dir, err := e.privateTemp()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("the ended process's folder is still there (%v)", err)
	}
	for _, keep := range []string{live, odd, other} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(keep), err)
		}
	}
	if want := privateTempPrefix + strconv.Itoa(os.Getpid()) + "-"; !strings.HasPrefix(filepath.Base(dir), want) || filepath.Dir(dir) != tmp {
		t.Errorf("the new folder is %s, want %s… in %s", dir, want, tmp)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Close left %s (%v)", dir, err)
	}
}
