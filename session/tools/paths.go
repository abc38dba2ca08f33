package tools

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/infer-workspace/infer/internal/linkpath"
)

// resolve turns a path argument into an absolute path: relative paths are
// taken from the project root, and ~ means the home directory. Absolute
// paths are allowed (this is the person's machine); the permission policy
// asks before touching anything outside the root.
func resolve(env *Env, p string) (string, error) {
	if p == "" {
		return "", errors.New("the path is empty; give a path relative to the project root, e.g. \"README.md\"")
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", errors.New("cannot resolve ~: the home directory is unknown; give an absolute path")
		}
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) {
		if env.Root == "" {
			return "", errors.New("no project root is set; give an absolute path")
		}
		p = filepath.Join(env.Root, p)
	}
	return filepath.Clean(p), nil
}

// insideRoot reports whether abs is the root or below it, after resolving
// symbolic links, so a link pointing out of the project counts as outside.
func insideRoot(root, abs string) bool {
	if root == "" {
		return false
	}
	r, p := realPath(root), realPath(abs)
	rel, err := filepath.Rel(r, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// realPath resolves every symbolic link in p and keeps the rest, which
// does not exist yet (a file about to be written); a dangling link counts
// as where it points, because writing through it creates the target (see
// linkpath).
func realPath(p string) string { return linkpath.Real(filepath.Clean(p)) }

// display shows a path relative to the root when it is inside it.
func display(env *Env, abs string) string {
	if env.Root != "" {
		if rel, err := filepath.Rel(env.Root, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return rel
		}
	}
	return abs
}
