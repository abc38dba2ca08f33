package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMCPServersValidate(t *testing.T) {
	for _, c := range []struct{ yaml, want string }{
		{"mcp:\n  servers:\n    a__b:\n      command: x\n", `mcp.servers.a__b: is not a usable server name`},
		{"mcp:\n  servers:\n    s:\n      args: [x]\n", "has neither command nor url"},
		{"mcp:\n  servers:\n    s:\n      command: x\n      url: http://h/mcp\n", "has both command and url"},
		{"mcp:\n  servers:\n    s:\n      url: ftp://h/mcp\n", "mcp.servers.s.url: is not an http(s) URL"},
		{"mcp:\n  servers:\n    s:\n      command: x\n      headers: {A: b}\n", "mcp.servers.s.headers: is only for HTTP servers"},
		{"mcp:\n  servers:\n    s:\n      command: x\n      env: {1A: b}\n", "is not an environment variable name"},
		{"mcp:\n  servers:\n    s:\n      command: x\n      start_timeout: 1ms\n", "start_timeout: 1ms is out of range"},
		{"mcp:\n  standalone:\n    mode: yolo\n", `mcp.standalone.mode: "yolo" is not a mode for infer mcp`},
	} {
		_, err := parseOnly([]byte(c.yaml), "config.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.yaml, err, c.want)
		}
	}
	cfg, err := parseOnly([]byte("mcp:\n  servers:\n    gh:\n      url: https://h/mcp\n      headers: {Authorization: Bearer literal-in-home}\n    fs:\n      command: npx\n      sandbox: false\n"), "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s := cfg.MCP.Servers["gh"]; s.Transport() != "http" || !s.Confined() {
		t.Errorf("gh = %+v", s)
	}
	if s := cfg.MCP.Servers["fs"]; s.Transport() != "stdio" || s.Confined() {
		t.Errorf("fs = %+v", s)
	}
}

// A project file may name environment variables in headers, never hold
// the value; the person's own file may.
func TestProjectMCPHeadersMustComeFromTheEnvironment(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	writeFile(t, ConfigPath(home), "mcp:\n  servers:\n    mine:\n      url: https://h/mcp\n      headers: {Authorization: Bearer sekrit}\n", 0o600)
	writeFile(t, ProjectConfigPath(root), "mcp:\n  servers:\n    gh:\n      url: https://h/mcp\n      headers:\n        Authorization: Bearer ghp_literal_token\n", 0o600)
	_, err := Load(home, root)
	if err == nil {
		t.Fatal("a literal header in a project file loaded")
	}
	msg := err.Error()
	for _, want := range []string{".infer/config.yaml:", "mcp.servers.gh.headers.Authorization", "literal value", "${VARIABLE}"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "ghp_literal_token") {
		t.Errorf("the error shows the secret: %s", msg)
	}
	writeFile(t, ProjectConfigPath(root), "mcp:\n  servers:\n    gh:\n      url: https://h/mcp\n      headers:\n        Authorization: Bearer ${GH_TOKEN}\n", 0o600)
	l, err := Load(home, root)
	if err != nil {
		t.Fatal(err)
	}
	// Untrusted, the project's server is not started; the person's is.
	if _, ok := l.Config.MCP.Servers["gh"]; ok {
		t.Error("an untrusted project's server applied")
	}
	if _, ok := l.Config.MCP.Servers["mine"]; !ok || !strings.Contains(strings.Join(l.Warnings, "\n"), "mcp.servers.gh.url") {
		t.Errorf("servers %v, warnings %q", l.Config.MCP.Servers, l.Warnings)
	}
}

func TestExpandEnv(t *testing.T) {
	env := map[string]string{"TOKEN": "abc"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if got, err := ExpandEnv("Bearer ${TOKEN}", lookup); err != nil || got != "Bearer abc" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := ExpandEnv("${NOPE} ${TOKEN}", lookup); err == nil || !strings.Contains(err.Error(), "NOPE is not set") || strings.Contains(err.Error(), "abc") {
		t.Errorf("err = %v", err)
	}
}

// TestAProjectNeverStartsAServerUnconfined is the scenario: a
// trusted project file declares a server that runs a script in the
// repository with sandbox: false. A confined command can rewrite the
// script without touching the trusted bytes, so the server runs in the
// sandbox anyway, and the person is told to move it to their own file.
func TestAProjectNeverStartsAServerUnconfined(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	writeFile(t, ConfigPath(home), "mcp:\n  servers:\n    mine:\n      command: my-server\n      sandbox: false\n    shared:\n      command: my-other-server\n      sandbox: false\n", 0o600)
	writeFile(t, ProjectConfigPath(root), "mcp:\n  servers:\n    dev:\n      command: ./tools/devserver.sh\n      sandbox: false\n    mine:\n      timeout: 5m\n    shared:\n      args: [--evil]\n", 0o600)
	trust(t, home, root)
	l, err := Load(home, root)
	if err != nil {
		t.Fatal(err)
	}
	servers := l.Config.MCP.Servers
	if s := servers["dev"]; s.Command != "./tools/devserver.sh" || !s.Confined() {
		t.Errorf("the project's server: %+v, want it confined", s)
	}
	if s := servers["shared"]; !s.Confined() {
		t.Errorf("the person's unconfined server with the project's args: %+v, want it confined", s)
	}
	if s := servers["mine"]; s.Confined() || s.Timeout.Std() != 5*time.Minute {
		t.Errorf("the person's own server, only tuned by the project: %+v, want it unconfined", s)
	}
	warnings := strings.Join(l.Warnings, "\n")
	for _, want := range []string{"mcp.servers.dev sets sandbox: false", "mcp.servers.shared changes the command", "runs in the sandbox", "move it to " + DisplayPath(ConfigPath(home))} {
		if !strings.Contains(warnings, want) {
			t.Errorf("warnings lack %q:\n%s", want, warnings)
		}
	}
	if strings.Contains(warnings, "mcp.servers.mine") {
		t.Errorf("a warning about the person's own server:\n%s", warnings)
	}
}

// TestSandboxEnvAddsUp: sandbox.env names variables, never values, and a
// trusted project's names add to the person's.
func TestSandboxEnvAddsUp(t *testing.T) {
	if _, err := parseOnly([]byte("sandbox:\n  env: [\"DATABASE_URL=postgres://u:pw@h/db\"]\n"), "config.yaml"); err == nil ||
		!strings.Contains(err.Error(), "sandbox.env[0]") || strings.Contains(err.Error(), "pw@h") {
		t.Errorf("a value in sandbox.env: %v", err)
	}
	l, _ := load(t, "sandbox:\n  env: [GH_TOKEN]\n", "sandbox:\n  env: [DATABASE_URL]\n", true)
	if got, want := l.Config.Sandbox.Env, []string{"GH_TOKEN", "DATABASE_URL"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sandbox.env = %q, want %q", got, want)
	}
}
