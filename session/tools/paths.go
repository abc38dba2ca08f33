package tools

import (
	"context"
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

// resolvedPaths is what the policy saw of one call's paths: the project root
// and each path argument, made absolute, with its links followed at that
// moment. The tool acts on exactly these resolved paths (see target), so
// a name swapped for a link after the decision leads nowhere new.
type resolvedPaths struct {
	root string            // the root, links resolved
	real map[string]string // absolute path argument → where it led
}

// resolvePaths resolves the path arguments of a call to t once, for the policy
// and then the tool.
func resolvePaths(env *Env, t Tool, args []byte) resolvedPaths {
	j := resolvedPaths{real: map[string]string{}}
	if env.Root != "" {
		j.root = realPath(env.Root)
	}
	pt, ok := t.(pathTool)
	if !ok {
		return j
	}
	for _, raw := range pt.paths(args) {
		if abs, err := resolve(env, raw); err == nil {
			j.real[abs] = realPath(abs)
		}
	}
	return j
}

// inside reports whether real, a resolved path, is the root or below it.
func (j resolvedPaths) inside(real string) bool {
	if j.root == "" {
		return false
	}
	rel, err := filepath.Rel(j.root, real)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

type resolvedKey struct{}

// withResolved hands the paths the policy judged to the tool that runs.
func withResolved(ctx context.Context, j resolvedPaths) context.Context {
	return context.WithValue(ctx, resolvedKey{}, j)
}

// target is the resolved path a tool opens for abs: the one the policy
// judged for this call, or, for a tool run outside the pipeline, where
// abs leads now. Tools open it with package nolink, so a link planted in
// it afterwards makes the open fail instead of leading elsewhere.
func target(ctx context.Context, abs string) string {
	if j, ok := ctx.Value(resolvedKey{}).(resolvedPaths); ok {
		if real, ok := j.real[abs]; ok {
			return real
		}
	}
	return realPath(abs)
}

// hiddenPaths are the sandbox's DenyRead entries (infer's home, state and
// cache, the secret stores, sandbox.deny_read), links resolved: what no
// confined command can read. The file tools run in infer's own process,
// outside the sandbox, so they keep to the same list themselves: a
// project that is the home folder holds ~/.ssh and ~/.infer.
func (env *Env) hiddenPaths() []string {
	out := make([]string, 0, len(env.Confine.DenyRead))
	for _, d := range env.Confine.DenyRead {
		if filepath.IsAbs(d) {
			out = append(out, realPath(d))
		}
	}
	return out
}

// hiddenBy returns the entry of hidden that real, a resolved path, is or
// is under, or "".
func hiddenBy(hidden []string, real string) string {
	for _, h := range hidden {
		if real == h || strings.HasPrefix(real, h+string(filepath.Separator)) || h == string(filepath.Separator) {
			return h
		}
	}
	return ""
}
