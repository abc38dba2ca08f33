// Package mcpserver offers infer's browser tools to other agents over the
// Model Context Protocol (`infer mcp`): browser_navigate, browser_click,
// browser_type, browser_read, browser_screenshot and browser_tabs, each
// one of infer's own browser tools run through a Backend — the running
// workspace's pipeline (its approvals, chat and log) or a pipeline of its
// own when no workspace runs — so redaction, page-text caps and artifacts
// are infer's. Screenshots come back as MCP image content.
//
// A running workspace is reached over a private local socket (see
// Listen and Dial): a Unix socket in infer's home, mode 0600, whose first
// line must carry the bridge token before any MCP is spoken.
package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/infer-workspace/infer/session/tools"
)

// Backend runs one of infer's tools for an MCP client and returns its
// outcome; id is unique per call.
type Backend func(ctx context.Context, id, name, args string) tools.Outcome

// Tool pairs an MCP tool name with the infer tool behind it.
type Tool struct {
	MCP, Infer string
}

// Tools are the tools `infer mcp` offers, in order.
var Tools = []Tool{
	{"browser_navigate", tools.NameBrowserNavigate},
	{"browser_click", tools.NameBrowserClick},
	{"browser_type", tools.NameBrowserType},
	{"browser_read", tools.NameBrowserRead},
	{"browser_screenshot", tools.NameBrowserScreenshot},
	{"browser_tabs", tools.NameBrowserTabs},
}

// New returns an MCP server whose tools call run.
func New(run Backend, version string) *mcp.Server {
	if version == "" {
		version = "dev"
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "infer", Title: "infer: the person's browser", Version: version}, &mcp.ServerOptions{
		Instructions: "These tools drive the person's real browser through the infer extension. " +
			"Tools that change a page may need the person's approval in infer, or may be refused by infer's policy; the result says so.",
	})
	reg := tools.DefaultRegistry()
	for _, t := range Tools {
		it, ok := reg.Lookup(t.Infer)
		if !ok {
			continue
		}
		name := t.Infer
		s.AddTool(&mcp.Tool{
			Name:        t.MCP,
			Description: it.Description(),
			InputSchema: it.Schema(),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: it.ReadOnly(), OpenWorldHint: ptr(true)},
		}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			args := "{}"
			if raw := strings.TrimSpace(string(req.Params.Arguments)); raw != "" && raw != "null" {
				args = raw
			}
			return result(run(ctx, callID(), name, args)), nil
		})
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// result turns an outcome into MCP content: the text the model would
// read, then each picture as image content.
func result(o tools.Outcome) *mcp.CallToolResult {
	text := o.Output
	if text == "" {
		text = "(no output)"
	}
	r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: !o.Success}
	for _, img := range o.Images {
		r.Content = append(r.Content, &mcp.ImageContent{MIMEType: img.MIME, Data: img.Data})
	}
	return r
}

func callID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "mcp_" + hex.EncodeToString(b[:])
}

// handshake is the first line on the socket, client to server.
type handshake struct {
	Token string `json:"token"`
}

// handshakeReply is the server's answer to it.
type handshakeReply struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}
