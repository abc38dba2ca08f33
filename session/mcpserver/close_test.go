package mcpserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/infer-workspace/infer/session/tools"
)

// TestCloseAnswersRunningCallsFirst: when infer stops (SIGTERM) while an
// MCP client's call runs, the call is cancelled and its error reaches the
// client before the connection closes; the session used to be closed at
// once, and the client saw only a closed connection.
func TestCloseAnswersRunningCallsFirst(t *testing.T) {
	path := SocketPath(t.TempDir())
	started := make(chan struct{})
	run := func(ctx context.Context, id, name, args string) tools.Outcome {
		close(started)
		<-ctx.Done()
		return tools.Outcome{Output: "Interrupted: infer is shutting down.", Interrupted: true}
	}
	l, err := Listen(path, func() string { return "secret" }, run, "1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Dial(ctx, path, "secret")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, &mcp.IOTransport{Reader: c, Writer: c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	answered := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "browser_click", Arguments: map[string]any{"selector": "#go"}})
		answered <- answer{res, err}
	}()
	<-started
	l.Close()
	a := <-answered
	if a.err != nil {
		t.Fatalf("the client got %v instead of its call's answer", a.err)
	}
	if !a.res.IsError || len(a.res.Content) == 0 || !strings.Contains(a.res.Content[0].(*mcp.TextContent).Text, "shutting down") {
		t.Fatalf("answer %+v", a.res)
	}
	// Then the connection closes.
	if err := cs.Wait(); err != nil && !strings.Contains(err.Error(), "closed") && !strings.Contains(err.Error(), "EOF") {
		t.Logf("session ended: %v", err)
	}
}
