package tui

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/internal/leaks"
	"github.com/infer-workspace/infer/session"
)

// TestMain fails the run if any goroutine outlives the tests. Chroma's
// regexp engine keeps a coarse clock goroutine that stops by itself after
// its last use; it is not ours to stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leaks.Options(goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))...)
}

// countingWS counts state reads, so a test can see the real program
// listen to events and react.
type countingWS struct {
	*fakeWS
	loads chan struct{}
}

func (c *countingWS) Busy() bool {
	select {
	case c.loads <- struct{}{}:
	default:
	}
	return c.fakeWS.Busy()
}

func TestRunListensAndStopsWithContext(t *testing.T) {
	t.Parallel()
	ws := &countingWS{fakeWS: newFakeWS(), loads: make(chan struct{}, 8)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, ws, Options{Background: "dark"}, tea.WithInput(nil), tea.WithOutput(io.Discard), tea.WithWindowSize(100, 30))
	}()
	wait := func(what string) {
		t.Helper()
		select {
		case <-ws.loads:
		case <-time.After(10 * time.Second):
			t.Fatalf("the program did not %s", what)
		}
	}
	wait("read the state at start")
	// A resync event must reach Update through the listener, which then
	// reads the state again.
	for {
		ws.mu.Lock()
		subscribed := ws.sub != nil
		ws.mu.Unlock()
		if subscribed {
			break
		}
	}
	ws.feed.Publish(session.Resync{})
	wait("react to an event")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	// A closed subscription answers at once with ErrClosed; an open one
	// would report the cancelled context instead.
	done2, stop := context.WithCancel(context.Background())
	stop()
	if _, err := ws.sub.Next(done2); !errors.Is(err, session.ErrClosed) {
		t.Fatalf("Run must close its subscription: Next says %v", err)
	}
}
