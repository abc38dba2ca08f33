package infertest_test

import (
	"context"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/internal/infertest"
	"github.com/infer-workspace/infer/internal/leaks"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/mcpserver"
	"github.com/infer-workspace/infer/sim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, leaks.Options()...) }

// TestTestInferIsTheInferPeopleRun: the test infer has what `infer serve`
// has beyond the workspace and the bridge — it serves `infer mcp` on the
// home's socket while it holds the bridge, and follows a token rotated
// in browser_use.yaml without a restart.
func TestTestInferIsTheInferPeopleRun(t *testing.T) {
	in := infertest.Start(t, infertest.Options{})

	deadline := time.Now().Add(10 * time.Second)
	for {
		fi, err := os.Stat(mcpserver.SocketPath(in.Home))
		if err == nil && fi.Mode()&os.ModeSocket != 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the test infer never served infer mcp's socket: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}

	rotated := config.NewBrowserUse(config.DefaultPort)
	if rotated.Extension.Token == in.Token {
		t.Fatal("the new token is the old one")
	}
	if err := writeBrowserUse(config.BrowserUsePath(in.Home), rotated); err != nil {
		t.Fatal(err)
	}
	c := sim.NewClient(sim.ClientOptions{URL: in.URL, Token: rotated.Extension.Token, Browser: &sim.Minimal{},
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })
	wait, stop := context.WithTimeout(ctx, 20*time.Second)
	defer stop()
	if err := c.WaitConnected(wait); err != nil {
		t.Fatalf("the extension with the rotated token never connected: %v", err)
	}
}

// writeBrowserUse writes b to path as infer init would, replacing any file
// there.
func writeBrowserUse(path string, b config.BrowserUse) error {
	data, err := config.EncodeBrowserUse(b)
	if err != nil {
		return err
	}
	return config.WriteFileAtomic(path, data, 0o600)
}
