// Package infertest runs infer in-process for end-to-end tests of the
// simulator and its command: the same workspace, panel sync and bridge
// that `infer serve` wires, with the offline/demo model, conversations
// stored under the test's own directory, and a bridge on a free loopback
// port. Only tests import it.
//
// It copies the small part of cmd/infer's wiring the tests need (that
// wiring lives in package main and cannot be imported).
package infertest

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/infer-workspace/infer/assets"
	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/bridge/panelsync"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/demo"
	"github.com/infer-workspace/infer/session/skills"
	"github.com/infer-workspace/infer/session/store"
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
	// Workspace, Server and Artifacts expose the parts tests check.
	Workspace *session.Workspace
	Server    *bridge.Server
	Artifacts string
	Root      string

	history *store.History
	sync    *panelsync.Sync
	stop    context.CancelFunc
	served  chan struct{}
	once    sync.Once
}

// demoCatalog offers only offline/demo.
type demoCatalog struct{ delay time.Duration }

func (demoCatalog) Models() []string { return []string{demo.ID} }

func (c demoCatalog) Resolve(id string) (llm.Provider, string, error) {
	return &demo.Model{Delay: c.delay}, "demo", nil
}

// Start runs a test infer until the test ends.
func Start(t testing.TB, opts Options) *Infer {
	t.Helper()
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	st, err := store.Open(filepath.Join(home, "conversations"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hist, err := store.OpenHistory(filepath.Join(home, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	delay := opts.Delay
	if delay <= 0 {
		delay = time.Millisecond
	}
	liveSkills := skills.NewLive(skills.Options{ProjectRoot: dir, Home: home, Catalog: assets.Skills()}, nil)
	env := &tools.Env{Root: dir, ArtifactsDir: filepath.Join(home, "artifacts")}
	catalog := demoCatalog{delay: delay}
	ws, err := session.New(session.Options{
		Store: st, History: hist, Catalog: catalog, Titler: session.ModelTitler(catalog),
		Model: demo.ID, Mode: opts.Mode,
		Tools:  tools.PipelineConfig{Env: env},
		Skills: liveSkills.List,
	})
	if err != nil {
		t.Fatal(err)
	}
	ps := panelsync.New(ws, nil)
	srv, err := bridge.Listen(bridge.Options{
		Token: Token, CommandTimeout: opts.CommandTimeout, ArtifactsDir: env.ArtifactsDir,
		Panel: ps, OnStatus: ws.SetBrowserStatus,
		CloseGrace: 100 * time.Millisecond,
	})
	if err != nil {
		ps.Close()
		ws.Close()
		t.Fatal(err)
	}
	env.Browser = ws.WatchBrowser(srv)
	ctx, cancel := context.WithCancel(context.Background())
	in := &Infer{
		URL: srv.URL(), Token: Token, Workspace: ws, Server: srv, Artifacts: env.ArtifactsDir, Root: dir,
		history: hist, sync: ps, stop: cancel, served: make(chan struct{}),
	}
	go func() {
		defer close(in.served)
		srv.Serve(ctx)
	}()
	t.Cleanup(in.Close)
	return in
}

// Close stops infer in cmd/infer's order: no new frames, then no new
// turns, then the stores.
func (in *Infer) Close() {
	in.once.Do(func() {
		in.stop()
		in.Server.Close()
		<-in.served
		in.sync.Close()
		in.Workspace.Close()
		in.history.Close()
	})
}
