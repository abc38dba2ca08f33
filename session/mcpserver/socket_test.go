package mcpserver

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSocketAuthenticatesAndServes(t *testing.T) {
	dir := t.TempDir()
	path := SocketPath(dir)
	var seen []string
	run := func(_ context.Context, id, name, args string) tools.Outcome {
		seen = append(seen, name+" "+args)
		return tools.Outcome{Success: true, Output: "ran " + name, Images: []llm.Image{{MIME: "image/png", Data: []byte("png")}}}
	}
	// A socket file left by a dead process is replaced.
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()
	l, err := Listen(path, func() string { return "secret" }, run, "1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v %v", fi, err)
	}
	// A live one is not taken over.
	if _, err := Listen(path, func() string { return "secret" }, run, "1", nil); err != ErrInUse {
		t.Fatalf("second listener: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := Dial(ctx, path, "wrong"); err == nil || !strings.Contains(err.Error(), "wrong or missing token") {
		t.Fatalf("wrong token: %v", err)
	}
	if _, err := Dial(ctx, filepath.Join(dir, "none.sock"), "secret"); !os.IsNotExist(err) && !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("missing socket: %v", err)
	}
	c, err := Dial(ctx, path, "secret")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, &mcp.IOTransport{Reader: c, Writer: c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "browser_screenshot"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 2 || res.IsError || res.Content[0].(*mcp.TextContent).Text != "ran BrowserScreenshot" || string(res.Content[1].(*mcp.ImageContent).Data) != "png" {
		t.Fatalf("result: %+v", res)
	}
	if len(seen) != 1 || seen[0] != "BrowserScreenshot {}" {
		t.Fatalf("backend saw %q", seen)
	}
	cs.Close()
	l.Close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the socket outlived Close: %v", err)
	}
}
