package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Candidates for the programs infer runs for every command. They are
// looked for only here, never on PATH: PATH is the person's and their
// tools' (an activated virtualenv puts a project folder first), so a
// confined command that planted a bwrap there would make every later
// "confined" command run with the person's full rights.
var (
	bwrapCandidates = []string{"/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"}
	shellCandidates = []string{"/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"}
)

// Shell is the full path of the bash that runs commands, confined or
// approved: the first of a few fixed places that passes Trusted.
func Shell() (string, error) {
	return firstTrusted("bash", shellCandidates)
}

// firstTrusted is the first of candidates that passes Trusted, or an
// error naming each and why it was passed over.
func firstTrusted(what string, candidates []string) (string, error) {
	var why []string
	for _, c := range candidates {
		p, err := Trusted(c)
		if err == nil {
			return p, nil
		}
		// /bin is often a link to /usr/bin: one file, said once.
		if !errors.Is(err, os.ErrNotExist) && !slices.Contains(why, err.Error()) {
			why = append(why, err.Error())
		}
	}
	msg := fmt.Sprintf("no trusted %s: looked in %s (never on PATH)", what, strings.Join(candidates, ", "))
	if len(why) > 0 {
		msg += "; " + strings.Join(why, "; ")
	}
	return "", errors.New(msg)
}

// Trusted resolves path's links and returns the real file when only root
// can change it: a regular file owned by root that neither group nor
// others may write, in folders that are all the same, up to /. A program
// anyone else could replace is not one to trust with confining the
// person's commands, whoever infer runs as. It fails with an error
// matching os.ErrNotExist when path does not exist.
func Trusted(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(real) {
		return "", fmt.Errorf("%s is not an absolute path", path)
	}
	fi, err := os.Lstat(real)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", real)
	}
	if err := rootOnly(real, fi); err != nil {
		return "", err
	}
	for dir := filepath.Dir(real); ; dir = filepath.Dir(dir) {
		di, err := os.Lstat(dir)
		if err != nil {
			return "", err
		}
		if err := rootOnly(dir, di); err != nil {
			return "", err
		}
		if dir == filepath.Dir(dir) {
			return real, nil
		}
	}
}

// rootOnly fails unless fi (of p) is owned by root and not writable by
// its group or by others.
func rootOnly(p string, fi os.FileInfo) error {
	uid, ok := ownerOf(fi)
	if !ok {
		return fmt.Errorf("%s: its owner cannot be read here", p)
	}
	if uid != 0 {
		return fmt.Errorf("%s is owned by uid %d, not root", p, uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s can be written by others than root (mode %04o)", p, fi.Mode().Perm())
	}
	return nil
}
