package bridge

import (
	"sync"

	"github.com/infer-workspace/infer/session/browser"
)

// notifier delivers status changes to Options.OnStatus in order, from one
// goroutine of its own, so that the code changing the status never calls
// out while holding a lock and never waits for a slow callback.
type notifier struct {
	fn   func(browser.Status)
	wake chan struct{}
	stop chan struct{}
	done chan struct{}

	mu    sync.Mutex
	queue []browser.Status
}

func newNotifier(fn func(browser.Status)) *notifier {
	n := &notifier{
		fn:   fn,
		wake: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	go n.run()
	return n
}

// push queues st; it never blocks.
func (n *notifier) push(st browser.Status) {
	n.mu.Lock()
	n.queue = append(n.queue, st)
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// close delivers what is queued, then stops the goroutine.
func (n *notifier) close() {
	close(n.stop)
	<-n.done
}

func (n *notifier) run() {
	defer close(n.done)
	for {
		n.mu.Lock()
		batch := n.queue
		n.queue = nil
		n.mu.Unlock()
		for _, st := range batch {
			n.fn(st)
		}
		if len(batch) > 0 {
			continue
		}
		select {
		case <-n.wake:
		case <-n.stop:
			n.mu.Lock()
			rest := n.queue
			n.queue = nil
			n.mu.Unlock()
			for _, st := range rest {
				n.fn(st)
			}
			return
		}
	}
}
