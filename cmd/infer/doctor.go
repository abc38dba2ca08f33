package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/infer-workspace/infer/assemble"
	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/internal/sockowner"

	"github.com/spf13/cobra"

	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/llm/catalog"
	"github.com/infer-workspace/infer/session/sandbox"
)

func newDoctorCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the sandbox, this folder's trust, the bridge and the keys",
		Long: `Check what infer depends on and say what to fix: the sandbox around commands
(approved ones too) and the full paths of the sandbox program and the bash it
runs (fixed, root-owned places, never PATH), whether this folder's .infer/config.yaml is trusted, the
bridge port and whether an extension is connected, the token file's mode,
whether each MCP server starts and lists its tools, which provider keys are set (never their values), and Chromium for
infer-sim --browser chrome.

Exits 0 only when every check passes; lines marked "note" do not count.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !runDoctor(cmd.Context(), cmd.OutOrStdout()) {
				return errors.New("some checks failed; see FAIL above")
			}
			return nil
		},
	}
}

// doctorCheck is one line of the report.
type doctorCheck struct {
	name   string
	status checkStatus
	text   string
	fix    string
}

type checkStatus int

const (
	checkOK checkStatus = iota
	checkNote
	checkFail
)

func (s checkStatus) mark() string {
	switch s {
	case checkOK:
		return "ok  "
	case checkNote:
		return "note"
	}
	return "FAIL"
}

// runDoctor prints every check and reports whether all passed.
func runDoctor(ctx context.Context, out io.Writer) bool {
	var checks []doctorCheck
	add := func(c doctorCheck) { checks = append(checks, c) }

	home, err := homeDir(ctx)
	if err != nil {
		add(doctorCheck{name: "home", status: checkFail, text: err.Error()})
		return printChecks(out, checks)
	}
	wd, _ := workDir(ctx)
	root, rerr := config.ProjectRoot(wd)
	cfg, _, cerr := config.LoadConfig(home, root)
	if cerr != nil {
		add(doctorCheck{name: "config", status: checkFail, text: cerr.Error()})
	}
	add(sandboxCheck(cfg))
	add(shellCheck())
	if rerr != nil {
		add(doctorCheck{name: "project", status: checkFail, text: rerr.Error()})
	} else {
		add(trustCheck(home, root))
	}
	checks = append(checks, bridgeChecks(ctx, home, root)...)
	if cerr == nil && rerr == nil {
		checks = append(checks, mcpChecks(ctx, cfg, home, root)...)
	}
	add(keysCheck(cfg))
	add(chromiumCheck())
	return printChecks(out, checks)
}

func printChecks(out io.Writer, checks []doctorCheck) bool {
	ok := true
	for _, c := range checks {
		fmt.Fprintf(out, "%s  %-9s %s\n", c.status.mark(), c.name, c.text)
		if c.fix != "" {
			fmt.Fprintf(out, "           %s\n", c.fix)
		}
		ok = ok && c.status != checkFail
	}
	if ok {
		fmt.Fprintln(out, "\nAll checks passed.")
	} else {
		fmt.Fprintln(out)
	}
	return ok
}

func sandboxCheck(cfg config.Config) doctorCheck {
	sb := assemble.SandboxFor(cfg)
	var net string
	switch {
	case !cfg.Sandbox.NetworkAllowed():
		net = "network off"
	case sb.Kind() == sandbox.Bubblewrap:
		// The proxy is the only way out; say how much it lets through
		// without asking, since that is what a person may want to check.
		net = fmt.Sprintf("network only through infer's proxy, %d in network.allow", len(cfg.Network.Allow))
	default:
		net = "network on, not proxied here"
	}
	switch {
	case sb.Confines():
		return doctorCheck{name: "sandbox", status: checkOK, text: fmt.Sprintf("%s at %s (sandbox.mode: %s, %s): commands run confined, approved or not, unless you choose to run one outside", sb, sb.Program(), cfg.Sandbox.Mode, net)}
	case sb.Kind() == sandbox.Off:
		return doctorCheck{name: "sandbox", status: checkFail, text: sb.String(), fix: "only inside a container or VM; otherwise remove sandbox.mode: off from config.yaml"}
	default:
		return doctorCheck{name: "sandbox", status: checkFail, text: sb.String() + "; every Bash command asks", fix: "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and allow user namespaces"}
	}
}

// shellCheck names the bash every command runs with, which, like the
// sandbox program, comes from a fixed root-owned path and never from PATH.
func shellCheck() doctorCheck {
	shell, err := sandbox.Shell()
	if err != nil {
		return doctorCheck{name: "shell", status: checkFail, text: err.Error() + "; no command can run", fix: "install bash (it belongs at /bin/bash or /usr/bin/bash, owned by root and writable only by root)"}
	}
	return doctorCheck{name: "shell", status: checkOK, text: shell + " runs every command (a fixed, root-owned path; PATH is never searched)"}
}

func trustCheck(home, root string) doctorCheck {
	st, err := config.CheckTrust(home, root)
	switch {
	case err != nil:
		return doctorCheck{name: "trust", status: checkFail, text: err.Error()}
	case st.State == config.NoProjectConfig:
		return doctorCheck{name: "trust", status: checkOK, text: config.DisplayPath(root) + " has no .infer/config.yaml"}
	case st.State == config.Trusted:
		return doctorCheck{name: "trust", status: checkOK, text: config.DisplayPath(st.File) + " is trusted"}
	default:
		return doctorCheck{name: "trust", status: checkFail,
			text: config.DisplayPath(st.File) + " is " + st.State.String() + ": its keys that route secrets or widen permissions are ignored",
			fix:  "read it, then run `infer trust` in " + config.DisplayPath(root)}
	}
}

// bridgeChecks reports the token file and what answers on the bridge port.
// root is this folder's project ("" when it has none): the infer on the
// port may be another project's, and the report says whose it is.
func bridgeChecks(ctx context.Context, home, root string) []doctorCheck {
	path := config.BrowserUsePath(home)
	b, _, err := config.LoadBrowserUse(path)
	if errors.Is(err, os.ErrNotExist) {
		return []doctorCheck{{name: "bridge", status: checkFail, text: config.DisplayPath(path) + " does not exist", fix: "run `infer init`"}}
	}
	if err != nil {
		return []doctorCheck{{name: "bridge", status: checkFail, text: err.Error()}}
	}
	var out []doctorCheck
	if fi, err := os.Stat(path); err == nil {
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			out = append(out, doctorCheck{name: "token", status: checkFail, text: fmt.Sprintf("%s is mode %04o: other users can read the bridge token", config.DisplayPath(path), perm), fix: "chmod 600 " + path})
		} else {
			out = append(out, doctorCheck{name: "token", status: checkOK, text: fmt.Sprintf("%s is mode %04o", config.DisplayPath(path), perm)})
		}
	}
	if !b.Enabled {
		return append(out, doctorCheck{name: "bridge", status: checkNote, text: "browser use is off (enabled: false)"})
	}
	port := b.Extension.Port
	if c, held := squatCheck(port); held {
		// Asking the squatter for /status would hand it the token.
		return append(out, c)
	}
	st, code, err := fetchStatus(ctx, port, b.Extension.Token)
	switch {
	case err != nil && errors.Is(err, syscall.ECONNREFUSED):
		if free(port) {
			out = append(out, doctorCheck{name: "bridge", status: checkOK, text: fmt.Sprintf("port %d is free; infer is not running, so no extension can be connected", port)})
		} else {
			out = append(out, doctorCheck{name: "bridge", status: checkFail, text: fmt.Sprintf("port %d refuses connections but cannot be bound", port), fix: "another program may hold it: set a free extension.port in browser_use.yaml"})
		}
	case err != nil:
		out = append(out, doctorCheck{name: "bridge", status: checkFail, text: fmt.Sprintf("port %d: %v", port, err), fix: "another program may hold it: stop it or set a free extension.port"})
	case code != 200:
		out = append(out, doctorCheck{name: "bridge", status: checkFail, text: fmt.Sprintf("port %d answered HTTP %d to this token", port, code), fix: "restart infer; if it persists, another program holds the port"})
	case st.Connected && st.Flapping != nil && st.Flapping.Replaced > 0:
		// Connected now, but not for long: the other browser takes the
		// connection back, and infer pauses browser commands meanwhile.
		warn, fix, _ := strings.Cut(bridge.FlapWarning(st.Flapping.Replaced, time.Duration(st.Flapping.WindowSeconds)*time.Second), ": ")
		out = append(out, doctorCheck{name: "bridge", status: checkFail, text: fmt.Sprintf("%s, but %s", runningOn(port, st.Project, root), warn), fix: fix})
	case st.Connected:
		v := ""
		if st.ExtensionVersion != "" {
			v = " (version " + st.ExtensionVersion + ")"
		}
		out = append(out, doctorCheck{name: "bridge", status: checkOK, text: fmt.Sprintf("%s and an extension is connected%s", runningOn(port, st.Project, root), v)})
	default:
		out = append(out, doctorCheck{name: "bridge", status: checkFail, text: fmt.Sprintf("%s, but no extension is connected", runningOn(port, st.Project, root)), fix: "open the extension's options, check the port and token (infer pair), then click Connect"})
	}
	return out
}

// runningOn says that an infer holds port, and for which project when its
// /status says so: one started in another folder is named as such, not
// passed off as this folder's.
func runningOn(port int, holder, root string) string {
	s := fmt.Sprintf("infer is running on port %d", port)
	switch {
	case holder == "":
		return s // an infer from before /status named its project
	case root == "":
		return s + " for " + termSafeLine(config.DisplayPath(holder))
	case filepath.Clean(holder) == filepath.Clean(root):
		return s + " for this project"
	default:
		return s + " for another project, " + termSafeLine(config.DisplayPath(holder)) + ", not this folder's"
	}
}

// squatCheck fails when a process of another user listens on port: the
// extension, which speaks first, would give it the token whenever infer is
// not running. Root is another user here too; only the person's own
// listener is theirs. Where the owner cannot be found it says nothing.
func squatCheck(port int) (doctorCheck, bool) {
	uid, found, err := sockowner.ListenerUID(port)
	if err != nil || !found || uid == os.Getuid() {
		return doctorCheck{}, false
	}
	return doctorCheck{
		name:   "bridge",
		status: checkFail,
		text:   fmt.Sprintf("port %d is held by another user (uid %d): while infer is not running, the extension would send it the token", port, uid),
		fix:    "find it with `ss -ltnp`; until it is gone, disconnect the extension, or set another extension.port in browser_use.yaml and the extension's options and run `infer init --rotate-token`",
	}, true
}

// free reports whether port can be bound on the loopback now.
func free(port int) bool {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// keysCheck names the provider key variables that are set, never their
// values. No key is fine: offline/demo needs none.
func keysCheck(cfg config.Config) doctorCheck {
	var set, unset []string
	for _, name := range catalog.KeyVariables(cfg) {
		if os.Getenv(name) != "" {
			set = append(set, name)
		} else {
			unset = append(unset, name)
		}
	}
	text := "set: " + strings.Join(set, ", ")
	if len(set) == 0 {
		text = "no provider key is set; only offline/demo and keyless local servers work"
	}
	c := doctorCheck{name: "keys", status: checkOK, text: text}
	if len(unset) > 0 {
		c.fix = "not set: " + strings.Join(unset, ", ")
	}
	return c
}

// chromiumCheck looks for the browser infer-sim --browser chrome drives;
// it is optional, so its absence is a note.
func chromiumCheck() doctorCheck {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return doctorCheck{name: "chromium", status: checkOK, text: filepath.Clean(p) + " (for infer-sim --browser chrome)"}
		}
	}
	return doctorCheck{name: "chromium", status: checkNote, text: "not found; only infer-sim --browser chrome needs it", fix: "apt-get install chromium"}
}
