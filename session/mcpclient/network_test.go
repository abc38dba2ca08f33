package mcpclient

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/netproxy"
	"github.com/infer-workspace/infer/session/sandbox"
	"github.com/infer-workspace/infer/session/tools"
)

// TestASandboxedServerReachesOnlyAllowedHosts: a sandboxed stdio server
// gets its own network namespace and a proxy whose decider infer gives
// (here: 127.0.0.2, standing for the internet, refused, then allowed).
func TestASandboxedServerReachesOnlyAllowedHosts(t *testing.T) {
	t.Parallel()
	sb := sandbox.Detect()
	if sb.Kind() != sandbox.Bubblewrap {
		t.Skip("the network proxy needs bubblewrap:", sb.Problem())
	}
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skip("cannot listen on 127.0.0.2:", err)
	}
	defer ln.Close()
	var reached atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			reached.Add(1)
			buf := make([]byte, 4096)
			c.Read(buf)
			fmt.Fprint(c, "HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nreached\n")
			c.Close()
		}
	}()
	var allow atomic.Bool
	var asked atomic.Value
	decider := func(server string) netproxy.Decider {
		return func(_ context.Context, d netproxy.Dest) error {
			asked.Store(server + " " + d.String())
			if allow.Load() {
				return nil
			}
			return fmt.Errorf("infer blocked the connection to %s", d)
		}
	}
	root := t.TempDir()
	exe, _ := os.Executable()
	copyFile(t, exe, filepath.Join(root, "server"))
	cfg := stdio(t, nil)
	cfg.Command = filepath.Join(root, "server")
	m := start(t, Options{Root: root, Sandbox: sb, Confine: sandbox.Policy{Network: true}, Network: decider,
		Servers: map[string]config.MCPServerConfig{"box": cfg}})
	if st := status(t, m, "box"); st.State != Ready || !st.Sandboxed {
		t.Fatalf("box: %+v", st)
	}
	p, _ := pipeline(t, m, nil)
	if o := call(p, "mcp__box__env", `{"name":"HTTP_PROXY"}`, tools.Auto); !strings.HasPrefix(o.Output, "HTTP_PROXY=http://127.0.0.1:") {
		t.Fatalf("the sandboxed server has no proxy to go through: %+v", o)
	}
	url := `{"url":"http://` + ln.Addr().String() + `/leak"}`
	o := call(p, "mcp__box__fetch", url, tools.Auto)
	if reached.Load() != 0 || !strings.Contains(o.Output, "infer blocked the connection to "+ln.Addr().String()) {
		t.Fatalf("a refused host was reached (%d) or the server was not told why: %+v", reached.Load(), o)
	}
	if got, _ := asked.Load().(string); got != "box "+ln.Addr().String() {
		t.Fatalf("the decider was asked %q, want the server and the host", got)
	}
	allow.Store(true)
	if o := call(p, "mcp__box__fetch", url, tools.Auto); !strings.Contains(o.Output, "200 reached") || reached.Load() != 1 {
		t.Fatalf("an allowed host was not reached: %+v", o)
	}
}
