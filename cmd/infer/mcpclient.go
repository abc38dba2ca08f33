package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/infer-workspace/infer/assemble"

	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/mcpclient"
	"github.com/infer-workspace/infer/session/sandbox"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/tui"
)

// startMCP starts the MCP servers config.yaml lists (mcp.servers) in the
// background; a workspace offers their tools as they become ready. With
// nobody to ask here, sandboxed servers reach only network.allow's hosts.
func startMCP(cfg config.Config, home, root string, sb *sandbox.Sandbox, log *slog.Logger) *mcpclient.Manager {
	allowOnly := tools.NewPipeline(tools.PipelineConfig{Env: &tools.Env{NetAllow: cfg.Network.Allow}})
	return assemble.StartMCP(cfg, home, root, sb, versionString(), log, allowOnly.NetworkDecider)
}

// mcpChecks starts each configured MCP server, as a workspace would, and
// reports whether it answered with its tools.
func mcpChecks(ctx context.Context, cfg config.Config, home, root string) []doctorCheck {
	if len(cfg.MCP.Servers) == 0 {
		return []doctorCheck{{name: "mcp", status: checkOK, text: "no MCP servers are configured (mcp.servers in config.yaml)"}}
	}
	longest := config.DefaultMCPStartTimeout
	for _, s := range cfg.MCP.Servers {
		longest = max(longest, s.StartTimeout.Std())
	}
	m := startMCP(cfg, home, root, assemble.SandboxFor(cfg), nil)
	defer m.Close()
	wctx, cancel := context.WithTimeout(ctx, longest+5*time.Second)
	defer cancel()
	_ = m.Wait(wctx)
	var out []doctorCheck
	for _, s := range m.Statuses() {
		where := s.Transport
		if s.Transport == "stdio" && s.Sandboxed {
			where += ", sandboxed"
		}
		switch s.State {
		case mcpclient.Ready:
			out = append(out, doctorCheck{name: "mcp", status: checkOK, text: fmt.Sprintf("%s (%s): ready, %d tools", s.Name, where, len(s.Tools))})
		case mcpclient.Disabled:
			out = append(out, doctorCheck{name: "mcp", status: checkNote, text: s.Name + ": disabled in config.yaml"})
		default:
			out = append(out, doctorCheck{name: "mcp", status: checkFail, text: fmt.Sprintf("%s (%s): %s: %s", s.Name, where, s.State, s.Err), fix: "check mcp.servers." + s.Name + " in config.yaml"})
		}
	}
	return out
}

// mcpView shows the MCP manager to the TUI.
type mcpView struct{ m *mcpclient.Manager }

func (v mcpView) Summary() (string, bool)  { return mcpclient.Summary(v.m.Statuses()) }
func (v mcpView) Changed() <-chan struct{} { return v.m.Changed() }

func (v mcpView) Servers() []tui.MCPServer {
	var out []tui.MCPServer
	for _, s := range v.m.Statuses() {
		ts := make([]tui.MCPTool, len(s.Tools))
		for i, t := range s.Tools {
			ts[i] = tui.MCPTool{Name: t.Name, Description: t.Description, ReadOnly: t.ReadOnly}
		}
		out = append(out, tui.MCPServer{Name: s.Name, Transport: s.Transport, State: string(s.State), Err: s.Err, Sandboxed: s.Sandboxed, Tools: ts})
	}
	return out
}

func (v mcpView) Restart(name string) error { return v.m.Restart(name) }
