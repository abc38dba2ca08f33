package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/config"
)

// withMCP writes a config.yaml in home listing the test MCP server (the
// infer-mcptest command TestMain installs) as "t". It runs unconfined: the
// command lives in a temp folder, which the sandbox replaces with its own.
func withMCP(t *testing.T, home, extra string) {
	t.Helper()
	if err := config.EnsureDir(home); err != nil {
		t.Fatal(err)
	}
	cfg := "mcp:\n  servers:\n    t:\n      command: infer-mcptest\n      sandbox: false\n" + extra
	if err := os.WriteFile(config.ConfigPath(home), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// An MCP tool called by the agent asks for approval, then runs, and its
// result reaches the model (the demo model's summary) and the output.
func TestHeadlessMCPToolAsksThenRuns(t *testing.T) {
	t.Parallel()
	home, _ := hlProject(t)
	withMCP(t, home, "    broken:\n      command: "+filepath.Join(t.TempDir(), "missing")+"\n")
	c := startHL(t, "-o", "json", `mcp t echo {"text":"from the agent"}`)
	id := c.stdout.waitFor(t, requestIDLine)[1]
	c.send(t, `{"type":"approval_response","request_id":"`+id+`","action":"approve"}`)
	if code := c.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, c.stdout, c.stderr)
	}
	lines := jsonLines(t, c.stdout.String())
	req := ofType(lines, "approval_request")
	if len(req) != 1 || req[0]["tool_name"] != "mcp__t__echo" || !strings.Contains(req[0]["why"].(string), "MCP server t") {
		t.Fatalf("approval_request %v", req)
	}
	res := ofType(lines, "tool_result")
	if len(res) != 1 || res[0]["ok"] != true {
		t.Fatalf("tool_result %v", res)
	}
	if !strings.Contains(c.stdout.String(), "echo: from the agent") {
		t.Errorf("the result did not reach the output:\n%s", c.stdout)
	}
}

func TestDoctorReportsMCPServers(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	home, _ := hlProject(t)
	withMCP(t, home, "    broken:\n      command: "+filepath.Join(t.TempDir(), "missing")+"\n    off:\n      command: x\n      disabled: true\n")
	out, _, code := infer(t, "doctor")
	if code == 0 {
		t.Fatalf("doctor passed with a broken MCP server:\n%s", out)
	}
	for _, want := range []string{"ok    mcp       t (stdio): ready, 11 tools", "FAIL  mcp       broken (stdio, sandboxed): failed: could not start", "missing: No such file", "note  mcp       off: disabled"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
}
