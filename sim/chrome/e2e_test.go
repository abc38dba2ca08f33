package chrome

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/internal/infertest"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/sim"
	"github.com/infer-workspace/infer/sim/fakebrowser"
)

// TestE2EAgentBrowsesThroughTheBridge drives real Chromium and the fake
// browser with the same flows: infer's workspace with offline/demo sends
// its browser tools over the real bridge to infer-sim's client, which runs
// them in the browser and answers. The site is the demo site on a local
// HTTP server, which both browsers load over the network.
func TestE2EAgentBrowsesThroughTheBridge(t *testing.T) {
	backends := map[string]func(t *testing.T) sim.Browser{
		"fake": func(t *testing.T) sim.Browser {
			fb, err := fakebrowser.New(fakebrowser.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { fb.Close() })
			return fb
		},
		"chromium": func(t *testing.T) sim.Browser { return browserForTest(t) },
	}
	for _, name := range []string{"fake", "chromium"} {
		t.Run(name, func(t *testing.T) {
			b := backends[name](t)
			in := infertest.Start(t, infertest.Options{Mode: tools.Auto})
			a := connectAgent(t, in, b)

			text, results := a.turn("open " + site.URL + "/search.html; type sea into #q and press enter; read #summary")
			if !strings.Contains(text, "for “sea”") || !strings.Contains(results[1], "search?q=sea") {
				t.Errorf("search flow:\n%s\nresults: %q", text, results)
			}

			text, results = a.turn("open " + site.URL + "/login.html; type hunter2 into #password; read #password")
			if !strings.Contains(results[2], "[redacted]") || strings.Contains(text, "hunter2") || strings.Contains(strings.Join(results, " "), "hunter2") {
				t.Errorf("password flow leaked or did not redact:\n%s\nresults: %q", text, results)
			}

			_, results = a.turn("screenshot")
			if !strings.HasPrefix(results[0], "Screenshot of Sign in · Tidewater Library") {
				t.Errorf("screenshot: %q", results)
			}
			shots, _ := filepath.Glob(filepath.Join(in.Artifacts, "*", "*.png"))
			more, _ := filepath.Glob(filepath.Join(in.Artifacts, "*.png"))
			shots = append(shots, more...)
			if len(shots) != 1 {
				t.Fatalf("screenshots saved: %v", shots)
			}
			data, err := os.ReadFile(shots[0])
			if err != nil {
				t.Fatal(err)
			}
			if _, err := png.Decode(bytes.NewReader(data)); err != nil {
				t.Errorf("the saved screenshot is not a PNG: %v", err)
			}

			_, results = a.turn("tabs")
			if !strings.Contains(results[0], "Sign in · Tidewater Library — "+site.URL+"/login.html [controlled, focused]") {
				t.Errorf("tabs: %q", results)
			}
		})
	}
}

// agent is a panel on a test infer whose browser is b.
type agent struct {
	t   *testing.T
	c   *sim.Client
	sub *sim.Subscription
}

func connectAgent(t *testing.T, in *infertest.Infer, b sim.Browser) *agent {
	t.Helper()
	c := sim.NewClient(sim.ClientOptions{URL: in.URL, Token: in.Token, Browser: b, MinBackoff: 10 * time.Millisecond})
	sub := c.Subscribe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; sub.Close() })
	wctx, wcancel := context.WithTimeout(ctx, guard)
	defer wcancel()
	if err := c.WaitConnected(wctx); err != nil {
		t.Fatal(err)
	}
	return &agent{t: t, c: c, sub: sub}
}

// turn sends a message and returns the streamed text and the tool results
// of the run it starts.
func (a *agent) turn(msg string) (string, []string) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*guard)
	defer cancel()
	if err := a.c.SendUserMessage(ctx, msg); err != nil {
		a.t.Fatal(err)
	}
	var text strings.Builder
	var results []string
	for {
		f, err := sim.WaitFor[wire.ChatEvent](ctx, a.sub, nil)
		if err != nil {
			a.t.Fatalf("%s: %v (text so far %q)", msg, err, text.String())
		}
		var e struct{ Type, Delta, Content, Message string }
		json.Unmarshal(f.Event, &e)
		switch e.Type {
		case "TEXT_MESSAGE_CONTENT":
			text.WriteString(e.Delta)
		case "TOOL_CALL_RESULT":
			results = append(results, e.Content)
		case "RUN_ERROR":
			a.t.Fatalf("%s: the run failed: %s", msg, e.Message)
		case "RUN_FINISHED":
			return text.String(), results
		}
	}
}
