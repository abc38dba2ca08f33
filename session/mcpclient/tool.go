package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/tools"
)

// maxToolName is the longest tool name model providers accept.
const maxToolName = 64

// maxResultText bounds the text of one result that reaches the model and
// the conversation, as Bash's output is bounded.
const maxResultText = 100 << 10

// tool is one tool of a server, as a tools.ExternalTool.
type tool struct {
	srv      *server
	name     string // mcp__<server>__<tool>, made safe
	remote   string
	desc     string
	schema   json.RawMessage
	readOnly bool
}

var _ tools.ExternalTool = (*tool)(nil)

func newTool(s *server, t *mcp.Tool) *tool {
	nt := &tool{srv: s, remote: t.Name, desc: t.Description}
	nt.name = safeName(tools.ServerToolPrefix(s.name) + t.Name)
	if t.Annotations != nil {
		nt.readOnly = t.Annotations.ReadOnlyHint
	}
	nt.schema = json.RawMessage(`{"type":"object","properties":{}}`)
	if t.InputSchema != nil {
		if b, err := json.Marshal(t.InputSchema); err == nil && len(b) > 2 && b[0] == '{' {
			nt.schema = b
		}
	}
	return nt
}

// safeName keeps the characters every provider accepts in a tool name
// and at most maxToolName of them.
func safeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) > maxToolName {
		b = b[:maxToolName]
	}
	return string(b)
}

func (t *tool) Name() string { return t.name }

func (t *tool) Description() string {
	d := strings.TrimSpace(t.desc)
	if d == "" {
		d = t.remote
	}
	return "[MCP server " + t.srv.name + "] " + d
}

func (t *tool) Schema() json.RawMessage { return t.schema }
func (t *tool) Timeout() time.Duration  { return t.srv.callTimeout() }
func (t *tool) ReadOnly() bool          { return t.readOnly }
func (t *tool) Provider() string        { return t.srv.name }

// Run calls the tool on the server's current session and turns its result
// into text for the model, pictures for the model and the chat (saved as
// artifacts), and resources as text.
func (t *tool) Run(ctx context.Context, env *tools.Env, args json.RawMessage) (tools.Output, error) {
	m := t.srv.m
	m.mu.Lock()
	cs, state, why := t.srv.session, t.srv.state, t.srv.err
	m.mu.Unlock()
	if cs == nil || state != Ready {
		return tools.Output{}, fmt.Errorf("the MCP server %s is not running (%s%s)", t.srv.name, state, prefixed(": ", why))
	}
	params := &mcp.CallToolParams{Name: t.remote}
	if s := strings.TrimSpace(string(args)); s != "" {
		params.Arguments = json.RawMessage(s)
	} else {
		params.Arguments = map[string]any{}
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Output{}, ctx.Err()
		}
		return tools.Output{}, fmt.Errorf("the MCP server %s failed the call: %v", t.srv.name, err)
	}
	return convert(env, t.srv.name, res), nil
}

func prefixed(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// convert turns a CallToolResult into a tool's Output.
func convert(env *tools.Env, server string, res *mcp.CallToolResult) tools.Output {
	var (
		parts []string
		out   tools.Output
	)
	addImage := func(mime string, data []byte, what string) {
		if len(data) == 0 {
			return
		}
		out.Images = append(out.Images, llm.Image{MIME: mime, Data: data})
		line := fmt.Sprintf("[%s: %s, %d bytes]", what, mime, len(data))
		if rel, _, err := tools.SaveArtifact(env, "mcp", imageExt(mime), data); err == nil {
			out.Artifacts = append(out.Artifacts, rel)
			line = fmt.Sprintf("![%s](/artifacts/%s)", what, rel)
		}
		parts = append(parts, line)
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			addImage(c.MIMEType, c.Data, "image from "+server)
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			line := "Resource: " + c.URI
			if c.Name != "" {
				line = "Resource " + c.Name + ": " + c.URI
			}
			if c.Description != "" {
				line += " — " + c.Description
			}
			parts = append(parts, line)
		case *mcp.EmbeddedResource:
			r := c.Resource
			switch {
			case r == nil:
			case r.Text != "":
				parts = append(parts, "Resource "+r.URI+":\n"+r.Text)
			case strings.HasPrefix(r.MIMEType, "image/"):
				addImage(r.MIMEType, r.Blob, "resource "+r.URI)
			default:
				parts = append(parts, fmt.Sprintf("Resource %s: %d bytes of %s (binary, not shown)", r.URI, len(r.Blob), orUnknown(r.MIMEType)))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	text := strings.Join(parts, "\n")
	if text == "" {
		text = "(no output)"
	}
	if len(text) > maxResultText {
		text = strings.ToValidUTF8(text[:maxResultText], "") + fmt.Sprintf("\n\n[the result was cut at %d KiB of %d KiB]", maxResultText>>10, len(text)>>10)
	}
	out.Text = text
	out.Success = !res.IsError
	return out
}

func imageExt(mime string) string {
	switch mime {
	case "image/jpeg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	}
	return ".png"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}
