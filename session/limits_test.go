package session

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/session/tools"
)

func TestSendRefusesBeyondTheQueueCapAndKeepsTheRest(t *testing.T) {
	f := newFixture(t, "", func(o *Options) { o.MaxQueued = 3 })
	f.model.Delay = time.Millisecond // the first turn must outlast the sends
	sub := f.w.Subscribe()
	defer sub.Close()
	// The first message starts a long turn; the next three wait.
	if err := f.w.Send("stream 100000", tools.OriginPanel); err != nil {
		t.Fatal(err)
	}
	collect(t, sub, busy)
	for i := range 3 {
		if err := f.w.Send(fmt.Sprintf("waiting %d", i), tools.OriginPanel); err != nil {
			t.Fatalf("message %d within the cap: %v", i, err)
		}
	}
	err := f.w.Send("one too many", tools.OriginPanel)
	if !errors.Is(err, ErrQueueFull) {
		t.Fatalf("fourth waiting message: %v, want ErrQueueFull", err)
	}
	if q := f.w.Queue(); len(q) != 3 {
		t.Fatalf("queue %q", q)
	}
	for _, h := range f.w.History() {
		if h == "one too many" {
			t.Fatal("a refused message is in the input history")
		}
	}
	f.w.Interrupt()
	// The waiting messages still run, in order; the refused one never does.
	for range 4 {
		collect(t, sub, idle)
	}
	var users []string
	for _, m := range messagesOf(f.w.Snapshot()) {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	if got := strings.Join(users, "|"); got != "stream 100000|waiting 0|waiting 1|waiting 2" {
		t.Fatalf("turns ran for %s", got)
	}
}

func TestSendRefusesAnOversizedMessage(t *testing.T) {
	f := newFixture(t, "", func(o *Options) { o.MaxMessageBytes = 1000 })
	err := f.w.Send(strings.Repeat("x", 1001), tools.OriginPanel)
	if !errors.Is(err, ErrMessageTooLarge) || !strings.Contains(err.Error(), "1001 bytes") {
		t.Fatalf("oversized message: %v", err)
	}
	if len(f.w.History()) != 0 || len(f.w.Queue()) != 0 || f.w.Busy() {
		t.Fatal("an oversized message was recorded or queued")
	}
	if err := f.w.Send(strings.Repeat("y", 1000), tools.OriginPanel); err != nil {
		t.Fatalf("a message at the cap: %v", err)
	}
}
