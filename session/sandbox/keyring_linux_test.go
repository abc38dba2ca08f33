package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/infer-workspace/infer/session/netproxy"
)

// The keyring test's helpers: keyHolderEnv makes the test binary a
// launcher that puts a secret in a session keyring of its own and runs a
// confined probe; keyProbeArg makes it the probe, which looks for the
// secret from inside the sandbox.
const (
	keyHolderEnv = "INFER_TEST_KEY_HOLDER"
	keyRootEnv   = "INFER_TEST_KEY_ROOT"
	keyProbeArg  = "__infer-test-keyprobe"
	keyName      = "infer_secret"
	keySecret    = "KEYRINGSECRET_42"
)

// keyringHelpers runs the helper the process was started as, if any, and
// exits.
func keyringHelpers() {
	if len(os.Args) > 1 && os.Args[1] == keyProbeArg {
		os.Exit(keyProbe())
	}
	if mode := os.Getenv(keyHolderEnv); mode != "" {
		os.Exit(keyHolder(mode, os.Getenv(keyRootEnv)))
	}
}

// keyProbe says whether the secret is in reach of its session keyring.
func keyProbe() int {
	id, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", keyName, 0)
	if err != nil {
		fmt.Println("absent:", err)
		return 0
	}
	buf := make([]byte, 256)
	n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
	if err != nil {
		fmt.Println("found but unreadable:", err)
		return 0
	}
	fmt.Printf("found: %s\n", buf[:min(n, len(buf))])
	return 0
}

// keyHolder is the launcher of the review's finding: a session keyring
// with a secret in it, then infer, here the sandbox running the probe
// copied into root, with the network off or through a proxy.
func keyHolder(mode, root string) int {
	// Keyrings belong to threads; the command inherits this one's.
	runtime.LockOSThread()
	if _, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); errno != 0 {
		fmt.Println("setup: join:", errno)
		return 3
	}
	if _, err := unix.AddKey("user", keyName, []byte(keySecret), unix.KEY_SPEC_SESSION_KEYRING); err != nil {
		fmt.Println("setup: add_key:", err)
		return 3
	}
	if _, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", keyName, 0); err != nil {
		fmt.Println("setup: the launcher cannot find its own key:", err)
		return 3
	}
	p := Policy{Root: root, Network: mode != "off"}
	if mode == "proxy" {
		px, err := netproxy.Start(func(context.Context, netproxy.Dest) error { return errors.New("no") })
		if err != nil {
			fmt.Println("setup: proxy:", err)
			return 3
		}
		defer px.Close()
		p.NetProxy = px.Socket()
	}
	cmd, err := Detect().Command(p, []string{"PATH=/usr/bin:/bin"}, filepath.Join(root, "probe"), keyProbeArg)
	if err != nil {
		fmt.Println("setup: command:", err)
		return 3
	}
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stdout
	if err := cmd.Run(); err != nil {
		fmt.Println("probe:", err)
		return 4
	}
	return 0
}

// TestConfinedCommandsGetAKeyringOfTheirOwn: a key that the process which
// started infer put in its session keyring cannot be found or read by a
// confined command, with the network off or through the proxy.
func TestConfinedCommandsGetAKeyringOfTheirOwn(t *testing.T) {
	confined(t)
	if Detect().Kind() != Bubblewrap {
		t.Skip("kernel keyrings are Linux's; the sandbox here is not bubblewrap")
	}
	root := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, self, filepath.Join(root, "probe"))
	for _, mode := range []string{"off", "proxy"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(self)
			cmd.Env = append(os.Environ(), keyHolderEnv+"="+mode, keyRootEnv+"="+root)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if strings.Contains(string(out), keySecret) || !strings.Contains(string(out), "absent:") {
				t.Fatalf("the confined command reached the launcher's keyring: %s", out)
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestACommandThatCannotStartIsReportedWithTheNetworkOff: with no proxy
// the forwarder executes the command in its place; one that is not there
// still fails as bwrap said it, with the shell's 127, and nothing runs.
func TestACommandThatCannotStartIsReportedWithTheNetworkOff(t *testing.T) {
	sb := confined(t)
	root := t.TempDir()
	cmd, err := sb.Command(Policy{Root: root}, []string{"PATH=/usr/bin:/bin"}, filepath.Join(root, "missing"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 127 || !strings.Contains(string(out), "missing: No such file or directory") {
		t.Fatalf("%v: %s", err, out)
	}
}
