package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/adrg/xdg"
)

// File and directory names inside the home and a project.
const (
	// HomeEnv names the environment variable that overrides the home.
	HomeEnv = "INFER_HOME"
	// BrowserUseFile holds the bridge settings and the pairing token.
	BrowserUseFile = "browser_use.yaml"
	// ConfigFile holds models, providers, storage and tool settings.
	ConfigFile = "config.yaml"
	// ProjectConfigDir is the directory inside a project root whose
	// config.yaml is layered over the user's.
	ProjectConfigDir = ".infer"

	// xdgSubdir keeps our runtime and cache files apart from other programs'.
	xdgSubdir = "infer"
	// slugReadableMax bounds the readable part of a project slug so paths
	// under the home stay well below file-name limits.
	slugReadableMax = 48
)

// Home returns infer's home directory: $INFER_HOME made absolute when set,
// else ~/.infer. It does not create it (see EnsureDir).
func Home() (string, error) { return HomeFrom(os.Getenv) }

// HomeFrom is Home with the environment read through getenv, for programs
// that take their environment as a value (infer-sim, tests).
func HomeFrom(getenv func(string) string) (string, error) {
	if h := getenv(HomeEnv); h != "" {
		if h == "~" || strings.HasPrefix(h, "~/") {
			// A quoted "~/x" reaches us unexpanded; expand it as the shell would.
			userHome, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("%s=%s: cannot expand ~: %w; set it to an absolute path", HomeEnv, h, err)
			}
			h = filepath.Join(userHome, strings.TrimPrefix(h, "~"))
		}
		abs, err := filepath.Abs(h)
		if err != nil {
			return "", fmt.Errorf("%s=%s: %w; set it to an absolute path", HomeEnv, h, err)
		}
		return abs, nil
	}
	userHome, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("cannot find your home directory (%w); set %s to where infer should keep its files", err, HomeEnv)
	}
	return filepath.Join(userHome, ".infer"), nil
}

// EnsureDir creates dir and its parents with mode 0700, because the home
// holds the pairing token and conversations. Existing directories keep
// their mode.
func EnsureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", DisplayPath(dir), err)
	}
	return nil
}

// BrowserUsePath is <home>/browser_use.yaml.
func BrowserUsePath(home string) string { return filepath.Join(home, BrowserUseFile) }

// ConfigPath is <home>/config.yaml.
func ConfigPath(home string) string { return filepath.Join(home, ConfigFile) }

// ProjectConfigPath is <projectRoot>/.infer/config.yaml.
func ProjectConfigPath(projectRoot string) string {
	return filepath.Join(projectRoot, ProjectConfigDir, ConfigFile)
}

// ProjectRoot returns the project that dir belongs to: the nearest ancestor
// (or dir itself) holding a .git directory or file — a file marks worktrees
// and submodules — else dir. The result is absolute with symlinks resolved,
// like git's own top-level, so one project has one slug however it is
// reached.
func ProjectRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("resolve project directory %s: %w", dir, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	for d := abs; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		} else if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, os.ErrPermission) {
			return "", fmt.Errorf("look for .git in %s: %w", d, err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return abs, nil
		}
		d = parent
	}
}

// ProjectSlug renders an absolute project root as one readable directory
// name, e.g. "/home/alice/src/infer" → "home-alice-src-infer-3f2a91c0".
// The readable part is lowercased, keeps [a-z0-9._-] and is trimmed to its
// last 48 characters (the end of a path says the most); the 8 hex digits of
// SHA-256 over the exact cleaned path keep paths that differ only in case
// or punctuation apart.
func ProjectSlug(root string) string {
	clean := filepath.Clean(root)
	sum := sha256.Sum256([]byte(clean))
	hash := hex.EncodeToString(sum[:4])

	var b strings.Builder
	dash := true // suppresses leading and repeated dashes
	for _, r := range strings.ToLower(filepath.ToSlash(clean)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.' || r == '_':
			b.WriteRune(r)
			dash = false
		default:
			if !dash {
				b.WriteByte('-')
				dash = true
			}
		}
	}
	readable := b.String()
	if len(readable) > slugReadableMax {
		readable = readable[len(readable)-slugReadableMax:]
	}
	// A leading dot would hide the directory; stray dashes look like flags.
	readable = strings.Trim(readable, "-.")
	if readable == "" {
		return hash
	}
	return readable + "-" + hash
}

// ProjectDir is where infer keeps one project's data:
// <home>/projects/<slug>.
func ProjectDir(home, projectRoot string) string {
	return filepath.Join(home, "projects", ProjectSlug(projectRoot))
}

// ConversationsDir holds a project's stored conversations.
func ConversationsDir(home, projectRoot string) string {
	return filepath.Join(ProjectDir(home, projectRoot), "conversations")
}

// ArtifactsDir holds files the agent generated for a project; the bridge
// serves it read-only under /artifacts/.
func ArtifactsDir(home, projectRoot string) string {
	return filepath.Join(ProjectDir(home, projectRoot), "artifacts")
}

// CacheDir returns a directory for disposable state such as a Chromium
// profile, under the XDG cache directory, created with mode 0700.
func CacheDir(name string) (string, error) {
	// xdg creates the parents of a file; the last element is ours to make.
	p, err := xdg.CacheFile(filepath.Join(xdgSubdir, name))
	if err != nil {
		return "", fmt.Errorf("cache directory %s: %w", name, err)
	}
	if err := os.MkdirAll(p, 0o700); err != nil {
		return "", fmt.Errorf("cache directory %s: %w", name, err)
	}
	return p, nil
}

// OwnDirs are the folders outside the home where infer keeps its own
// files: its state (infer.log, which records tool arguments, URLs and
// approvals) and its cache (the browser profile it starts, downloaded
// model lists). Nothing confined may read them.
func OwnDirs() []string {
	return []string{filepath.Join(xdg.StateHome, xdgSubdir), filepath.Join(xdg.CacheHome, xdgSubdir)}
}

func isWindows() bool { return runtime.GOOS == "windows" }
