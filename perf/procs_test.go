package perf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/internal/leaks"

	"github.com/infer-workspace/infer/session/config"
)

// guard bounds every wait on a child process. It only says "it did not
// hang"; speed is what the benchmarks report, never what they assert.
const guard = 30 * time.Second

// binaries are the programs the benchmarks run, built once per test binary
// into a directory TestMain removes.
type binaries struct {
	infer, sim, hello string
}

var (
	binDir    string
	buildOnce sync.Once
	built     binaries
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	// Every process watcher, server and client a benchmark starts must be
	// gone once its cleanups ran.
	if code == 0 {
		if err := goleak.Find(leaks.Options()...); err != nil {
			fmt.Fprintln(os.Stderr, "perf: leaked goroutines:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// helloSource is the smallest Go program that says it has started: the
// floor any Go binary's start-up pays.
const helloSource = `package main

import "fmt"

func main() { fmt.Println("hello") }
`

// programs builds infer, infer-sim and a hello-world program once.
func programs(tb testing.TB) binaries {
	tb.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "infer-perf-")
		if buildErr != nil {
			return
		}
		built = binaries{
			infer: filepath.Join(binDir, "infer"),
			sim:   filepath.Join(binDir, "infer-sim"),
			hello: filepath.Join(binDir, "hello"),
		}
		inferFlags := []string{}
		if profileDir() != "" {
			// Only a build with this tag honours INFER_CPUPROFILE.
			inferFlags = append(inferFlags, "-tags", "pprof")
		}
		for _, p := range []struct {
			out, pkg string
			flags    []string
		}{
			{built.infer, "github.com/infer-workspace/infer/cmd/infer", inferFlags},
			{built.sim, "github.com/infer-workspace/infer/cmd/infer-sim", nil},
		} {
			args := append(append([]string{"build"}, p.flags...), "-o", p.out, p.pkg)
			if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", p.pkg, err, out)
				return
			}
		}
		buildErr = buildHello(built.hello)
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return built
}

// profileEnv names a directory to keep profiles of the benchmarked infer
// processes in, and profileKindsEnv which ones, comma-separated: cpu (the
// default), allocs and trace. When profileEnv is set, infer is built with
// the "pprof" tag, and the benchmarks that profile a process tell it where
// to write through INFER_CPUPROFILE, INFER_ALLOCPROFILE and INFER_TRACE
// (see docs/performance.md). An allocation profile records every
// allocation and a trace every event, which slows the run: their timings
// are not the benchmark's.
const (
	profileEnv      = "INFER_PERF_PROFILE"
	profileKindsEnv = "INFER_PERF_PROFILES"
)

// profileDir is the directory profileEnv names, or "" for no profiles.
func profileDir() string { return os.Getenv(profileEnv) }

// profileKinds maps each kind profileKindsEnv may name to the variable
// that asks infer for it, and the file name's suffix.
var profileKinds = map[string]struct{ env, suffix string }{
	"cpu":    {"INFER_CPUPROFILE", ".cpu.pprof"},
	"allocs": {"INFER_ALLOCPROFILE", ".allocs.pprof"},
	"trace":  {"INFER_TRACE", ".trace"},
}

// profileNumber tells apart the profiles of one test binary's runs.
var profileNumber atomic.Int64

// profileVars are the settings that make one infer process profile itself,
// its files named after what it runs, or nothing when no profiles were
// asked for.
func profileVars(tb testing.TB, what string) []string {
	tb.Helper()
	dir := profileDir()
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		tb.Fatal(err)
	}
	name := filepath.Join(abs, fmt.Sprintf("%s-%d-%d", what, os.Getpid(), profileNumber.Add(1)))
	kinds := os.Getenv(profileKindsEnv)
	if kinds == "" {
		kinds = "cpu"
	}
	var vars []string
	for _, k := range strings.Split(kinds, ",") {
		kind, ok := profileKinds[strings.TrimSpace(k)]
		if !ok {
			tb.Fatalf("%s: %q is not a profile kind (cpu, allocs, trace)", profileKindsEnv, k)
		}
		vars = append(vars, kind.env+"="+name+kind.suffix)
	}
	return vars
}

// buildHello builds helloSource as a module of its own, outside this one.
func buildHello(out string) error {
	src, err := os.MkdirTemp("", "infer-perf-hello-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(src)
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module hello\n\ngo 1.26\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(helloSource), 0o644); err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-buildvcs=false")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the hello-world program: %v\n%s", err, b)
	}
	return nil
}

// sandbox is a throwaway infer home, with XDG directories of its own so a
// benchmark never touches the real ~/.infer, logs or caches.
type sandbox struct {
	home  string
	token string
	env   []string
}

// secretVars are variables of the developer's environment that would make
// infer reach real providers or another home, or write a profile where a
// benchmark did not ask for one.
var secretVars = []string{
	"INFER_HOME", "INFER_TOKEN",
	"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
	"OPENROUTER_API_KEY", "GEMINI_API_KEY", "OLLAMA_API_KEY", "OLLAMA_HOST",
	"INFER_CPUPROFILE", "INFER_ALLOCPROFILE", "INFER_TRACE", // set per process by profileVars, never inherited
	"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
}

// newSandbox creates a home with browser_use.yaml (so the bridge starts)
// and, when configYAML is not empty, config.yaml.
func newSandbox(tb testing.TB, configYAML string) *sandbox {
	tb.Helper()
	root := tb.TempDir()
	s := &sandbox{home: filepath.Join(root, "home")}
	if err := config.EnsureDir(s.home); err != nil {
		tb.Fatal(err)
	}
	bu := config.NewBrowserUse(config.DefaultPort)
	if err := config.CreateBrowserUse(config.BrowserUsePath(s.home), bu); err != nil {
		tb.Fatal(err)
	}
	s.token = bu.Extension.Token
	if configYAML != "" {
		if err := os.WriteFile(config.ConfigPath(s.home), []byte(configYAML), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	drop := map[string]bool{}
	for _, v := range secretVars {
		drop[v] = true
	}
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !drop[name] {
			s.env = append(s.env, kv)
		}
	}
	s.env = append(s.env, "INFER_HOME="+s.home)
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR"} {
		dir := filepath.Join(root, strings.ToLower(v))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			tb.Fatal(err)
		}
		s.env = append(s.env, v+"="+dir)
	}
	return s
}

// child is a started process whose stdout and stderr are kept, for
// failure messages and for waiting on a line.
type child struct {
	cmd    *exec.Cmd
	name   string
	stderr *lineLog
	stdout *lineLog
	done   chan struct{}
	err    error
}

// start runs bin with args in dir under env. Its output is kept, and its
// process is killed at the end of the test if still running.
func start(tb testing.TB, env []string, dir, bin string, args ...string) *child {
	tb.Helper()
	c := &child{cmd: exec.Command(bin, args...), name: filepath.Base(bin), stderr: newLineLog(), stdout: newLineLog(), done: make(chan struct{})}
	c.cmd.Env, c.cmd.Dir = env, dir
	c.cmd.Stdout, c.cmd.Stderr = c.stdout, c.stderr
	if err := c.cmd.Start(); err != nil {
		tb.Fatalf("starting %s: %v", c.name, err)
	}
	go func() { c.err = c.cmd.Wait(); close(c.done) }()
	tb.Cleanup(func() {
		c.cmd.Process.Kill()
		<-c.done
	})
	return c
}

// wait waits for the process to exit by itself.
func (c *child) wait(tb testing.TB) error {
	tb.Helper()
	select {
	case <-c.done:
		return c.err
	case <-time.After(guard):
		tb.Fatalf("%s did not exit within %s\nstderr:\n%s", c.name, guard, c.stderr)
		return nil
	}
}

// stop asks the process to end with SIGTERM and waits for it.
func (c *child) stop(tb testing.TB) {
	tb.Helper()
	c.cmd.Process.Signal(syscall.SIGTERM)
	c.wait(tb)
}

// peakRSS is the largest resident set the exited process ever had, from
// the rusage its wait returned.
func (c *child) peakRSS(tb testing.TB) int64 {
	tb.Helper()
	ru, ok := c.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok || ru.Maxrss <= 0 {
		tb.Fatalf("no rusage for %s", c.name)
	}
	return ru.Maxrss << 10 // Linux reports KiB
}

// lineLog collects a stream and lets a benchmark wait for a line in it.
type lineLog struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func newLineLog() *lineLog { return &lineLog{changed: make(chan struct{}, 1)} }

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	l.buf.Write(p)
	l.mu.Unlock()
	select {
	case l.changed <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// waitFor returns the first match of re once the stream holds one.
func (l *lineLog) waitFor(tb testing.TB, what string, re *regexp.Regexp) string {
	tb.Helper()
	deadline := time.After(guard)
	for {
		if m := re.FindString(l.String()); m != "" {
			return m
		}
		select {
		case <-l.changed:
		case <-deadline:
			tb.Fatalf("no %s within %s; so far:\n%s", what, guard, l.String())
		}
	}
}

// simConnected is the line infer-sim logs once it is authenticated.
var simConnected = regexp.MustCompile(`sim: connected to infer`)

// freePort finds a loopback port nobody listens on. Another process could
// take it before the child binds it; that fails the benchmark loudly and
// is rare enough on a test machine.
func freePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// procStatus reads one "Name:  N kB" field of /proc/<pid>/status, in bytes.
func procStatus(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/status %s: %w", pid, field, err)
		}
		return kb << 10, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("/proc/" + strconv.Itoa(pid) + "/status has no " + field)
}

// mib converts bytes to MiB for ReportMetric.
func mib(n int64) float64 { return float64(n) / (1 << 20) }
