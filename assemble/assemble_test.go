package assemble

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/internal/leaks"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/llm/demo"
	"github.com/infer-workspace/infer/session/sandbox"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/sim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, leaks.Options()...) }

const token = "assemble-test-token-0123456789abcdef"

// An assembled infer is whole when New returns: the bridge it serves
// reports the connection to the workspace and the panel's frames to the
// panel sync, and the agent's browser tools reach the extension through
// the workspace's watch — none of it set after construction.
func TestAssembledInferIsWiredEndToEnd(t *testing.T) {
	dir := t.TempDir()
	in, err := New(Options{
		Home: filepath.Join(dir, "home"), Root: filepath.Join(dir, "project"),
		Bridge: true, PortSet: true,
		BrowserUse: config.BrowserUse{Enabled: true, Extension: config.ExtensionConfig{Token: token}},
		Model:      demo.ID, Mode: string(tools.Auto),
		Offline:     &demo.Model{},
		NoDiscovery: true,
		Sandbox:     sandbox.Disabled(),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- in.Serve(ctx) }()
	defer func() {
		if err := in.Close(); err != nil {
			t.Error(err)
		}
		stop()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	sub := in.Workspace.Subscribe()
	defer sub.Close()

	c := sim.NewClient(sim.ClientOptions{URL: in.Seat.URL(), Token: token, Browser: &sim.Minimal{}})
	cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); c.Run(cctx) }()
	defer func() { cancel(); <-done }()
	if err := c.WaitConnected(cctx); err != nil {
		t.Fatal(err)
	}

	// The panel hook: a panel frame is answered by the workspace's data.
	if _, err := c.ListConversations(cctx); err != nil {
		t.Fatalf("the panel sync does not answer: %v", err)
	}
	// The status hook and the watched browser: a browser tool reaches the
	// extension, and the workspace sees both the connection and the page.
	if err := in.Workspace.Send("open demo.infer.localhost", tools.OriginTerminal); err != nil {
		t.Fatal(err)
	}
	var connected, paged bool
	for !connected || !paged {
		ev, err := sub.Next(cctx)
		if err != nil {
			t.Fatalf("connected %v, page seen %v: %v", connected, paged, err)
		}
		switch e := ev.(type) {
		case session.BrowserStatusChanged:
			connected = connected || e.Status.State == browser.Connected
		case session.PageChanged:
			paged = true
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "home")); err != nil {
		t.Fatalf("infer's home was not used: %v", err)
	}
}

// TestHostApprovalsAreSetByNew: whether a person at the terminal answers
// network approvals is an option of New, set before the Env is handed to
// the workspace, instead of a change the TUI made to what assemble built.
func TestHostApprovalsAreSetByNew(t *testing.T) {
	t.Parallel()
	for _, want := range []bool{false, true} {
		dir := t.TempDir()
		in, err := New(Options{
			Home: filepath.Join(dir, "home"), Root: filepath.Join(dir, "project"),
			Model: demo.ID, Offline: &demo.Model{}, NoDiscovery: true, Sandbox: sandbox.Disabled(),
			HostApprovals: want,
		})
		if err != nil {
			t.Fatal(err)
		}
		got := in.Env.HostApprovals()
		if err := in.Close(); err != nil {
			t.Error(err)
		}
		if got != want {
			t.Errorf("HostApprovals: %v, the Env says %v", want, got)
		}
	}
}
