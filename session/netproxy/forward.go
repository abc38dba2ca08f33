package netproxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// Subcommand is the first argument that makes infer's binary (or a test
// binary that calls MaybeForward first) the forwarder instead of itself.
const Subcommand = "__infer-netfwd"

// helperPath is the running binary, resolved once at start so that a
// later rename of the path cannot make the sandbox start something else.
var helperPath, helperErr = func() (string, error) {
	p, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(p)
}()

// serves is set by MaybeForward: only a binary that calls it first can
// be started as the forwarder. Any other (an embedder's program, a test
// binary without it) would run as itself inside the sandbox, a Go test
// binary running its own tests there.
var serves atomic.Bool

// Helper is the binary to start inside the sandbox as the forwarder.
func Helper() (string, error) {
	if !serves.Load() {
		return "", errors.New("netproxy: this program does not call netproxy.MaybeForward first, so it cannot be started as the sandbox's forwarder")
	}
	if helperErr != nil {
		return "", fmt.Errorf("netproxy: cannot find infer's own binary to forward the network: %w", helperErr)
	}
	return helperPath, nil
}

// Argv is the command line that runs name with args under the forwarder,
// with helper and socket as the sandbox shows them. An empty socket is a
// command cut off the network: the forwarder then only gives it a session
// keyring of its own (see forward) and runs it.
func Argv(helper, socket, name string, args ...string) []string {
	return append([]string{helper, Subcommand, socket, "--", name}, args...)
}

// MaybeForward runs the forwarder and exits when the process was started
// as one (see Argv); otherwise it returns at once. main and TestMain call
// it first.
func MaybeForward() {
	serves.Store(true)
	if len(os.Args) < 5 || os.Args[1] != Subcommand || os.Args[3] != "--" {
		return
	}
	os.Exit(forward(os.Args[2], os.Args[4], os.Args[5:]))
}

// ProxyVariables are the environment variables through which programs
// find the proxy at url: curl, wget, git, Go, Python, npm and most
// others read some of them. NO_PROXY is emptied so that nothing is sent
// around it (there is no route around it anyway).
func ProxyVariables(url string) []string {
	var env []string
	for _, name := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "npm_config_proxy", "npm_config_https_proxy"} {
		env = append(env, name+"="+url)
	}
	return append(env, "NO_PROXY=", "no_proxy=")
}

// forward runs inside the sandbox, before the command. First it leaves
// the kernel session keyring it inherited from infer for a new, empty
// one: bubblewrap does not, and keys a login or a launcher put there
// (tokens, passphrases) would be the command's to read and replace. If
// that fails, the command does not run. Then, with a socket, in the
// sandbox's network namespace where only loopback exists, it listens on
// a free loopback port, carries each connection to the proxy's socket,
// and runs the command with the proxy variables pointing at that port.
// It ends with the command, with its status.
func forward(socket, name string, args []string) int {
	// The keyring is the calling thread's, and the command inherits the
	// keyring of the thread that starts it: both must be this one.
	runtime.LockOSThread()
	if err := newSessionKeyring(); err != nil {
		fmt.Fprintln(os.Stderr, "infer: refused to run the command: the sandbox could not give it a keyring of its own:", err)
		return 125
	}
	if socket == "" {
		// Nothing to carry: the command takes this process's place, so
		// it is bwrap's child as it was before the forwarder, and signals
		// and its status need no passing on.
		return cannotRun(name, replaceWith(name, args))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "infer: the network forwarder could not listen:", err)
		return 125
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go carry(c, socket)
		}
	}()
	url := "http://127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	cmd := exec.Command(name, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(withoutProxy(os.Environ()), ProxyVariables(url)...)
	// Signals meant for the command (a timeout's SIGTERM reaches the
	// whole group) must not end the forwarder before it. They are caught,
	// not ignored: an ignored signal would stay ignored in the command.
	caught := make(chan os.Signal, 8)
	signal.Notify(caught, terminating...)
	go func() {
		for range caught {
		}
	}()
	if err := cmd.Start(); err != nil {
		return cannotRun(name, err)
	}
	if cmd.Wait(); cmd.ProcessState == nil {
		return 125
	}
	signal.Stop(caught)
	return exitLike(cmd.ProcessState)
}

// cannotRun says why name could not be started, worded as bwrap words it
// (No such file or directory), which is what people saw before the
// forwarder, and returns the shell's status for it.
func cannotRun(name string, err error) int {
	why := err.Error()
	var errno syscall.Errno
	if errors.As(err, &errno) {
		why = errno.Error()
		why = strings.ToUpper(why[:1]) + why[1:]
	}
	fmt.Fprintf(os.Stderr, "infer: cannot run %s: %s\n", name, why)
	return 127
}

// withoutProxy drops proxy variables the command might have inherited,
// so that only the forwarder's are seen.
func withoutProxy(env []string) []string {
	drop := map[string]bool{}
	for _, kv := range ProxyVariables("") {
		name, _, _ := strings.Cut(kv, "=")
		drop[name] = true
	}
	out := env[:0:0]
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); !drop[name] {
			out = append(out, kv)
		}
	}
	return out
}

// carry copies one connection to the proxy's socket and back.
func carry(c net.Conn, socket string) {
	defer c.Close()
	s, err := net.Dial("unix", socket)
	if err != nil {
		return
	}
	defer s.Close()
	done := make(chan struct{}, 2)
	go func() {
		io.Copy(s, c)
		s.(*net.UnixConn).CloseWrite()
		done <- struct{}{}
	}()
	go func() {
		io.Copy(c, s)
		c.(*net.TCPConn).CloseWrite()
		done <- struct{}{}
	}()
	<-done
	<-done
}
