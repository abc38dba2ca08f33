package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// TrustFile is the name of the trust store in infer's home: the project
// folders whose .infer/config.yaml the person trusted, each with the hash
// of the file they trusted. It lives in the home, not in the project, so a
// cloned repository cannot ship its own trust; sandboxed commands can
// neither read nor write the home.
const TrustFile = "trusted.json"

// trustVersion is the store's format; a newer one is refused rather than
// rewritten, so an older infer cannot drop what a newer one recorded.
const trustVersion = 1

// TrustPath is <home>/trusted.json.
func TrustPath(home string) string { return filepath.Join(home, TrustFile) }

// TrustState says whether a project's .infer/config.yaml is trusted.
type TrustState int

// Trust states.
const (
	// NoProjectConfig: the folder has no .infer/config.yaml (or it is the
	// home's own config.yaml), so there is nothing to trust.
	NoProjectConfig TrustState = iota
	// Trusted: the person trusted this folder with exactly this file.
	Trusted
	// Untrusted: the person never trusted this folder.
	Untrusted
	// TrustChanged: the person trusted this folder, but the file changed
	// since, so it is untrusted until they look at it again.
	TrustChanged
)

// String names the state for people and scripts.
func (s TrustState) String() string {
	switch s {
	case Trusted:
		return "trusted"
	case Untrusted:
		return "not trusted"
	case TrustChanged:
		return "changed since trusted"
	}
	return "no project config"
}

// TrustStatus is what CheckTrust found for one folder.
type TrustStatus struct {
	State TrustState
	// Folder is the absolute, cleaned project root: the store's key.
	Folder string
	// File is the project's config.yaml; "" when there is none.
	File string
	// SHA256 is the hex SHA-256 of the file's current bytes; "" when
	// there is no file.
	SHA256 string
	// TrustedAt is when the person last trusted the folder (Trusted and
	// TrustChanged only).
	TrustedAt time.Time
}

// trustStore is trusted.json.
type trustStore struct {
	Version int                   `json:"version"`
	Folders map[string]trustEntry `json:"folders"`
}

type trustEntry struct {
	SHA256    string    `json:"sha256"`
	TrustedAt time.Time `json:"trusted_at"`
}

// trustKey is the store's key for a project root: absolute and cleaned,
// so "." and the full path name one folder. Symlinks are not resolved
// here: callers pass ProjectRoot's answer, which already resolved them,
// and a path that resolves differently simply is not trusted.
func trustKey(projectRoot string) (string, error) {
	if projectRoot == "" {
		return "", errors.New("no project folder given")
	}
	abs, err := filepath.Abs(projectRoot)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", projectRoot, err)
	}
	return filepath.Clean(abs), nil
}

// projectConfigFile is the project's config.yaml, or "" when projectRoot
// is empty or the path is the home's own config.yaml (infer started in
// the person's home directory with the default ~/.infer home): that file
// is the person's own and is read as such.
func projectConfigFile(home, projectRoot string) string {
	if projectRoot == "" {
		return ""
	}
	p := ProjectConfigPath(projectRoot)
	if filepath.Clean(p) == filepath.Clean(ConfigPath(home)) {
		return ""
	}
	return p
}

// hashBytes is the hex SHA-256 of data.
func hashBytes(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// CheckTrust reports whether projectRoot's .infer/config.yaml is trusted.
// An unreadable or unsafe trust store is an error; callers treat the
// folder as untrusted then (fail closed), and the status still carries the
// folder, file and hash.
func CheckTrust(home, projectRoot string) (TrustStatus, error) {
	st, data, err := projectFileStatus(home, projectRoot)
	if err != nil || data == nil {
		return st, err
	}
	return st, lookupTrust(home, &st)
}

// projectFileStatus reads the project file and fills in everything but
// the store's verdict: the state is Untrusted when a file exists (data is
// then non-nil), NoProjectConfig when it does not.
func projectFileStatus(home, projectRoot string) (TrustStatus, []byte, error) {
	key, err := trustKey(projectRoot)
	if err != nil {
		return TrustStatus{}, nil, err
	}
	st := TrustStatus{State: NoProjectConfig, Folder: key}
	path := projectConfigFile(home, key)
	if path == "" {
		return st, nil, nil
	}
	data, err := readSmallFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil, nil
	}
	if err != nil {
		return st, nil, fmt.Errorf("read %s: %w", DisplayPath(path), err)
	}
	if data == nil {
		data = []byte{} // an empty file is still a file
	}
	st.State, st.File, st.SHA256 = Untrusted, path, hashBytes(data)
	return st, data, nil
}

// lookupTrust sets st.State from the store for a file whose hash is
// st.SHA256. On error st stays Untrusted.
func lookupTrust(home string, st *TrustStatus) error {
	store, err := readTrustStore(home)
	if err != nil {
		return err
	}
	e, ok := store.Folders[st.Folder]
	switch {
	case !ok:
		st.State = Untrusted
	case e.SHA256 == st.SHA256:
		st.State, st.TrustedAt = Trusted, e.TrustedAt
	default:
		st.State, st.TrustedAt = TrustChanged, e.TrustedAt
	}
	return nil
}

// TrustSHA256 records that the person trusts projectRoot with the
// .infer/config.yaml whose SHA-256 is sum (hex): the file applies fully
// while its bytes hash to sum.
func TrustSHA256(home, projectRoot, sum string) error {
	key, err := trustKey(projectRoot)
	if err != nil {
		return err
	}
	if b, err := hex.DecodeString(sum); err != nil || len(b) != sha256.Size {
		return fmt.Errorf("trust %s: %q is not a SHA-256 in hex", DisplayPath(key), sum)
	}
	return updateTrustStore(home, func(s *trustStore) bool {
		s.Folders[key] = trustEntry{SHA256: sum, TrustedAt: time.Now().UTC()}
		return true
	})
}

// RevokeTrust forgets projectRoot, so its file's widening settings are
// ignored again from the next start. It reports whether the folder was
// trusted (with any version of the file).
func RevokeTrust(home, projectRoot string) (bool, error) {
	key, err := trustKey(projectRoot)
	if err != nil {
		return false, err
	}
	var found bool
	err = updateTrustStore(home, func(s *trustStore) bool {
		_, found = s.Folders[key]
		delete(s.Folders, key)
		return found
	})
	return found, err
}

// readTrustStore reads trusted.json; a missing file is an empty store.
// A store that other users may write is refused: anyone who can add a
// line to it can make infer send the person's keys where they like.
func readTrustStore(home string) (*trustStore, error) {
	path := TrustPath(home)
	s := &trustStore{Version: trustVersion, Folders: map[string]trustEntry{}}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", DisplayPath(path), err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", DisplayPath(path), err)
	}
	if !isWindows() && fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("%s can be changed by other users (mode %04o), so infer does not believe it; run `chmod 600 %s`", DisplayPath(path), fi.Mode().Perm(), DisplayPath(path))
	}
	dec := json.NewDecoder(f)
	if err := dec.Decode(s); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%v): fix it by hand, or delete it to forget every trusted folder", DisplayPath(path), err)
	}
	if s.Version > trustVersion {
		return nil, fmt.Errorf("%s has version %d, newer than this infer understands (%d): upgrade infer", DisplayPath(path), s.Version, trustVersion)
	}
	if s.Folders == nil {
		s.Folders = map[string]trustEntry{}
	}
	s.Version = trustVersion
	return s, nil
}

// updateTrustStore changes trusted.json under an exclusive lock, so two
// `infer trust` runs (or a trust and a revoke) never undo each other, and
// replaces it atomically with mode 0600. fn reports whether it changed
// anything; an unchanged store is not rewritten.
func updateTrustStore(home string, fn func(*trustStore) bool) error {
	if err := EnsureDir(home); err != nil {
		return err
	}
	path := TrustPath(home)
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return fmt.Errorf("lock %s: %w", DisplayPath(path), err)
	}
	defer unlock()
	s, err := readTrustStore(home)
	if err != nil {
		return err
	}
	if !fn(s) {
		return nil
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append(data, '\n'), 0o600)
}
