package sandbox

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/internal/testreq"
)

// confined returns the system's sandbox, skipping where there is none
// except under CI, whose .ci/run installs bubblewrap: there a missing
// sandbox must fail the run, not pass it silently.
func confined(t *testing.T) *Sandbox {
	t.Helper()
	sb := Detect()
	testreq.Check(t, testreq.Bubblewrap, sb.Confines(), sb.Problem())
	return sb
}

// world is a person's machine in miniature: a home with secret stores and
// infer's home, a project with a git folder, and a folder outside both.
type world struct {
	home, inferHome, project, outside, tmp string
}

func newWorld(t *testing.T) world { return newWorldIn(t, t.TempDir()) }

// newWorldOffTmp builds the world outside the host's /tmp, which the
// sandbox replaces, as a person's home and projects are.
func newWorldOffTmp(t *testing.T) world {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err == nil {
		err = os.MkdirAll(cache, 0o700)
	}
	if err != nil {
		t.Skipf("no folder outside /tmp to build in: %v", err)
	}
	base, err := os.MkdirTemp(cache, "infer-sandbox-test-")
	if err != nil {
		t.Skipf("no folder outside /tmp to build in: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	return newWorldIn(t, base)
}

func newWorldIn(t *testing.T, base string) world {
	t.Helper()
	w := world{
		home:    filepath.Join(base, "home"),
		project: filepath.Join(base, "home", "src", "proj"),
		outside: filepath.Join(base, "outside"),
		tmp:     filepath.Join(base, "private-tmp"),
	}
	w.inferHome = filepath.Join(w.home, ".infer")
	for _, d := range []string{w.inferHome, filepath.Join(w.home, ".ssh"), filepath.Join(w.project, ".git", "hooks"), filepath.Join(w.project, ".infer"), w.outside, w.tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(w.home, ".ssh", "id_ed25519"):             "PRIVATE KEY",
		filepath.Join(w.home, ".netrc"):                         "machine x password hunter2",
		filepath.Join(w.inferHome, "browser_use.yaml"):          "token: bridge-secret",
		filepath.Join(w.home, "notes.txt"):                      "ordinary notes",
		filepath.Join(w.project, "README.md"):                   "readme",
		filepath.Join(w.project, ".git", "config"):              "[core]\n",
		filepath.Join(w.project, ".git", "hooks", "pre-commit"): "#!/bin/sh\n",
		filepath.Join(w.project, ".infer", "config.yaml"):       "model: offline/demo\n",
		filepath.Join(w.outside, "secret.txt"):                  "outside secret",
	}
	for p, body := range files {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w world) policy() Policy {
	deny := append([]string{w.inferHome}, SecretStores(w.home)...)
	return Policy{Root: w.project, DenyRead: deny, Network: true, TempDir: w.tmp, Home: w.home}
}

// run runs script with bash in the sandbox and returns its output and
// whether it succeeded.
func run(t *testing.T, sb *Sandbox, p Policy, script string) (string, bool) {
	t.Helper()
	cmd, err := sb.Command(p, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Dir(filepath.Dir(p.Root))}, "bash", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err == nil
}

func TestConfinedCommandsCannotReadSecrets(t *testing.T) {
	sb := confined(t)
	w := newWorld(t)
	p := w.policy()
	for _, path := range []string{
		filepath.Join(w.home, ".ssh", "id_ed25519"),
		filepath.Join(w.home, ".netrc"),
		filepath.Join(w.inferHome, "browser_use.yaml"),
	} {
		if out, ok := run(t, sb, p, "cat "+path); ok || strings.Contains(out, "KEY") || strings.Contains(out, "hunter2") || strings.Contains(out, "bridge-secret") {
			t.Errorf("cat %s succeeded in the sandbox: %q", path, out)
		}
	}
	// A glob cannot find them either: the folder is empty inside.
	if out, _ := run(t, sb, p, "cat "+filepath.Join(w.home, ".ss?")+"/* 2>&1; ls -A "+w.inferHome); strings.Contains(out, "KEY") || strings.Contains(out, "browser_use") {
		t.Errorf("a glob reached a secret store: %q", out)
	}
	// What is not secret stays readable. (The test's home lies under the
	// host's /tmp, which the private /tmp hides, so a system file stands
	// in for an ordinary one.)
	if out, ok := run(t, sb, p, "head -c 5 /etc/passwd"); !ok || out != "root:" {
		t.Errorf("an ordinary file outside the project: %q, %v", out, ok)
	}
}

func TestConfinedCommandsWriteOnlyInsideTheProject(t *testing.T) {
	sb := confined(t)
	w := newWorld(t)
	p := w.policy()
	if out, ok := run(t, sb, p, "echo made > new.txt && mkdir -p sub && echo deep > sub/f"); !ok {
		t.Fatalf("writing inside the project failed: %s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(w.project, "new.txt")); string(b) != "made\n" {
		t.Errorf("new.txt = %q", b)
	}
	if out, ok := run(t, sb, p, "echo pwned > /usr/infer-sandbox-test"); ok {
		t.Errorf("writing /usr succeeded: %s", out)
	}
	// The test's folders outside the project lie under the host's /tmp:
	// inside, that is the private one, so a write there may succeed but
	// must not reach the real folder.
	for _, target := range []string{filepath.Join(w.outside, "x"), filepath.Join(w.home, "x"), filepath.Join(w.outside, "secret.txt")} {
		run(t, sb, p, "echo pwned > "+target)
	}
	if _, err := os.Stat(filepath.Join(w.home, "x")); err == nil {
		t.Error("a file appeared in the home folder")
	}
	if b, _ := os.ReadFile(filepath.Join(w.outside, "secret.txt")); string(b) != "outside secret" {
		t.Errorf("the outside file changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(w.outside, "x")); err == nil {
		t.Error("a file appeared outside the project")
	}
	// A symlink inside the project does not lead out of it.
	if err := os.Symlink(w.outside, filepath.Join(w.project, "link")); err != nil {
		t.Fatal(err)
	}
	if out, ok := run(t, sb, p, "echo pwned > link/y"); ok {
		t.Errorf("writing through a link to outside succeeded: %s", out)
	}
}

// TestOutsideTmpTheRestOfTheMachineIsReadOnly is the layout people have:
// home and projects on the real disk, seen through the read-only view.
func TestOutsideTmpTheRestOfTheMachineIsReadOnly(t *testing.T) {
	sb := confined(t)
	w := newWorldOffTmp(t)
	p := w.policy()
	if out, ok := run(t, sb, p, "cat "+filepath.Join(w.home, "notes.txt")); !ok || out != "ordinary notes" {
		t.Errorf("an ordinary file in the home folder: %q, %v", out, ok)
	}
	if out, ok := run(t, sb, p, "cat "+filepath.Join(w.outside, "secret.txt")+" >/dev/null && echo x > "+filepath.Join(w.outside, "new")); ok {
		t.Errorf("writing outside the project succeeded: %s", out)
	}
	if out, ok := run(t, sb, p, "cat "+filepath.Join(w.inferHome, "browser_use.yaml")+" "+filepath.Join(w.home, ".ssh", "id_ed25519")); ok || strings.Contains(out, "secret") || strings.Contains(out, "KEY") {
		t.Errorf("a secret was read: %q", out)
	}
	if out, ok := run(t, sb, p, "echo in > inside.txt"); !ok {
		t.Errorf("writing inside failed: %s", out)
	}
	if _, err := os.Stat(filepath.Join(w.outside, "new")); err == nil {
		t.Error("a file appeared outside the project")
	}
}

func TestProtectedPathsStayReadOnlyInsideTheProject(t *testing.T) {
	sb := confined(t)
	w := newWorld(t)
	p := w.policy()
	for _, script := range []string{
		"echo evil >> .git/hooks/pre-commit",
		"echo evil > .git/hooks/post-checkout",
		"echo '[core] hooksPath = /x' >> .git/config",
		// Git finds its config and hooks through more than hooks/ and
		// config: the whole .git stays read-only.
		"echo ../evil > .git/commondir",
		"echo '[core] fsmonitor = x' > .git/config.worktree",
		"mkdir -p .git/info && echo '* filter=x' > .git/info/attributes",
		"mv .git .git-old",
		"echo 'agent: {mode: auto}' > .infer/config.yaml",
		"rm -rf .infer",
		"mkdir .infer/skills",
	} {
		if out, ok := run(t, sb, p, script); ok {
			t.Errorf("%s succeeded: %s", script, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(w.project, ".infer", "config.yaml")); string(b) != "model: offline/demo\n" {
		t.Errorf(".infer/config.yaml changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(w.project, ".git", "hooks", "post-checkout")); err == nil {
		t.Error("a new git hook was written")
	}
	if _, err := os.Stat(filepath.Join(w.project, ".git", "commondir")); err == nil {
		t.Error(".git/commondir was written")
	}

	// A project without .infer gets an empty, read-only one while the
	// command runs, so it cannot plant a config or skills.
	if err := os.RemoveAll(filepath.Join(w.project, ".infer")); err != nil {
		t.Fatal(err)
	}
	if out, ok := run(t, sb, p, "mkdir -p .infer/skills && echo x > .infer/config.yaml"); ok {
		t.Errorf("creating .infer succeeded: %s", out)
	}
	if entries, _ := os.ReadDir(filepath.Join(w.project, ".infer")); len(entries) != 0 {
		t.Errorf(".infer has %d entries after the command", len(entries))
	}

	// A project that is not a repository yet cannot become one with a
	// planted config (git init, then core.fsmonitor).
	if err := os.RemoveAll(filepath.Join(w.project, ".git")); err != nil {
		t.Fatal(err)
	}
	if out, ok := run(t, sb, p, "git init -q . && echo '[core] fsmonitor = x' >> .git/config"); ok {
		t.Errorf("git init succeeded: %s", out)
	}
	if _, err := os.Stat(filepath.Join(w.project, ".git", "config")); err == nil {
		t.Error("a .git/config was planted")
	}

	// A worktree's .git is a file naming the real one: read-only too.
	if err := os.RemoveAll(filepath.Join(w.project, ".git")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.project, ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, ok := run(t, sb, p, "echo 'gitdir: evil' > .git"); ok {
		t.Errorf("rewriting the .git file succeeded: %s", out)
	}

	// A protected path that is a link cannot be held: the command does
	// not run.
	if err := os.Remove(filepath.Join(w.project, ".git")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(w.outside, filepath.Join(w.project, ".git")); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Command(p, nil, "true"); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a linked .git: %v", err)
	}
}

// TestServicesOutsideAreOutOfReach: sockets under /run (the session and
// system buses, agents, Wayland) are hidden, and the variables that point
// at them are not passed on by infer (see tools.confinedEnv).
func TestServicesOutsideAreOutOfReach(t *testing.T) {
	sb := confined(t)
	w := newWorld(t)
	dir := filepath.Join("/run", fmt.Sprintf("infer-sandbox-test-%d", os.Getpid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Skipf("cannot make a folder under /run: %v", err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "bus")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go greet(ln, "reached\n")
	out, _ := run(t, sb, w.policy(), "ls "+dir+" 2>&1; cat /etc/resolv.conf >/dev/null && echo resolver-ok")
	if strings.Contains(out, "bus") && !strings.Contains(out, "No such file") {
		t.Errorf("a socket under /run is visible: %q", out)
	}
	if _, err := os.Stat("/etc/resolv.conf"); err == nil && !strings.Contains(out, "resolver-ok") {
		t.Errorf("name resolution's config is gone: %q", out)
	}
}

// TestAHomeProjectStaysReadOnly: infer started in the home folder (or
// above it) must not let commands rewrite ~/.bashrc.
func TestAHomeProjectStaysReadOnly(t *testing.T) {
	sb := confined(t)
	w := newWorld(t)
	for _, root := range []string{w.home, filepath.Dir(w.home)} {
		p := w.policy()
		p.Root = root
		if out, ok := run(t, sb, p, "echo evil >> "+filepath.Join(w.home, ".bashrc")); ok {
			t.Errorf("project %s: writing ~/.bashrc succeeded: %s", root, out)
		}
	}
	if _, err := os.Stat(filepath.Join(w.home, ".bashrc")); err == nil {
		t.Error("~/.bashrc was written")
	}
}

func TestPlanModeWritesNothing(t *testing.T) {
	sb := confined(t)
	w := newWorld(t)
	p := w.policy()
	p.ReadOnly = true
	if out, ok := run(t, sb, p, "echo x > new.txt"); ok {
		t.Errorf("a write in plan mode succeeded: %s", out)
	}
	if out, ok := run(t, sb, p, "cat README.md && echo scratch > /tmp/s && cat /tmp/s"); !ok || !strings.Contains(out, "readme") || !strings.Contains(out, "scratch") {
		t.Errorf("reading and scratch space in plan mode: %q, %v", out, ok)
	}
	if _, err := os.Stat(filepath.Join(w.tmp, "s")); err == nil {
		t.Error("plan mode's scratch file reached the private temp folder")
	}
}

func TestTempIsPrivate(t *testing.T) {
	sb := confined(t)
	w := newWorld(t)
	marker := filepath.Join(os.TempDir(), fmt.Sprintf("infer-sandbox-marker-%d", os.Getpid()))
	if err := os.WriteFile(marker, []byte("host tmp"), 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(marker)
	if out, _ := run(t, sb, w.policy(), "cat "+marker+"; echo kept > /tmp/kept"); strings.Contains(out, "host tmp") {
		t.Errorf("the host's /tmp was readable: %q", out)
	}
	if b, _ := os.ReadFile(filepath.Join(w.tmp, "kept")); string(b) != "kept\n" {
		t.Errorf("the private temp folder did not keep the file: %q", b)
	}
}

func TestOtherProcessesAreInvisible(t *testing.T) {
	sb := confined(t)
	w := newWorld(t)
	// This test process stands for infer: its environment holds keys.
	out, _ := run(t, sb, w.policy(), fmt.Sprintf("cat /proc/%d/environ; ls /proc | grep -c '^[0-9]'", os.Getpid()))
	if strings.Contains(out, "PATH=") {
		t.Errorf("the parent's environment was readable: %q", out)
	}
	fields := strings.Fields(out)
	if n, err := strconv.Atoi(fields[len(fields)-1]); err != nil || n > 4 {
		t.Errorf("the sandbox sees %q processes, want only its own (bwrap, bash, ls, grep)", fields[len(fields)-1])
	}
}

func TestNetworkCanBeCutOff(t *testing.T) {
	sb := confined(t)
	w := newWorld(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go greet(ln, "hello\n")
	port := ln.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && head -1 <&3", port)
	p := w.policy()
	if out, ok := run(t, sb, p, script); !ok || !strings.Contains(out, "hello") {
		t.Errorf("with the network on: %q, %v", out, ok)
	}
	p.Network = false
	if out, ok := run(t, sb, p, script); ok || strings.Contains(out, "hello") {
		t.Errorf("with the network off the command still connected: %q", out)
	}
}

func TestCommandsDieWithTheirParent(t *testing.T) {
	sb := confined(t)
	testreq.Program(t, testreq.Procps)
	w := newWorld(t)
	cmd, err := sb.Command(w.policy(), []string{"PATH=" + os.Getenv("PATH")}, "bash", "-c", "sleep 60 & sleep 60 & wait")
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var before int
	for deadline := time.Now().Add(10 * time.Second); before < 2; time.Sleep(20 * time.Millisecond) {
		if before = sleepers(t); time.Now().After(deadline) {
			t.Fatalf("the command's two sleeps never started (%d seen)", before)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for sleepers(t) >= before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := sleepers(t); n >= before {
		t.Errorf("%d `sleep 60` processes outlived the sandbox (%d before)", n, before)
	}
}

// greet answers every connection to ln with reply, until ln closes.
func greet(ln net.Listener, reply string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Write([]byte(reply))
		c.Close()
	}
}

// sleepers counts `sleep 60` processes on the host.
func sleepers(t *testing.T) int {
	out, _ := exec.Command("pgrep", "-fc", "^sleep 60$").Output()
	var n int
	fmt.Sscan(string(out), &n)
	return n
}

func TestCommandRefusesWithoutASandbox(t *testing.T) {
	for _, sb := range []*Sandbox{nil, Unavailable(fmt.Errorf("no bwrap")), Disabled()} {
		if _, err := sb.Command(Policy{Root: "/"}, nil, "true"); err == nil {
			t.Errorf("%v: Command ran unconfined instead of failing", sb)
		}
	}
	if _, err := (&Sandbox{kind: Bubblewrap, program: "bwrap"}).Command(Policy{Root: "rel"}, nil, "true"); err == nil {
		t.Error("a relative project root was accepted")
	}
}

func TestSeatbeltProfileFollowsThePolicy(t *testing.T) {
	w := newWorld(t)
	p := w.policy()
	p.Network = false
	prof := seatbeltProfile(p)
	for _, want := range []string{
		"(deny file-write*)",
		"(subpath " + sbQuote(resolved(w.project)) + ")",
		"(subpath " + sbQuote(filepath.Join(resolved(w.project), ".git")) + ")",
		"(deny file-read* file-write*",
		"(subpath " + sbQuote(resolved(filepath.Join(w.home, ".ssh"))) + ")",
		"(deny network*)",
	} {
		if !strings.Contains(prof, want) {
			t.Errorf("the profile lacks %s:\n%s", want, prof)
		}
	}
	// The protected paths are denied after the project is allowed.
	if strings.Index(prof, "(deny file-write*\n") < strings.Index(prof, sbQuote(resolved(w.project))) {
		t.Errorf("protected paths come before the project's allowance:\n%s", prof)
	}
	p.ReadOnly = true
	if strings.Contains(seatbeltProfile(p), "(subpath "+sbQuote(resolved(w.project))+"))") {
		t.Error("plan mode's profile lets the project be written")
	}
	if got := sbQuote(`a"b\c`); got != `"a\"b\\c"` {
		t.Errorf("sbQuote = %s", got)
	}
}

func TestIsProtected(t *testing.T) {
	root := "/p"
	for path, want := range map[string]bool{
		"/p/.git/hooks": true, "/p/.git/hooks/pre-commit": true, "/p/.git/config": true,
		"/p/.infer": true, "/p/.infer/config.yaml": true, "/p/.git/HEAD": true,
		"/p/.git": true, "/p/.git/commondir": true, "/p/.gitignore": false,
		"/p/.inferx": false, "/p/src/.infer": false, "/p/.github/x": false,
	} {
		if got := IsProtected(root, path); got != want {
			t.Errorf("IsProtected(%s) = %v", path, got)
		}
	}
}
