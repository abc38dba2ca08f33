package panelsync_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/bridge/panelsync"
	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/demo"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/sim"
)

// demoCatalog is a test double of llm.Catalog serving only offline/demo.
type demoCatalog struct{ m *demo.Model }

func (c demoCatalog) Models() []string { return []string{demo.ID} }
func (c demoCatalog) Resolve(id string) (llm.Provider, string, error) {
	if id != demo.ID {
		return nil, "", fmt.Errorf("unknown model %q", id)
	}
	return c.m, "demo", nil
}

// rig is a workspace, its bridge and one simulated extension.
type rig struct {
	ws     *session.Workspace
	sync   *panelsync.Sync
	srv    *bridge.Server
	client *sim.Client
	frames *sim.Subscription
	close  func()
}

func newRig(tb testing.TB) *rig {
	tb.Helper()
	dir := tb.TempDir()
	ws, err := session.New(session.Options{
		Store:   store.OpenMemory(),
		Catalog: demoCatalog{&demo.Model{}},
		Tools:   tools.PipelineConfig{Env: &tools.Env{Root: dir, ArtifactsDir: dir}},
	})
	if err != nil {
		tb.Fatal(err)
	}
	ps := panelsync.New(ws, nil)
	token := strings.Repeat("t", 43)
	srv, err := bridge.Listen(bridge.Options{Port: 0, Token: token, Panel: ps})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go srv.Serve(ctx)
	c := sim.NewClient(sim.ClientOptions{URL: srv.URL(), Token: token, Browser: &sim.Minimal{}})
	frames := c.Subscribe()
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := c.WaitConnected(wctx); err != nil {
		tb.Fatal(err)
	}
	if _, err := sim.WaitFor[wire.Mode](wctx, frames, nil); err != nil {
		tb.Fatal(err)
	}
	r := &rig{ws: ws, sync: ps, srv: srv, client: c, frames: frames}
	r.close = func() {
		cancel()
		<-done
		frames.Close()
		srv.Close()
		ps.Close()
		ws.Close()
	}
	return r
}

// BenchmarkChatEventFanout streams offline/demo deltas through the
// workspace's event stream, the panel mirror and the bridge to one
// simulated extension, and reports the deltas delivered per second. Each
// iteration is one streamed word; the run ends when RUN_FINISHED arrives.
func BenchmarkChatEventFanout(b *testing.B) {
	r := newRig(b)
	defer r.close()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	words, frames := 0, 0
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// offline/demo streams at most demo.MaxStream words per turn, so a
	// large b.N is several turns.
	for left := b.N; left > 0; {
		n := min(left, demo.MaxStream)
		left -= n
		r.ws.Send(fmt.Sprintf("stream %d", n), tools.OriginTerminal)
		for done := false; !done; {
			f, err := r.frames.Next(ctx)
			if err != nil {
				b.Fatal(err)
			}
			ce, ok := f.(wire.ChatEvent)
			if !ok {
				continue
			}
			frames++
			var e struct {
				Type  string `json:"type"`
				Delta string `json:"delta"`
			}
			json.Unmarshal(ce.Event, &e)
			if e.Type == "TEXT_MESSAGE_CONTENT" {
				words += strings.Count(e.Delta, " ")
			}
			done = e.Type == "RUN_FINISHED" || e.Type == "RUN_ERROR"
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	if words != b.N {
		b.Fatalf("delivered %d of %d words", words, b.N)
	}
	b.ReportMetric(float64(words)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(frames)/elapsed.Seconds(), "frames/s")
}
