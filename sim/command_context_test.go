package sim

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCommandContextKeepsItsAnswer: a command's context, made lazily,
// behaves as context.WithDeadline would: once Err says the command is over
// it keeps saying so, with the same error, and Done agrees.
func TestCommandContextKeepsItsAnswer(t *testing.T) {
	t.Parallel()
	closed := func(c context.Context) bool {
		select {
		case <-c.Done():
			return true
		default:
			return false
		}
	}

	past := newCommandContext(context.Background(), time.Now().Add(-time.Second))
	if err := past.Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("past deadline: %v", err)
	}
	past.release()
	if err := past.Err(); !errors.Is(err, context.DeadlineExceeded) || !closed(past) {
		t.Fatalf("after release, a command whose deadline had passed says %v (done %v)", err, closed(past))
	}

	parent, cancel := context.WithCancel(context.Background())
	cancel()
	orphan := newCommandContext(parent, time.Now().Add(time.Hour))
	if err := orphan.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled parent: %v", err)
	}
	orphan.release()
	if err := orphan.Err(); !errors.Is(err, context.Canceled) || !closed(orphan) {
		t.Fatalf("after release: %v (done %v)", err, closed(orphan))
	}

	live := newCommandContext(context.Background(), time.Now().Add(time.Hour))
	if err := live.Err(); err != nil || closed(live) {
		t.Fatalf("live command: %v (done %v)", err, closed(live))
	}
	if dl, ok := live.Deadline(); !ok || time.Until(dl) < 59*time.Minute {
		t.Fatalf("deadline %v %v", dl, ok)
	}
	live.release()
	if err := live.Err(); !errors.Is(err, context.Canceled) || !closed(live) {
		t.Fatalf("released command: %v (done %v)", err, closed(live))
	}

	// A command released before anyone asked for Done owns no timer and
	// still reads as cancelled.
	quick := newCommandContext(context.Background(), time.Now().Add(time.Hour))
	quick.release()
	if err := quick.Err(); !errors.Is(err, context.Canceled) || !closed(quick) {
		t.Fatalf("quick command: %v (done %v)", err, closed(quick))
	}
}
