// Package infertest runs infer in-process for end-to-end tests of the
// simulator and its command: the infer `infer serve` runs — workspace,
// panel sync, bridge, the watch on browser_use.yaml's token, the socket
// `infer mcp` goes through — with the offline/demo model, its home and
// conversations under the test's own directory, and a bridge on a free
// loopback port. Only tests import it.
//
// It builds and serves through package assemble, as cmd/infer does.
package infertest

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/infer-workspace/infer/assemble"
	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/llm/demo"
	"github.com/infer-workspace/infer/session/sandbox"
	"github.com/infer-workspace/infer/session/tools"
)

// Token is the pairing token of every test infer.
const Token = "infertest-token-0123456789abcdef"

// Options tune a test infer.
type Options struct {
	// Mode is the starting agent mode (default standard).
	Mode tools.Mode
	// CommandTimeout is the bridge's browser command budget (default 30s).
	CommandTimeout time.Duration
	// Delay is the demo model's pause between words (default 1ms, to keep
	// tests quick while still streaming word by word).
	Delay time.Duration
}

// Infer is one running test infer.
type Infer struct {
	// URL is the bridge's WebSocket address; Token is its token.
	URL, Token string
	// Workspace, Server and Artifacts expose the parts tests check; Root
	// is the project and Home infer's home (where browser_use.yaml and
	// mcp.sock are).
	Workspace *session.Workspace
	Server    *bridge.Server
	Artifacts string
	Root      string
	Home      string

	infer  *assemble.Infer
	stop   context.CancelFunc
	served chan struct{}
	once   sync.Once
}

// Start runs a test infer until the test ends.
func Start(t testing.TB, opts Options) *Infer {
	t.Helper()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	delay := opts.Delay
	if delay <= 0 {
		delay = time.Millisecond
	}
	mode := opts.Mode
	if mode == "" {
		mode = tools.Standard
	}
	in, err := assemble.New(assemble.Options{
		Home: home, Root: dir,
		Bridge: true, PortSet: true, Port: 0,
		BrowserUse: config.BrowserUse{Enabled: true, Extension: config.ExtensionConfig{
			Token: Token, CommandTimeout: config.Duration(opts.CommandTimeout),
		}},
		CloseGrace: 100 * time.Millisecond,
		Model:      demo.ID, Mode: string(mode),
		Offline:     &demo.Model{Delay: delay},
		NoDiscovery: true,
		// No sandbox: every command asks, whatever the machine has.
		Sandbox: sandbox.Disabled(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ti := &Infer{
		URL: in.Seat.URL(), Token: Token, Workspace: in.Workspace, Server: in.Seat.Server(),
		Artifacts: in.Env.ArtifactsDir, Root: dir, Home: home,
		infer: in, stop: cancel, served: make(chan struct{}),
	}
	go func() {
		defer close(ti.served)
		in.Serve(ctx)
	}()
	t.Cleanup(ti.Close)
	return ti
}

// Close stops infer as cmd/infer does (see assemble.Infer.Close), then
// waits for the bridge's Serve to return.
func (in *Infer) Close() {
	in.once.Do(func() {
		in.infer.Close()
		in.stop()
		<-in.served
	})
}
