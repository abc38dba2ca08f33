package main

// The scripts in testdata/script drive the real programs as a person or a
// CI job would: `infer` is this test binary started under that name (see
// TestMain), so it runs main itself, and infer-sim is built from
// cmd/infer-sim. Each script gets its own HOME, INFER_HOME and project
// directory, so scripts run in parallel without seeing each other.

import (
	"errors"
	"flag"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/internal/leaks"
	"github.com/infer-workspace/infer/internal/mcptest"
	"github.com/infer-workspace/infer/session/config"
)

// leakChecked runs the tests, then goleak's check, and returns the exit
// code instead of exiting, because testscript.Main must still remove the
// directory it put the `infer` command in.
type leakChecked struct{ m *testing.M }

func (l leakChecked) Run() (code int) {
	waitersInParallel()
	goleak.VerifyTestMain(l.m, leaks.Options(goleak.Cleanup(func(c int) {
		removeBinaries()
		code = c
	}))...)
	return code
}

// waitersInParallel lets more parallel tests run at once than there are
// CPUs, go test's default, unless -parallel was given. These tests spend
// their time waiting on sockets, processes, terminals and timers, not
// computing: on a 2-CPU machine two at a time left it mostly idle.
func waitersInParallel() {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
}

// scriptCommands are the programs testscript.Main installs on the scripts'
// PATH; each runs inside a copy of this test binary. main is infer's own,
// so a script's `exec infer serve &` is a real infer process (built with
// -race when the tests are).
var scriptCommands = map[string]func(){"infer": main, "infer-mcptest": mcptest.ServeStdio}

// pollTimeout bounds waitport and eventually. Everything they wait for is
// local and normally takes milliseconds; the margin is for a loaded CI
// machine running the race detector.
const pollTimeout = 15 * time.Second

func TestScript(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds infer-sim and runs the infer and infer-sim binaries")
	}
	simDir := buildInferSim(t)
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		// `exec infer ...` everywhere says that each line is a process of
		// its own, as `exec infer-sim ...` must be.
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			return setupScript(env, simDir)
		},
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"freeport":   cmdFreeport,
			"waitport":   cmdWaitport,
			"eventually": cmdEventually,
			"capture":    cmdCapture,
			"exits":      cmdExits,
			"perm":       cmdPerm,
			"projectdir": cmdProjectDir,
		},
	})
}

// buildInferSim returns the directory holding the infer-sim binary, for
// PATH. It is the real binary, as a person would run it, not a copy of this
// test binary: it is another main package.
func buildInferSim(t *testing.T) string {
	t.Helper()
	return filepath.Dir(simBinary(t))
}

// setupScript gives a script a home and a project of its own:
//
//	$HOME        $WORK/home, so paths under it print as ~/…
//	$INFER_HOME  $HOME/.infer, not created: `infer init` does that
//	cwd          $WORK/project, the project infer works on; it has no
//	             .git, and neither does any parent, so it is its own root
//
// and the XDG directories infer uses for locks and caches, so nothing is
// written outside $WORK. testscript passes on no other variable of the
// test's environment, so no provider key leaks into a script.
//
// The archive's files are unpacked relative to $WORK, as always: a script
// names them $WORK/NAME, and a file meant for the project project/NAME.
func setupScript(env *testscript.Env, simDir string) error {
	home := filepath.Join(env.WorkDir, "home")
	project := filepath.Join(env.WorkDir, "project")
	runtimeDir := filepath.Join(env.WorkDir, "run")
	for _, d := range []string{home, project, runtimeDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	env.Setenv("HOME", home)
	env.Setenv(config.HomeEnv, filepath.Join(home, ".infer"))
	env.Setenv("XDG_RUNTIME_DIR", runtimeDir)
	env.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	env.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	env.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	env.Setenv("PATH", simDir+string(os.PathListSeparator)+env.Getenv("PATH"))
	// Under -race, `infer` is a race-enabled binary, which by default
	// sleeps a second as it exits so that goroutines still running can
	// report; a script runs infer dozens of times and waits for each, so
	// a short pause does. A GORACE of the caller's is kept.
	if g := env.Getenv("GORACE"); !strings.Contains(g, "atexit_sleep_ms") {
		env.Setenv("GORACE", strings.TrimSpace(g+" atexit_sleep_ms=10"))
	}
	env.Cd = project
	return nil
}

// cmdFreeport sets the variable VAR to a loopback port that was free a
// moment ago, so scripts that run in parallel never fight over a fixed
// one. Something else may take it before infer binds it; that is rare
// enough on a test machine, and then the script fails loudly, not wrongly.
//
//	freeport VAR
func cmdFreeport(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	port := ln.Addr().(*net.TCPAddr).Port
	ts.Check(ln.Close())
	ts.Setenv(args[0], strconv.Itoa(port))
}

// cmdWaitport waits until something accepts connections on the loopback
// port, for a server started in the background with `exec ... &name&`.
// With !, it waits until nothing does (a server that was stopped).
//
//	[!] waitport PORT
func cmdWaitport(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: [!] waitport PORT")
	}
	addr := net.JoinHostPort("127.0.0.1", args[0])
	deadline := time.Now().Add(pollTimeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		if (err == nil) != neg {
			return
		}
		if time.Now().After(deadline) {
			if neg {
				ts.Fatalf("%s still accepts connections after %s", addr, pollTimeout)
			}
			ts.Fatalf("nothing listens on %s after %s: %v", addr, pollTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cmdEventually runs a program until it exits 0 with standard output that
// matches the regular expression, for state another process reaches in
// its own time (an extension connecting). As with stdout, ^ and $ match at
// line breaks. Afterwards stdout and stderr are those of the last run, so
// further `stdout` lines check it.
//
//	eventually REGEXP PROGRAM [ARGS...]
func cmdEventually(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: eventually REGEXP PROGRAM [ARGS...]")
	}
	re, err := regexp.Compile("(?m)" + args[0])
	ts.Check(err)
	deadline := time.Now().Add(pollTimeout)
	for {
		err := ts.Exec(args[1], args[2:]...)
		if err == nil && re.MatchString(ts.ReadFile("stdout")) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s never printed a match for %q in %s (last exit: %v)", args[1], args[0], pollTimeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cmdCapture sets VAR to the first group of REGEXP in the standard output
// of the last command, for values only known at run time: a token, a
// conversation id. Matching is per line ((?m) is implied).
//
//	capture VAR REGEXP
func cmdCapture(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: capture VAR REGEXP")
	}
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	if re.NumSubexp() < 1 {
		ts.Fatalf("capture: %q has no group to capture", args[1])
	}
	m := re.FindStringSubmatch(ts.ReadFile("stdout"))
	if m == nil {
		ts.Fatalf("capture: no match for %q in stdout", args[1])
	}
	ts.Setenv(args[0], m[1])
}

// cmdExits runs a program like exec and checks its exit code, which
// `! exec` cannot tell apart: infer's codes are a contract (1 failure,
// 2 usage error). stdout and stderr are the program's afterwards.
//
//	exits CODE PROGRAM [ARGS...]
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// cmdPerm checks a file's permission bits, written in octal as ls -l
// would count them (0600). It is a command of its own because stat's
// flags differ between GNU and BSD.
//
//	perm FILE MODE
func cmdPerm(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: perm FILE MODE")
	}
	want, err := strconv.ParseUint(args[1], 8, 32)
	ts.Check(err)
	fi, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	if got := fi.Mode().Perm(); got != os.FileMode(want) {
		ts.Fatalf("%s has mode %04o, want %04o", args[0], got, want)
	}
}

// cmdProjectDir sets VAR to the directory where infer keeps the current
// project's data (conversations, grants.json). Its name is derived from
// the project's absolute path, which only exists at run time; a script
// uses it to put a file where infer would find it, such as a grant only
// the terminal UI can save.
//
//	projectdir VAR
func cmdProjectDir(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: projectdir VAR")
	}
	home := ts.Getenv(config.HomeEnv)
	if home == "" {
		ts.Fatalf("projectdir: %s is not set", config.HomeEnv)
	}
	root, err := config.ProjectRoot(ts.MkAbs("."))
	ts.Check(err)
	ts.Setenv(args[0], config.ProjectDir(home, root))
}
