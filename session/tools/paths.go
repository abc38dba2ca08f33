package tools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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

// maxLinkHops bounds how many symbolic links realPath follows, so a link
// loop ends; the kernel refuses such paths anyway (ELOOP).
const maxLinkHops = 255

// realPath resolves every symbolic link in p and keeps the rest, which
// does not exist yet (a file about to be written). It walks p one element
// at a time instead of using filepath.EvalSymlinks, because a dangling
// link (one whose target does not exist yet) must count as where it
// points: writing through it creates the target, and a link inside the
// project naming a new file outside it is outside.
func realPath(p string) string {
	p = filepath.Clean(p)
	vol := filepath.VolumeName(p)
	resolved := vol + string(filepath.Separator)
	rest := splitPath(p[len(vol):])
	for hops := 0; len(rest) > 0; {
		elem := rest[0]
		rest = rest[1:]
		switch elem {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, elem)
		info, err := os.Lstat(next)
		if err != nil {
			// Nothing more exists (or it cannot be inspected, so it
			// cannot be written either): the rest is taken as written.
			return filepath.Join(append([]string{next}, rest...)...)
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		target, err := os.Readlink(next)
		if hops++; err != nil || hops > maxLinkHops {
			return filepath.Join(append([]string{next}, rest...)...)
		}
		if filepath.IsAbs(target) {
			v := filepath.VolumeName(target)
			resolved = v + string(filepath.Separator)
			target = target[len(v):]
		}
		rest = append(splitPath(target), rest...)
	}
	return resolved
}

// splitPath splits a path into its elements, leaving empty ones for
// realPath to skip.
func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}

// display shows a path relative to the root when it is inside it.
func display(env *Env, abs string) string {
	if env.Root != "" {
		if rel, err := filepath.Rel(env.Root, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return rel
		}
	}
	return abs
}
