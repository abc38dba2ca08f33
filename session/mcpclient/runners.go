package mcpclient

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// runnerStartTimeout bounds starting a server that a package runner
// downloads, when its config sets no start_timeout.
const runnerStartTimeout = 2 * time.Minute

// runnerCache is the variable that moves a package runner's cache (npx,
// uvx) and the folder name infer gives it, or "" for other commands.
// Those runners download the server into their cache before running it,
// and the person's own cache (~/.npm, ~/.cache/uv) is read-only inside
// the sandbox; making it writable would let a confined server plant code
// that the person's unconfined npx or uvx later runs. So each sandboxed
// server gets a cache of its own instead.
func runnerCache(command string, args []string) (env, name string) {
	base := filepath.Base(command)
	first := ""
	if len(args) > 0 {
		first = args[0]
	}
	switch {
	case base == "npx", base == "npm" && (first == "exec" || first == "x"):
		return "npm_config_cache", "npm"
	case base == "uvx", base == "uv" && (first == "tool" || first == "run"):
		return "UV_CACHE_DIR", "uv"
	}
	return "", ""
}

// setsEnv reports whether the server's env sets the variable (npm reads
// its settings in any case).
func setsEnv(env map[string]string, name string) bool {
	for k := range env {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// ownCache makes the server's own runner cache under root and returns it.
func ownCache(root, server, name string) (string, error) {
	if root == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache folder for its %s cache: %v", name, err)
		}
		root = filepath.Join(dir, "infer-mcp")
	}
	// A server's name is the person's to choose; it names one folder.
	server = strings.NewReplacer("/", "_", `\`, "_").Replace(server)
	if server == "." || server == ".." {
		server = "_" + server
	}
	dir := filepath.Join(root, server, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("its %s cache: %v", name, err)
	}
	return dir, nil
}

// refusals remembers what the network proxy refused a server, so a server
// that fails to start because of it is reported with the host and how to
// allow it, whatever the server itself printed.
type refusals struct {
	mu   sync.Mutex
	seen map[string]bool
	msgs []string
}

func (r *refusals) add(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	msg := err.Error()
	if r.seen[msg] {
		return
	}
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[msg] = true
	r.msgs = append(r.msgs, msg)
}

func (r *refusals) String() string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.msgs, "; ")
}

// underTemp reports the first of the server's command and arguments that
// is a path in the system's temp folder, which a sandboxed server cannot
// see: its /tmp is a private one. A project under /tmp is bound again
// inside, so paths in root do not count.
func underTemp(root, command string, args []string) string {
	temps := []string{"/tmp", "/var/tmp", os.TempDir()}
	for _, p := range append([]string{command}, args...) {
		if !filepath.IsAbs(p) || root != "" && within(root, p) {
			continue
		}
		for _, t := range temps {
			if within(t, p) {
				return p
			}
		}
	}
	return ""
}

func within(dir, p string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(p))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// readOnlyHit reports whether a server's stderr shows a write refused by
// the read-only file system. npm reports some as ENOENT from mkdir (its
// recursive mkdir on a read-only folder), which is how a fresh home's
// ~/.npm fails.
func readOnlyHit(stderr string) bool {
	low := strings.ToLower(stderr)
	return strings.Contains(stderr, "EROFS") || strings.Contains(low, "read-only file system") ||
		strings.Contains(stderr, "ENOENT") && strings.Contains(low, "mkdir")
}
