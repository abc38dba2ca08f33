// Package linkpath finds where a path leads once every symbolic link in
// it is followed, the way the kernel walks it, for the inside-or-outside
// decisions of the tool policy and the Bash guard. Those must agree with
// what a command will actually touch, and filepath.EvalSymlinks cannot
// answer for paths that do not exist yet: a file about to be written, or
// a dangling link whose target writing would create.
package linkpath

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxHops bounds how many links are followed, so that a loop ends; the
// kernel refuses such paths anyway (ELOOP).
const maxHops = 255

// Real returns where the absolute path p leads. See From.
func Real(p string) string {
	vol := filepath.VolumeName(p)
	return From(vol+string(filepath.Separator), p[len(vol):])
}

// From resolves p (relative, or absolute) starting in dir, a folder whose
// links are already resolved. It goes one element at a time, so that ..
// after a link climbs out of the link's target, not out of the folder
// holding the link (filepath.Clean gets that wrong). The part that does
// not exist (or cannot be inspected, so cannot be written either) is kept
// as written, and a dangling link counts as the place it points to.
func From(dir, p string) string {
	resolved := filepath.Clean(dir)
	if filepath.IsAbs(p) {
		vol := filepath.VolumeName(p)
		resolved, p = vol+string(filepath.Separator), p[len(vol):]
	}
	rest := split(p)
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
			return filepath.Join(append([]string{next}, rest...)...)
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		target, err := os.Readlink(next)
		if hops++; err != nil || hops > maxHops {
			return filepath.Join(append([]string{next}, rest...)...)
		}
		if filepath.IsAbs(target) {
			vol := filepath.VolumeName(target)
			resolved, target = vol+string(filepath.Separator), target[len(vol):]
		}
		rest = append(split(target), rest...)
	}
	return resolved
}

// split splits a path into its elements, leaving empty ones for From to
// skip.
func split(p string) []string { return strings.Split(filepath.ToSlash(p), "/") }
