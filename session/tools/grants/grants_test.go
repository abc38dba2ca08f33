package grants

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestMain doubles as a helper process that adds grants, so the test can
// run several processes against one file at once.
func TestMain(m *testing.M) {
	if path := os.Getenv("GRANTS_HELPER_PATH"); path != "" {
		os.Exit(helperAdd(path, os.Getenv("GRANTS_HELPER_NAME")))
	}
	os.Exit(m.Run())
}

func helperAdd(path, name string) int {
	s, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for i := range 25 {
		if _, err := s.Add(Grant{Kind: KindBash, Tool: "Bash", Prefix: name + " " + strconv.Itoa(i)}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

func TestAddListRevokePersist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "project", "grants.json")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if gs, err := s.List(); err != nil || len(gs) != 0 {
		t.Fatalf("new store: %v %v", gs, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open or List created the file: %v", err)
	}
	w, err := s.Add(Grant{Kind: KindTool, Tool: "Write"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Add(Grant{Kind: KindBash, Tool: "Bash", Prefix: "git commit"})
	if err != nil {
		t.Fatal(err)
	}
	site, err := s.Add(Grant{Kind: KindSite, Tool: "BrowserClick", Site: "https://github.com"})
	if err != nil {
		t.Fatal(err)
	}
	if w.ID == "" || w.ID == b.ID || b.ID == site.ID || w.CreatedAt.IsZero() {
		t.Fatalf("ids/times not assigned: %+v %+v %+v", w, b, site)
	}
	again, err := s.Add(Grant{Kind: KindBash, Tool: "Bash", Prefix: "git commit"})
	if err != nil || again.ID != b.ID {
		t.Fatalf("duplicate Add = %+v, %v; want the existing grant %s", again, err, b.ID)
	}

	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("grants file mode %v, want 0600", info.Mode().Perm())
	}

	reopened, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	gs, err := reopened.List()
	if err != nil || len(gs) != 3 || gs[0].ID != w.ID || gs[1].Prefix != "git commit" || gs[2].Site != "https://github.com" {
		t.Fatalf("after reopen: %+v %v", gs, err)
	}

	if err := reopened.Revoke(b.ID); err != nil {
		t.Fatal(err)
	}
	// The first store sees the other's revoke: every call reads the file.
	gs, _ = s.List()
	if len(gs) != 2 || gs[0].ID != w.ID || gs[1].ID != site.ID {
		t.Fatalf("after revoke: %+v", gs)
	}
	err = s.Revoke(b.ID)
	if !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), "infer permissions list") {
		t.Fatalf("revoking twice: %v", err)
	}
}

func TestAddRejectsIncompleteGrants(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "grants.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []Grant{
		{Kind: KindTool},
		{Kind: KindBash, Tool: "Bash"},
		{Kind: KindSite, Tool: "BrowserClick"},
		{Kind: "everything", Tool: "Bash"},
	} {
		if _, err := s.Add(g); err == nil {
			t.Errorf("Add(%+v) accepted", g)
		}
	}
}

func TestCorruptFileIsReportedAndKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grants.json")
	bad := []byte(`{"version":1,"grants":[{"id":"x"`)
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("Open corrupt = %v", err)
	}
	// A store opened before the corruption must not overwrite it either.
	s := &Store{path: path, now: time.Now}
	if _, err := s.Add(Grant{Kind: KindTool, Tool: "Write"}); err == nil {
		t.Fatal("Add on a corrupt file succeeded")
	}
	if got, _ := os.ReadFile(path); string(got) != string(bad) {
		t.Fatalf("corrupt file was changed to %q", got)
	}

	for name, content := range map[string]string{
		"no id":       `{"version":1,"grants":[{"kind":"tool","tool":"Write"}]}`,
		"bad kind":    `{"version":1,"grants":[{"id":"a","kind":"all","tool":"Write"}]}`,
		"new version": `{"version":99,"grants":[]}`,
	} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(path); err == nil {
			t.Errorf("%s: Open accepted %s", name, content)
		}
	}
}

func TestConcurrentGoroutines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grants.json")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Separate stores share nothing in memory, like processes.
			s, err := Open(path)
			if err != nil {
				t.Error(err)
				return
			}
			for j := range 10 {
				if _, err := s.Add(Grant{Kind: KindBash, Tool: "Bash", Prefix: fmt.Sprintf("cmd%d %d", i, j)}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	s, _ := Open(path)
	if gs, err := s.List(); err != nil || len(gs) != 80 {
		t.Fatalf("got %d grants (%v), want 80", len(gs), err)
	}
}

func TestConcurrentProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "grants.json")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	for i := range 4 {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), "GRANTS_HELPER_PATH="+path, "GRANTS_HELPER_NAME=proc"+strconv.Itoa(i))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("helper process: %v", err)
		}
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	gs, err := s.List()
	if err != nil || len(gs) != 100 {
		t.Fatalf("got %d grants (%v), want 100: a process lost another's writes", len(gs), err)
	}
	ids := map[string]bool{}
	for _, g := range gs {
		if ids[g.ID] {
			t.Fatalf("duplicate id %s", g.ID)
		}
		ids[g.ID] = true
	}
}

func TestGrantString(t *testing.T) {
	cases := map[string]Grant{
		"every Write call":                     {Kind: KindTool, Tool: "Write"},
		"Bash commands starting with `gh api`": {Kind: KindBash, Tool: "Bash", Prefix: "gh api"},
		"BrowserClick on https://github.com":   {Kind: KindSite, Tool: "BrowserClick", Site: "https://github.com"},
	}
	for want, g := range cases {
		if g.String() != want {
			t.Errorf("%+v.String() = %q, want %q", g, g.String(), want)
		}
	}
}

// TestHostGrants: a host grant needs its host, lists like any other and
// says what it lets through.
func TestHostGrants(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "grants.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(Grant{Kind: KindHost, Tool: "Network"}); err == nil {
		t.Fatal("a host grant without a host was saved")
	}
	g, err := s.Add(Grant{Kind: KindHost, Tool: "Network", Host: "proxy.golang.org"})
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Add(Grant{Kind: KindHost, Tool: "Network", Host: "proxy.golang.org"}); again.ID != g.ID {
		t.Fatal("the same host was granted twice")
	}
	if other, _ := s.Add(Grant{Kind: KindHost, Tool: "Network", Host: "127.0.0.1:8080"}); other.ID == g.ID {
		t.Fatal("two hosts share a grant")
	}
	if !strings.Contains(g.String(), "proxy.golang.org") {
		t.Fatalf("String() = %q", g.String())
	}
	if err := s.Revoke(g.ID); err != nil {
		t.Fatal(err)
	}
}
