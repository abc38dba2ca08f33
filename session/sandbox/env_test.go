package sandbox

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfinedCommandsSeeOnlyListedVariables: variables whose names do not
// look secret still carry secrets (the DATABASE_URL, STRIPE_SK…),
// so only the listed ones reach a confined command, plus what the person
// names in sandbox.env.
func TestConfinedCommandsSeeOnlyListedVariables(t *testing.T) {
	sb := confined(t)
	w := newWorld(t)
	leaked := map[string]string{
		"DATABASE_URL": "postgres://u:db-secret@h/db", "STRIPE_SK": "sk_live_stripe-secret",
		"SENTRY_DSN": "https://sentry-secret@o1.ingest.example/1", "SLACK_WEBHOOK_URL": "https://hooks.example/slack-secret",
		"NPM_AUTH": "npm-secret", "MY_APP_KEY": "app-secret", "GH_TOKEN": "gh-secret", "GITHUB_TOKEN": "github-secret",
		"SSH_AUTH_SOCK": "/run/user/0/agent-secret", "XDG_RUNTIME_DIR": "/run/user/0-secret",
	}
	kept := map[string]string{
		"PATH": os.Getenv("PATH"), "HOME": w.home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8-kept",
		"TERM": "xterm-kept", "GOFLAGS": "-mod=mod-kept", "CGO_ENABLED": "0-kept", "JAVA_HOME": "/jdk-kept",
		"VIRTUAL_ENV": "/venv-kept", "HTTPS_PROXY": "http://127.0.0.1:1-kept", "no_proxy": "localhost-kept",
		"XDG_CACHE_HOME": "/cache-kept", "EDITOR": "vi-kept",
	}
	var env []string
	for k, v := range leaked {
		env = append(env, k+"="+v)
	}
	for k, v := range kept {
		env = append(env, k+"="+v)
	}
	p := w.policy()
	p.Env = []string{"MY_APP_KEY"} // sandbox.env: [MY_APP_KEY]
	cmd, err := sb.Command(p, Environ(env, p.Env), "/bin/bash", "-c", "env")
	if err != nil {
		t.Fatal(err)
	}
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("env: %v: %s", err, b)
	}
	out := string(b)
	for k, v := range leaked {
		if k == "MY_APP_KEY" {
			continue
		}
		if strings.Contains(out, k+"=") || strings.Contains(out, v) {
			t.Errorf("%s reached the confined command", k)
		}
	}
	for k, v := range kept {
		if !strings.Contains(out, k+"="+v+"\n") {
			t.Errorf("%s did not reach the confined command", k)
		}
	}
	if !strings.Contains(out, "MY_APP_KEY=app-secret\n") {
		t.Error("a name listed in sandbox.env did not reach the confined command")
	}
}

// TestConfinedCommandsCannotReadCredentialStores: the stores the issue
// found readable (gh, rclone, Hugging Face, OpenAI) and the others people
// commonly have, and infer's own log, are hidden.
func TestConfinedCommandsCannotReadCredentialStores(t *testing.T) {
	sb := confined(t)
	w := newWorldOffTmp(t)
	state := filepath.Join(w.home, ".local", "state", "infer")
	stores := []string{
		".config/gh/hosts.yml", ".config/rclone/rclone.conf", ".cache/huggingface/token",
		".huggingface/token", ".config/openai/auth.json", ".config/gcloud/credentials.db",
		".azure/msal_token_cache.json", ".kube/config", ".npmrc", ".pypirc", ".cargo/credentials.toml",
		".git-credentials", ".password-store/x.gpg", ".local/share/keyrings/login.keyring",
		".gnome2/keyrings/login.keyring", "snap/chromium/common/chromium/Default/Cookies",
		".var/app/org.chromium.Chromium/config/chromium/Default/Cookies", ".config/vivaldi/Default/Cookies",
		".config/opera/Cookies",
	}
	var paths []string
	for _, rel := range stores {
		paths = append(paths, filepath.Join(w.home, filepath.FromSlash(rel)))
	}
	paths = append(paths, filepath.Join(state, "infer.log"))
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("store-secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := w.policy()
	p.DenyRead = append(p.DenyRead, state) // as assemble adds config.OwnDirs
	for _, path := range paths {
		if out, ok := run(t, sb, p, "cat '"+path+"'"); ok || strings.Contains(out, "store-secret") {
			t.Errorf("cat %s succeeded in the sandbox: %q", path, out)
		}
	}
	if out, ok := run(t, sb, p, "cat "+filepath.Join(w.home, "notes.txt")); !ok || out != "ordinary notes" {
		t.Errorf("an ordinary file in the home: %q, %v", out, ok)
	}
}

// TestConfinedCommandsCannotReachDaemonSocketsInTheHome: git's credential
// cache listens on a socket in the home folder and hands its tokens to
// whoever connects; a read-only mount does not stop connect(), so the
// folder must be hidden, not only read-only.
func TestConfinedCommandsCannotReachDaemonSocketsInTheHome(t *testing.T) {
	sb := confined(t)
	w := newWorldOffTmp(t)
	dir := filepath.Join(w.home, ".cache", "git", "credential")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "socket")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprint(c, "password=cached-token\n")
			c.Close()
		}
	}()
	script := "import socket; s = socket.socket(socket.AF_UNIX); s.connect('" + sock + "'); print(s.recv(100).decode())"
	if out, ok := run(t, sb, w.policy(), "python3 -c \""+script+"\""); ok || strings.Contains(out, "cached-token") {
		t.Errorf("the credential cache's socket answered in the sandbox: %q", out)
	}
}
