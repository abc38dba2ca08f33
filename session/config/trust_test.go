package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// trust records the project's current file as trusted, failing the test
// on error.
func trust(t *testing.T, home, project string) {
	t.Helper()
	if _, err := trustNow(home, project); err != nil {
		t.Fatal(err)
	}
}

func checkState(t *testing.T, home, project string, want TrustState) TrustStatus {
	t.Helper()
	st, err := CheckTrust(home, project)
	if err != nil {
		t.Fatal(err)
	}
	if st.State != want {
		t.Fatalf("state = %v, want %v", st.State, want)
	}
	return st
}

func TestTrustLifecycle(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	checkState(t, home, project, NoProjectConfig)
	if _, err := trustNow(home, project); err == nil || !strings.Contains(err.Error(), "nothing to trust") {
		t.Fatalf("trusting a folder without a file: %v", err)
	}

	writeFile(t, ProjectConfigPath(project), "agent:\n  mode: auto\n", 0o644)
	st := checkState(t, home, project, Untrusted)
	if st.File != ProjectConfigPath(project) || len(st.SHA256) != 64 || st.Folder != filepath.Clean(project) {
		t.Errorf("status = %+v", st)
	}

	trust(t, home, project)
	st = checkState(t, home, project, Trusted)
	if st.TrustedAt.IsZero() {
		t.Error("no trusted_at")
	}
	fi, err := os.Stat(TrustPath(home))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("trusted.json: %v, %v (want mode 0600)", fi, err)
	}

	// Any change to the bytes asks again, even a comment.
	writeFile(t, ProjectConfigPath(project), "agent:\n  mode: auto\n# harmless?\n", 0o644)
	checkState(t, home, project, TrustChanged)
	trust(t, home, project)
	checkState(t, home, project, Trusted)

	if was, err := RevokeTrust(home, project); err != nil || !was {
		t.Fatalf("revoke: %v, %v", was, err)
	}
	checkState(t, home, project, Untrusted)
	if was, err := RevokeTrust(home, project); err != nil || was {
		t.Fatalf("second revoke: %v, %v", was, err)
	}
}

func TestTrustKeyIsTheCleanedAbsolutePath(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	writeFile(t, ProjectConfigPath(project), "agent:\n  mode: auto\n", 0o600)
	trust(t, home, filepath.Join(project, "sub", "..")+string(filepath.Separator))
	checkState(t, home, project, Trusted)
	// Another folder with the same bytes is not trusted.
	other := t.TempDir()
	writeFile(t, ProjectConfigPath(other), "agent:\n  mode: auto\n", 0o600)
	checkState(t, home, other, Untrusted)
}

func TestTrustSHA256RecordsWhatWasShown(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	writeFile(t, ProjectConfigPath(project), "agent:\n  mode: plan\n", 0o600)
	shown := checkState(t, home, project, Untrusted)
	// The file changes between showing it and the person's answer.
	writeFile(t, ProjectConfigPath(project), "agent:\n  mode: auto\n", 0o600)
	if err := TrustSHA256(home, project, shown.SHA256); err != nil {
		t.Fatal(err)
	}
	checkState(t, home, project, TrustChanged)
	if err := TrustSHA256(home, project, "not-a-hash"); err == nil {
		t.Error("a malformed hash was recorded")
	}
}

func TestTrustStoreOthersCanWriteIsNotBelieved(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	writeFile(t, ProjectConfigPath(project), "agent:\n  mode: auto\n", 0o600)
	trust(t, home, project)
	if err := os.Chmod(TrustPath(home), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckTrust(home, project); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("check: %v", err)
	}
	cfg, warnings, err := LoadConfig(home, project)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Agent.Mode != DefaultMode {
		t.Errorf("mode = %q: a store others may write must trust nothing", cfg.Agent.Mode)
	}
	if !strings.Contains(strings.Join(warnings, "\n"), "chmod 600") {
		t.Errorf("warnings = %q", warnings)
	}
	if _, err := trustNow(home, project); err == nil {
		t.Error("trust wrote to a store others may write")
	}
}

func TestTrustStoreCorruptIsReportedNotOverwritten(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	writeFile(t, ProjectConfigPath(project), "agent:\n  mode: auto\n", 0o600)
	writeFile(t, TrustPath(home), "{not json", 0o600)
	if _, err := CheckTrust(home, project); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("check: %v", err)
	}
	if _, err := trustNow(home, project); err == nil {
		t.Fatal("trust replaced a corrupt store")
	}
	if data, _ := os.ReadFile(TrustPath(home)); string(data) != "{not json" {
		t.Errorf("store changed: %s", data)
	}
	writeFile(t, TrustPath(home), `{"version": 99, "folders": {}}`, 0o600)
	if _, err := CheckTrust(home, project); err == nil || !strings.Contains(err.Error(), "upgrade infer") {
		t.Fatalf("newer version: %v", err)
	}
}

// TestTrustHomeConfigIsNotAProjectFile: started in the person's home
// directory, the project file is the home's own config.yaml.
func TestTrustHomeConfigIsNotAProjectFile(t *testing.T) {
	userHome := t.TempDir()
	home := filepath.Join(userHome, ProjectConfigDir)
	writeFile(t, ConfigPath(home), "agent:\n  mode: auto\n", 0o600)
	checkState(t, home, userHome, NoProjectConfig)
	cfg, warnings, err := LoadConfig(home, userHome)
	if err != nil || cfg.Agent.Mode != "auto" || len(warnings) != 0 {
		t.Fatalf("cfg %+v, warnings %q, err %v", cfg.Agent, warnings, err)
	}
}

func TestTrustConcurrentChangesAreAllKept(t *testing.T) {
	home := t.TempDir()
	var projects []string
	for i := range 16 {
		p := t.TempDir()
		writeFile(t, ProjectConfigPath(p), fmt.Sprintf("agent:\n  max_steps: %d\n", i+1), 0o600)
		projects = append(projects, p)
	}
	var wg sync.WaitGroup
	for _, p := range projects {
		wg.Go(func() {
			if _, err := trustNow(home, p); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for _, p := range projects {
		checkState(t, home, p, Trusted)
	}
}

// trustNow trusts projectRoot's .infer/config.yaml as it is now, as a person
// who read it would through TrustSHA256, and returns the new status. It
// fails when there is no project file.
func trustNow(home, projectRoot string) (TrustStatus, error) {
	st, _, err := projectFileStatus(home, projectRoot)
	if err != nil {
		return st, err
	}
	if st.State == NoProjectConfig {
		return st, fmt.Errorf("%s has no %s: there is nothing to trust", DisplayPath(st.Folder), filepath.Join(ProjectConfigDir, ConfigFile))
	}
	if err := TrustSHA256(home, st.Folder, st.SHA256); err != nil {
		return st, err
	}
	st.State, st.TrustedAt = Trusted, time.Now().UTC()
	return st, nil
}
