package tui

import (
	"errors"
	"testing"
)

type fakeMCP struct {
	servers   []MCPServer
	summary   string
	warn      bool
	restarted []string
}

func (f *fakeMCP) Restart(name string) error {
	if name != "files" {
		return errors.New("no MCP server is named \"" + name + "\"")
	}
	f.restarted = append(f.restarted, name)
	return nil
}

func (f *fakeMCP) Summary() (string, bool)  { return f.summary, f.warn }
func (f *fakeMCP) Servers() []MCPServer     { return f.servers }
func (f *fakeMCP) Changed() <-chan struct{} { return make(chan struct{}) }

func TestMCPStatusAndList(t *testing.T) {
	t.Parallel()
	f := &fakeMCP{summary: "mcp: 1 starting"}
	h := newHarness(t, newFakeWS(), 160, 48, func(o *Options) { o.MCP = f })
	mustContain(t, h.screen(), "mcp: 1 starting")

	// A change is read when the manager announces it.
	f.summary, f.warn = "mcp: 1 ready, 1 crashed", true
	f.servers = []MCPServer{
		{Name: "github", Transport: "http", State: "ready", Tools: []MCPTool{{Name: "mcp__github__search_issues", Description: "Search issues.", ReadOnly: true}}},
		{Name: "files", Transport: "stdio", State: "crashed", Err: "it stopped; it wrote: \x1b[31mboom"},
	}
	h.run(h.m.watchMCP(true))
	mustContain(t, h.screen(), "⚠ mcp: 1 ready, 1 crashed")

	h.typeText("/mcp")
	h.key("enter")
	mustContain(t, h.screen(), "MCP servers", "github (http) · ready", "mcp__github__search_issues", "[read-only] Search issues.", "files (stdio, not sandboxed) · crashed", "it stopped")
	mustNotContain(t, h.screen(), "\x1b[31mboom")
	h.key("esc")
	mustNotContain(t, h.screen(), "MCP servers")

	h.typeText("/mcp restart files")
	h.key("enter")
	mustContain(t, h.screen(), "restarting the MCP server files")
	h.typeText("/mcp restart nope")
	h.key("enter")
	mustContain(t, h.screen(), `no MCP server is named "nope"`)
	if len(f.restarted) != 1 {
		t.Fatalf("restarted %v", f.restarted)
	}

	// Without servers nothing shows.
	h = newHarness(t, newFakeWS(), 160, 48)
	mustNotContain(t, h.screen(), "mcp:")
}

// TestMCPShowsAServersWholeError: a failed server's error is shown whole,
// wrapped, since its end says what went wrong and how to fix it.
func TestMCPShowsAServersWholeError(t *testing.T) {
	t.Parallel()
	f := &fakeMCP{summary: "mcp: 1 failed", warn: true, servers: []MCPServer{{
		Name: "everything", Transport: "stdio", State: "failed", Sandboxed: true,
		Err: "could not start: connection closed: calling \"initialize\": client is closing: EOF; infer's network proxy refused it: infer blocked the connection to registry.npmjs.org:443 (no one is at infer's terminal to approve it). To allow it, add \"registry.npmjs.org\" to network.allow in ~/.infer/config.yaml; it wrote: npm error code E403\nnpm error 403 Forbidden - GET https://registry.npmjs.org/x",
	}}}
	h := newHarness(t, newFakeWS(), 160, 48, func(o *Options) { o.MCP = f })
	h.typeText("/mcp")
	h.key("enter")
	mustContain(t, h.screen(), "everything (stdio) · failed", "could not start", "network.allow in ~/.infer/config.yaml", "npm error 403 Forbidden")
}
