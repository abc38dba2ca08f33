package tui

import (
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/internal/termtext"
	"github.com/infer-workspace/infer/tui/dialog"
	"github.com/infer-workspace/infer/tui/toolfmt"
)

// MCP is what the TUI shows of the person's MCP servers: a part of the
// status bar, kept current, and the /mcp list. cmd/infer adapts the
// workspace's MCP manager to it; tests use a fake.
type MCP interface {
	// Summary is the status bar's text ("" when no server is configured)
	// and whether it is a warning (a server failed or crashed).
	Summary() (text string, warn bool)
	// Servers lists the servers by name.
	Servers() []MCPServer
	// Changed is closed at the next change of any server.
	Changed() <-chan struct{}
	// Restart stops the named server, if it runs, and starts it again.
	Restart(name string) error
}

// MCPServer is one server as /mcp lists it.
type MCPServer struct {
	Name      string
	Transport string // "stdio" or "http"
	State     string // starting, ready, failed, crashed, disabled, stopped
	// Err says why it failed or crashed.
	Err       string
	Sandboxed bool
	Tools     []MCPTool
}

// MCPTool is one tool of a server.
type MCPTool struct {
	Name        string // mcp__<server>__<tool>
	Description string
	ReadOnly    bool
}

// mcpMsg carries a new status bar summary.
type mcpMsg struct {
	text string
	warn bool
}

// watchMCP reads the summary when the servers change; the first call
// reads it at once. It ends with the model (Close cancels m.ctx). Tests,
// which run commands synchronously, replace the waiting one through
// m.mcpWait.
func (m *Model) watchMCP(first bool) tea.Cmd {
	if !first && m.mcpWait != nil {
		return m.mcpWait()
	}
	src, ctx := m.opts.MCP, m.ctx
	if src == nil {
		return nil
	}
	ch := src.Changed()
	return func() tea.Msg {
		if !first {
			select {
			case <-ch:
			case <-ctx.Done():
				return nil
			}
		}
		text, warn := src.Summary()
		return mcpMsg{text: text, warn: warn}
	}
}

// mcpCommand is /mcp (the list) and /mcp restart <server>.
func (m *Model) mcpCommand(arg string) tea.Cmd {
	if m.opts.MCP == nil {
		m.flash, m.flashWarn = "MCP servers are not available in this session", true
		return nil
	}
	if name, ok := strings.CutPrefix(arg, "restart "); ok {
		src, name := m.opts.MCP, strings.TrimSpace(name)
		return func() tea.Msg {
			if err := src.Restart(name); err != nil {
				return flashMsg{text: err.Error(), warn: true}
			}
			return flashMsg{text: "restarting the MCP server " + name}
		}
	}
	m.openMCP()
	return nil
}

// openMCP shows /mcp: each server with its state, then its tools.
func (m *Model) openMCP() {
	servers := m.opts.MCP.Servers()
	var rows []dialog.Row
	for _, s := range servers {
		mark := "○"
		switch s.State {
		case "ready":
			mark = "●"
		case "failed", "crashed":
			mark = "✗"
		}
		where := s.Transport
		if s.Transport == "stdio" && !s.Sandboxed {
			where += ", not sandboxed"
		}
		detail := ""
		if s.State == "ready" {
			detail = strconv.Itoa(len(s.Tools)) + " tools"
		}
		rows = append(rows, dialog.Row{ID: s.Name, Mark: mark, Title: termtext.Line(s.Name + " (" + where + ") · " + s.State), Detail: detail})
		// The whole error, wrapped: its end (what the server wrote, the
		// host the sandbox refused and how to allow it) is what helps.
		for _, l := range wrapLines(s.Err, m.mcpErrWidth()) {
			rows = append(rows, dialog.Row{ID: s.Name, Title: "  " + l})
		}
		for _, t := range s.Tools {
			d := toolfmt.OneLine(t.Description)
			if t.ReadOnly {
				d = "[read-only] " + d
			}
			rows = append(rows, dialog.Row{ID: t.Name, Title: "  " + termtext.Line(t.Name), Detail: termtext.Line(d)})
		}
	}
	title := "MCP servers · /mcp restart <name> starts one again"
	if len(rows) == 0 {
		rows = []dialog.Row{{ID: "", Title: "No MCP servers are configured", Detail: "add them under mcp.servers in ~/.infer/config.yaml"}}
	}
	m.dialog = dialog.NewPicker(m.th, title, rows, "", dialog.Close, "close")
}

// mcpErrWidth is the width an error's lines get in /mcp: the picker's
// (at most 72 cells, less its frame, cursor, mark and indent).
func (m *Model) mcpErrWidth() int {
	return max(min(72, m.width-4)-10, 20)
}

// wrapLines splits text into its lines, each made safe for the terminal
// and wrapped at width.
func wrapLines(text string, width int) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		out = append(out, strings.Split(ansi.Wrap(termtext.Line(l), width, " "), "\n")...)
	}
	return out
}
