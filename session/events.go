package session

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/tools"
)

// Kind says what an Event reports.
type Kind int

// Event kinds.
const (
	// KindChat carries one AG-UI event of the active conversation (Chat).
	KindChat Kind = iota
	// KindUserMessage: a user message entered the conversation (Text,
	// Origin); front ends other than its origin show it.
	KindUserMessage
	// KindQueue: the messages waiting for the current turn changed (Queue).
	KindQueue
	// KindConversation: the active conversation changed (Snapshot): a new
	// session or a resume.
	KindConversation
	// KindBusy: a turn started or ended (Busy).
	KindBusy
	// KindInterrupted: a turn ended cancelled.
	KindInterrupted
	// KindApprovalOpened and KindApprovalResolved track approval requests
	// (Approval).
	KindApprovalOpened
	KindApprovalResolved
	// KindMode: the agent mode changed (Mode).
	KindMode
	// KindModel: the current model or the model list changed (Model).
	KindModel
	// KindTitle: a conversation's title changed (Text, Conversation).
	KindTitle
	// KindBrowserStatus: the extension connection changed (Browser).
	KindBrowserStatus
	// KindBrowserCommand: a browser command finished (Command).
	KindBrowserCommand
	// KindNotice: a line for the person outside any turn (Text).
	KindNotice
	// KindResync: this subscriber fell so far behind that queued events
	// were discarded; it must re-read the workspace state (Snapshot, etc.).
	KindResync
	// KindToolDone: a tool call of the active conversation finished (Tool),
	// so front ends need not guess success from the result text.
	KindToolDone
	// KindBrowserTabs: the extension reported its open tabs (Tabs).
	KindBrowserTabs
	// KindBrowserPage: the controlled tab changed page (Page).
	KindBrowserPage
	// KindScreenshot: the extension returned a screenshot (Screenshot).
	KindScreenshot
	// KindUsage: a turn finished and used these tokens (Usage).
	KindUsage
)

// Origin says which front end an intent came from.
type Origin = tools.Origin

// Event is one thing that happened in the workspace.
type Event struct {
	Kind         Kind
	Conversation string // the conversation it concerns, if any
	Chat         events.Event
	Text         string
	Origin       Origin
	Queue        []string
	Snapshot     *Snapshot
	Approval     *Approval
	Mode         tools.Mode
	Model        string
	Busy         bool
	Browser      browser.Status
	Command      browser.CommandRecord
	Tool         *ToolDone
	Tabs         []browser.Tab
	Page         *Page
	Screenshot   *Screenshot
	Usage        llm.Usage

	// merged holds the deltas of following events of the same message
	// while the event waits in a subscriber's queue; they are joined once,
	// when the event is delivered, so coalescing stays linear.
	merged *strings.Builder
}

// ToolDone describes a finished tool call.
type ToolDone struct {
	CallID string
	Name   string
	OK     bool
	// Duration is how long the tool ran, without any wait for approval.
	Duration time.Duration
	// Artifacts are files the call saved, relative to the artifacts dir.
	Artifacts []string
}

// Page is the controlled tab's page after a browser command.
type Page struct {
	URL, Title string
}

// Screenshot is the latest screenshot of the controlled tab.
type Screenshot struct {
	Image []byte
	MIME  string
	URL   string
	At    time.Time
}

// maxQueued bounds a subscriber's backlog after coalescing. Streaming text
// coalesces into one event per message, so only a subscriber that stopped
// reading for a long time reaches it; it then gets KindResync instead of an
// unbounded queue, never a silent gap.
const maxQueued = 8192

// Subscription is one front end's view of the event stream. The workspace
// never blocks on a subscriber: events queue per subscriber, consecutive
// text, reasoning and tool-argument deltas of the same message merge while
// they wait, and a backlog beyond maxQueued is replaced by one KindResync.
type Subscription struct {
	hub   *hub
	mu    sync.Mutex
	queue []Event
	ready chan struct{}
	done  bool
}

// Ready is signalled when events are waiting; call Drain after it fires.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// Drain returns every waiting event, oldest first.
func (s *Subscription) Drain() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue
	s.queue = nil
	for i := range q {
		q[i] = q[i].materialize()
	}
	return q
}

// Next waits for the next event. It returns ctx's error when ctx ends and
// ErrClosed after Close.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			e := s.queue[0]
			s.queue[0] = Event{}
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return e.materialize(), nil
		}
		done := s.done
		s.mu.Unlock()
		if done {
			return Event{}, ErrClosed
		}
		select {
		case <-ctx.Done():
			return Event{}, ctx.Err()
		case <-s.ready:
		}
	}
}

// Close stops delivery and releases the subscription.
func (s *Subscription) Close() {
	s.hub.remove(s)
	s.mu.Lock()
	s.done = true
	s.queue = nil
	s.mu.Unlock()
	s.signal()
}

func (s *Subscription) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

func (s *Subscription) push(e Event) {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return
	}
	if n := len(s.queue); n > 0 && coalesce(&s.queue[n-1], e) {
		s.mu.Unlock()
		s.signal()
		return
	}
	if len(s.queue) >= maxQueued {
		s.queue = append(s.queue[:0], Event{Kind: KindResync})
	} else {
		s.queue = append(s.queue, e)
	}
	s.mu.Unlock()
	s.signal()
}

// coalesce merges next into prev when both are deltas of the same
// message, so a slow subscriber's backlog grows by text, not by events.
func coalesce(prev *Event, next Event) bool {
	if prev.Kind != KindChat || next.Kind != KindChat {
		return false
	}
	var delta string
	switch a := prev.Chat.(type) {
	case *events.TextMessageContentEvent:
		b, ok := next.Chat.(*events.TextMessageContentEvent)
		if !ok || a.MessageID != b.MessageID {
			return false
		}
		delta = b.Delta
	case *events.ReasoningMessageContentEvent:
		b, ok := next.Chat.(*events.ReasoningMessageContentEvent)
		if !ok || a.MessageID != b.MessageID {
			return false
		}
		delta = b.Delta
	case *events.ToolCallArgsEvent:
		b, ok := next.Chat.(*events.ToolCallArgsEvent)
		if !ok || a.ToolCallID != b.ToolCallID {
			return false
		}
		delta = b.Delta
	default:
		return false
	}
	if prev.merged == nil {
		prev.merged = new(strings.Builder)
	}
	prev.merged.WriteString(delta)
	return true
}

// materialize returns the event with its merged deltas appended, as a new
// event value (the original may be shared with other subscribers).
func (e Event) materialize() Event {
	if e.merged == nil {
		return e
	}
	more := e.merged.String()
	e.merged = nil
	switch a := e.Chat.(type) {
	case *events.TextMessageContentEvent:
		e.Chat = events.NewTextMessageContentEvent(a.MessageID, a.Delta+more)
	case *events.ReasoningMessageContentEvent:
		e.Chat = events.NewReasoningMessageContentEvent(a.MessageID, a.Delta+more)
	case *events.ToolCallArgsEvent:
		e.Chat = events.NewToolCallArgsEvent(a.ToolCallID, a.Delta+more)
	}
	return e
}

// hub fans events out to subscribers.
type hub struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

func (h *hub) subscribe() *Subscription {
	s := &Subscription{hub: h, ready: make(chan struct{}, 1)}
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[*Subscription]struct{}{}
	}
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	return s
}

func (h *hub) remove(s *Subscription) {
	h.mu.Lock()
	delete(h.subs, s)
	h.mu.Unlock()
}

// publish delivers e to every subscriber. Holding h.mu across the pushes
// keeps the order of events identical for all subscribers.
func (h *hub) publish(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		s.push(e)
	}
}
