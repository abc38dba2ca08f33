// Package sandbox confines the commands that no person approved at the
// moment they ran: allowlisted commands, saved grants, the auto modes, the
// judge's approvals, plan-mode reads, the panel's requests and `!` commands
// the policy let through. The Bash guard decides when to ask; this package
// is what keeps the promise when the guard is wrong, because a text check
// over shell syntax can never be complete.
//
// On Linux the confinement is bubblewrap (bwrap): a mount namespace in
// which the whole file system is read-only, the project and a few listed
// folders writable, infer's home and the usual secret stores hidden, a
// private /tmp, and a pid namespace in which other processes (infer
// included) cannot be seen. On macOS it is a sandbox-exec (Seatbelt)
// profile with the same rules. Where neither can be had the Sandbox says
// so, and the tool policy makes every Bash command ask (fail closed).
// docs/design.md says why bubblewrap and not Landlock.
package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/infer-workspace/infer/session/netproxy"
)

// Kind names the mechanism in force.
type Kind string

// Kinds.
const (
	// Bubblewrap is Linux namespaces through the bwrap program.
	Bubblewrap Kind = "bubblewrap"
	// Seatbelt is macOS's sandbox-exec.
	Seatbelt Kind = "seatbelt"
	// None means no sandbox could be had here; see Sandbox.Problem.
	None Kind = "none"
	// Off means the person turned the sandbox off (sandbox.mode: off).
	Off Kind = "off"
)

// String is the kind's name.
func (k Kind) String() string { return string(k) }

// Policy is what one confined command may do.
type Policy struct {
	// Root is the project; it is writable unless ReadOnly.
	Root string
	// ReadOnly is plan mode: nothing outside the private temp folder,
	// which is thrown away, can be written.
	ReadOnly bool
	// Writable are more folders the command may write (sandbox.writable).
	Writable []string
	// DenyRead are files and folders the command may not read at all:
	// infer's home, the secret stores and sandbox.deny_read. Missing ones
	// are skipped; there is nothing in them to read.
	DenyRead []string
	// Network is false to cut the command off the network.
	Network bool
	// Env names variables commands inherit beside the built-in list
	// (sandbox.env; see Environ).
	Env []string
	// NetProxy is the Unix socket of the proxy (see package netproxy)
	// that is the command's only way out when Network is true. With
	// bubblewrap, the command gets a network namespace of its own and
	// runs under the forwarder, which offers the socket on a loopback
	// port and sets the proxy variables. Empty with Network true leaves
	// the host's network (for embedders; infer always sets it).
	NetProxy string
	// TempDir is the private temp folder, seen as /tmp inside; empty
	// means a fresh empty one that is gone when the command ends.
	TempDir string
	// Home is the person's home folder. A project that is the home or
	// above it stays read-only: it holds every tool's configuration.
	Home string
}

// ProtectedPaths are the paths inside a project that stay read-only even
// where the project is writable: the whole .git (a folder, or the file of
// a worktree or submodule) and infer's own project settings. Git runs
// programs that its repository names — hooks, core.fsmonitor,
// core.hooksPath, filters, aliases — and finds them through more files
// than hooks/ and config (commondir, config.worktree, info/attributes,
// modules/*), so a command that could write any of .git could make the
// person's next `git status` run its code. Commits therefore need the
// person to run them outside the sandbox, a choice of its own in the
// approval box.
func ProtectedPaths(root string) []string {
	return []string{
		filepath.Join(root, ".git"),
		filepath.Join(root, ".infer"),
	}
}

// IsProtected reports whether abs (an absolute, cleaned path with links
// resolved) is one of root's ProtectedPaths or inside one. On systems
// whose file systems ignore case by default, .GIT is .git.
func IsProtected(root, abs string) bool {
	for _, p := range ProtectedPaths(root) {
		if samePath(abs, p) || len(abs) > len(p) && samePath(abs[:len(p)], p) && abs[len(p)] == filepath.Separator {
			return true
		}
	}
	return false
}

// samePath compares paths as the file system will: ignoring case on
// macOS and Windows, whose default file systems do.
func samePath(a, b string) bool {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// SecretStores are the folders and files of the person's home that hold
// credentials, which confined commands may never read. gh's hosts.yml is
// among them like every other token: a confined `gh` that needs to reach
// GitHub needs the person (or GH_TOKEN listed in sandbox.env).
func SecretStores(home string) []string {
	if home == "" {
		return nil
	}
	rel := []string{
		// Keys and cloud credentials.
		".ssh", ".aws", ".gnupg", ".netrc", ".docker", ".kube",
		".config/gcloud", ".azure", ".oci", ".config/doctl", ".config/hcloud",
		".config/containers/auth.json", ".vault-token", ".terraform.d", ".pgpass",
		".my.cnf", ".config/rclone", ".s3cfg", ".boto",
		// Forges and the command-line tools that hold their tokens.
		".config/gh", ".config/hub", ".config/glab-cli", ".git-credentials",
		".config/git/credentials",
		// Package registries' tokens.
		".npmrc", ".yarnrc", ".yarnrc.yml", ".pypirc", ".config/pip", ".pip",
		".cargo/credentials.toml", ".cargo/credentials", ".gem/credentials",
		".m2/settings.xml", ".gradle/gradle.properties", ".nuget/NuGet",
		// Model providers' and AI tools' tokens, other agents' logins.
		".cache/huggingface/token", ".huggingface", ".config/openai",
		".claude", ".claude.json", ".codex", ".config/github-copilot", ".gemini",
		// Password managers and keyrings.
		".password-store", ".local/share/password-store", ".1password",
		".config/op", ".local/share/keyrings", ".gnome2/keyrings",
		".local/share/kwalletd", "Library/Keychains",
		// Sockets of daemons that act for whoever connects: git's
		// credential cache hands out the tokens it holds, and a VM's or
		// desktop container engine's socket runs anything outside the
		// sandbox. A read-only mount does not stop connect(), so they are
		// hidden like the stores.
		".cache/git/credential", ".git-credential-cache", ".colima", ".lima",
		".rd", ".local/share/containers/podman", ".orbstack",
		".docker/run", ".config/colima",
		// The display server's key (keystrokes into the person's windows)
		// and shell histories (tokens typed on command lines).
		".Xauthority", ".bash_history", ".zsh_history", ".python_history",
		".psql_history", ".mysql_history", ".node_repl_history",
		".local/share/fish/fish_history",
		// Browser profiles, native, snap and flatpak: the person's
		// sessions on every site.
		".mozilla", ".config/google-chrome", ".config/google-chrome-beta",
		".config/google-chrome-unstable", ".config/chromium", ".config/BraveSoftware",
		".config/microsoft-edge", ".config/vivaldi", ".config/opera",
		"snap/chromium", "snap/firefox", ".var/app/org.chromium.Chromium",
		".var/app/com.google.Chrome", ".var/app/org.mozilla.firefox",
		".var/app/com.brave.Browser", ".var/app/com.microsoft.Edge",
		"Library/Application Support/Google/Chrome", "Library/Application Support/Firefox",
		"Library/Application Support/Chromium", "Library/Application Support/BraveSoftware",
		"Library/Application Support/Microsoft Edge", "Library/Cookies", "Library/Safari",
	}
	out := make([]string, len(rel))
	for i, r := range rel {
		out[i] = filepath.Join(home, filepath.FromSlash(r))
	}
	return out
}

// hostSockets are sockets through which a command could ask a privileged
// service to act for it, outside any sandbox.
var hostSockets = []string{"/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock", "/run/podman/podman.sock"}

// Sandbox is the mechanism detected at start. Its zero value is None.
type Sandbox struct {
	kind    Kind
	program string // bwrap or sandbox-exec
	problem error
	version string
}

// Program is the full path of the sandbox program in force (bwrap or
// sandbox-exec), for doctor; "" when there is none.
func (s *Sandbox) Program() string {
	if s == nil || !s.Confines() {
		return ""
	}
	return s.program
}

// Kind is the mechanism in force.
func (s *Sandbox) Kind() Kind {
	if s == nil || s.kind == "" {
		return None
	}
	return s.kind
}

// Confines reports whether commands can be confined here.
func (s *Sandbox) Confines() bool {
	k := s.Kind()
	return k == Bubblewrap || k == Seatbelt
}

// Problem says why no sandbox could be had; nil when one is in force or
// when the person turned it off.
func (s *Sandbox) Problem() error {
	if s == nil {
		return errors.New("no sandbox was set up")
	}
	return s.problem
}

// String describes the sandbox for the status bar, logs and doctor, e.g.
// "bubblewrap 0.8.0" or "none (bwrap is not installed …)".
func (s *Sandbox) String() string {
	switch k := s.Kind(); k {
	case Bubblewrap, Seatbelt:
		if s.version != "" {
			return string(k) + " " + s.version
		}
		return string(k)
	case Off:
		return "off (sandbox.mode: off): commands run with your full permissions"
	default:
		return "none (" + s.Problem().Error() + ")"
	}
}

// Warning is what infer says at start when commands cannot be confined,
// or "" when they can.
func (s *Sandbox) Warning() string {
	switch s.Kind() {
	case Bubblewrap, Seatbelt:
		return ""
	case Off:
		return "The sandbox is OFF (sandbox.mode: off): commands that run without asking have your full permissions. Use this only inside a container or VM."
	default:
		return "No sandbox is available (" + s.Problem().Error() + "), so every Bash command asks first."
	}
}

// Disabled is the sandbox the person turned off.
func Disabled() *Sandbox { return &Sandbox{kind: Off} }

// Unavailable is a sandbox that could not be had, for why.
func Unavailable(why error) *Sandbox { return &Sandbox{kind: None, problem: why} }

// Detect finds the sandbox this system offers, trying it once so that a
// bwrap that cannot create namespaces (a container without user
// namespaces) counts as none rather than failing every command later.
func Detect() *Sandbox { return detect() }

// Command returns the command that runs name with args confined by p,
// with env as the whole environment (the sandbox adds nothing of infer's
// own). It fails when no sandbox is in force: a caller must never fall
// back to running the command unconfined.
//
// The caller starts it in a session of its own (SysProcAttr.Setsid): then
// the command has no controlling terminal to push keystrokes into, and it
// and everything it starts share bwrap's process group, so one signal to
// the group stops them all.
func (s *Sandbox) Command(p Policy, env []string, name string, args ...string) (*exec.Cmd, error) {
	if p.Root == "" || !filepath.IsAbs(p.Root) {
		return nil, fmt.Errorf("sandbox: the project root %q is not an absolute path", p.Root)
	}
	var argv []string
	switch s.Kind() {
	case Bubblewrap:
		args, err := bwrapArgs(p, os.Geteuid() == 0)
		if err != nil {
			return nil, err
		}
		argv = append([]string{s.program}, args...)
		// Always under the forwarder, which gives the command a session
		// keyring of its own and, with a proxy, its way to the network.
		socket := ""
		if p.NetProxy != "" && p.Network {
			socket = netSocketInside
		}
		argv = append(argv, "--")
		argv = append(argv, netproxy.Argv(netHelperInside, socket, name)...)
	case Seatbelt:
		argv = []string{s.program, "-p", seatbeltProfile(p), name}
	default:
		return nil, fmt.Errorf("sandbox: commands cannot be confined here: %v", s.Problem())
	}
	argv = append(argv, args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = p.Root
	return cmd, nil
}

// existing keeps the paths that exist, cleaned, without duplicates.
func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		p = filepath.Clean(p)
		if _, err := os.Lstat(p); err != nil || slices.Contains(out, p) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// resolved is p with symlinks resolved where it exists, so that a bind
// mount or a Seatbelt rule names the real file system object; otherwise p.
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
