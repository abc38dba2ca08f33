// Package mcptest is a small MCP server of infer's own for tests: the same
// tools over stdio (a test binary that runs itself as the server, see
// MaybeServe) and over streamable HTTP (HTTPHandler). Its tools cover what
// the client must handle: text, images, resources, errors, a call that
// hangs, a crash, a write to the file system, reading the environment and
// a tool list that changes.
package mcptest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// PNG is the 1×1 picture the image tool returns.
var PNG = []byte{
	0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
	0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
	0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0xf0,
	0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
	0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
}

// Environment variables that change how the stdio server behaves.
const (
	// ServeEnv set to "stdio" makes MaybeServe run the server.
	ServeEnv = "INFER_MCPTEST_SERVE"
	// HangStartEnv makes the server never answer initialize.
	HangStartEnv = "INFER_MCPTEST_HANG_START"
	// FailStartEnv makes the server exit at once, saying why on stderr.
	FailStartEnv = "INFER_MCPTEST_FAIL_START"
)

// NewServer returns the server with every tool.
func NewServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "infer-mcptest", Version: "1"}, nil)
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true}

	type echoArgs struct {
		Text string `json:"text" jsonschema:"what to say back"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Says the text back.", Annotations: ro},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return text("echo: " + a.Text), nil, nil
		})

	type addArgs struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers.", Annotations: ro},
		func(_ context.Context, _ *mcp.CallToolRequest, a addArgs) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(a.A + a.B)), nil, nil
		})

	type none struct{}
	mcp.AddTool(s, &mcp.Tool{Name: "image", Description: "Returns a 1×1 PNG.", Annotations: ro},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a dot"}, &mcp.ImageContent{MIMEType: "image/png", Data: PNG}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "resource", Description: "Returns a text resource and a link.", Annotations: ro},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "the notes"}},
				&mcp.ResourceLink{URI: "https://example.com/doc", Name: "doc"},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always reports an error."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			r := text("it went wrong on purpose")
			r.IsError = true
			return r, nil, nil
		})

	type sleepArgs struct {
		MS int `json:"ms"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "Waits ms milliseconds (or until cancelled).", Annotations: ro},
		func(ctx context.Context, _ *mcp.CallToolRequest, a sleepArgs) (*mcp.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(a.MS) * time.Millisecond):
				return text("slept"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits the server process."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "mcptest: crashing as asked")
			os.Exit(3)
			return nil, nil, nil
		})

	type writeArgs struct {
		Path string `json:"path"`
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "write", Description: "Writes text to a file."},
		func(_ context.Context, _ *mcp.CallToolRequest, a writeArgs) (*mcp.CallToolResult, any, error) {
			if err := os.WriteFile(a.Path, []byte(a.Text), 0o644); err != nil {
				r := text("write failed: " + err.Error())
				r.IsError = true
				return r, nil, nil
			}
			return text("wrote " + filepath.Base(a.Path)), nil, nil
		})

	type envArgs struct {
		Name string `json:"name"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Reads an environment variable.", Annotations: ro},
		func(_ context.Context, _ *mcp.CallToolRequest, a envArgs) (*mcp.CallToolResult, any, error) {
			v, ok := os.LookupEnv(a.Name)
			if !ok {
				return text(a.Name + " is not set"), nil, nil
			}
			return text(a.Name + "=" + v), nil, nil
		})
	type fetchArgs struct {
		URL string `json:"url"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "fetch", Description: "GETs a URL through the proxy in HTTP_PROXY, if any.", Annotations: ro},
		func(ctx context.Context, _ *mcp.CallToolRequest, a fetchArgs) (*mcp.CallToolResult, any, error) {
			// Go's own proxy lookup skips loopback hosts, which tests use
			// to stand for the internet; this one does not.
			tr := &http.Transport{Proxy: func(*http.Request) (*url.URL, error) {
				if p := os.Getenv("HTTP_PROXY"); p != "" {
					return url.Parse(p)
				}
				return nil, nil
			}}
			defer tr.CloseIdleConnections()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.URL, nil)
			if err != nil {
				return nil, nil, err
			}
			resp, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Do(req)
			if err != nil {
				r := text("fetch failed: " + err.Error())
				r.IsError = true
				return r, nil, nil
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			r := text(fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(body))))
			r.IsError = resp.StatusCode != http.StatusOK
			return r, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Adds a tool named grown, which announces a changed tool list."},
		func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: "grown", Description: "Appeared later.", Annotations: ro},
				func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
					return text("grown"), nil, nil
				})
			return text("grew"), nil, nil
		})
	return s
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// MaybeServe runs the server over stdio and exits when the environment
// asks for it (ServeEnv=stdio); otherwise it returns at once. Call it
// first thing in a TestMain, then start os.Executable() with ServeEnv set.
func MaybeServe() {
	if os.Getenv(ServeEnv) == "stdio" {
		ServeStdio()
	}
}

// ServeStdio runs the server over stdio until its input ends, then exits
// the process; FailStartEnv and HangStartEnv change how it starts. It is
// the main of a test command (testscript's commands).
func ServeStdio() {
	if msg := os.Getenv(FailStartEnv); msg != "" {
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(2)
	}
	if os.Getenv(HangStartEnv) != "" {
		select {} // never answers; the client must give up
	}
	if err := NewServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil && !strings.Contains(err.Error(), "EOF") {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// HTTPHandler serves the tools over streamable HTTP. When header is not
// empty, requests must carry it with the value want, else they get 401.
func HTTPHandler(header, want string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return NewServer() }, &mcp.StreamableHTTPOptions{Stateless: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if header != "" && r.Header.Get(header) != want {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
