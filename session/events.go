package session

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
)

// Event is one fact the workspace publishes. The set is sealed (like
// wire.Frame): only this package's types implement it, so a consumer's type
// switch names every fact it handles, and each fact has exactly one type.
// Each fact also has one publisher, one function of this package, named
// in the type's comment (and in docs/design.md's table): those who report
// the fact call it.
type Event interface{ sessionEvent() }

// TranscriptChanged: a conversation's transcript changed, published by
// change, the one place a transcript changes: a turn's run and what it
// said and did, the person's message, a notice recorded beside them.
// Front ends apply Change to their copy (see transcript.Transcript.Apply);
// a snapshot (ConversationChanged) gives them the whole.
type TranscriptChanged struct {
	Change transcript.Change
}

// ApprovalOpened: a tool call waits for the person (the approvals broker).
type ApprovalOpened struct{ Approval Approval }

// ApprovalResolved: an approval request was answered or withdrawn; its
// Decision and By are set (the approvals broker).
type ApprovalResolved struct{ Approval Approval }

// BrowserStatusChanged: the extension connection changed (browser view).
type BrowserStatusChanged struct{ Status browser.Status }

// PageChanged: the controlled tab is on a page (the watched driver).
type PageChanged struct{ Page Page }

// TabsChanged: the extension reported its open tabs (the watched driver).
type TabsChanged struct{ Tabs []browser.Tab }

// ScreenshotTaken: the extension returned a screenshot (the watched
// driver).
type ScreenshotTaken struct{ Screenshot Screenshot }

// BrowserCommandDone: a browser command finished, for the browser pane's
// log (the watched driver).
type BrowserCommandDone struct{ Record browser.CommandRecord }

// OutsideCall: a tool call made from outside the conversation, by an MCP
// client through `infer mcp`, started (Done unset) or ended, published by
// RunTool. Front ends show it live in the chat, labelled with its origin;
// it is not part of the dialogue, so the model never reads it, and only
// its one-line summary is recorded, as a notice.
type OutsideCall struct {
	// Conversation is the one that was active when the call started.
	Conversation string
	ID           string
	Name         string
	Args         string
	Origin       Origin
	// Done is set on the event that ends the call; OK, Denied, Result
	// and Duration then say how it ended.
	Done bool
	OK   bool
	// Denied says the call never ran: refused by the policy or not
	// approved.
	Denied bool
	// Result is what the call answered (its output or why it failed).
	Result string
	// Duration is how long the tool ran, without any wait for approval.
	Duration time.Duration
}

// Level says how a notice reads to the person.
type Level = transcript.Level

// Notice levels.
const (
	// Info is an ordinary line.
	Info = transcript.Info
	// Warn needs the person's attention: something changed that they did
	// not do, or something they did failed.
	Warn = transcript.Warn
)

// Setting names one of the workspace's settings.
type Setting int

// Settings a SettingsChanged may report.
const (
	SettingMode Setting = iota
	SettingModel
	// SettingModels: the model list changed (discovery finished).
	SettingModels
	SettingEffort
	SettingTemperature
)

// Settings are the agent's settings for the next turn.
type Settings struct {
	Mode        tools.Mode
	Model       string
	Effort      llm.Effort
	Temperature *float64
}

// SettingsChanged answers every request to change a setting, from any
// front end, refused ones included (Settings is then unchanged), so the
// one that asked learns the outcome from the same event as everyone else.
type SettingsChanged struct {
	Settings Settings
	Changed  Setting
}

// ConversationChanged: the active conversation changed (a new session, a
// resume, a move; see claim), published by conversationChanged for the
// conversation lifecycle: activate (new, resume, delete), Resume of the
// running conversation (Same), claim when a held conversation is read
// again, and movedTo when a message moves to a new conversation.
type ConversationChanged struct {
	Snapshot Snapshot
	// Same is set when a resume named the conversation whose turn is
	// running: nothing changed, and Snapshot is its state so far, for a
	// front end that lost the stream (a reconnected panel); one that
	// follows the stream already has it.
	Same bool
}

// QueueChanged: the messages waiting for the running turn changed,
// published by queueChanged when a message joins the queue of a busy
// workspace (Send) and when the runner takes one from the queue.
type QueueChanged struct{ Queue []string }

// BusyChanged: a turn started or ended; Interrupted says it ended
// cancelled.
type BusyChanged struct {
	Busy        bool
	Interrupted bool
}

// TitleChanged: a conversation's title changed, published by
// titleChanged for setTitle (the active conversation: the first message's
// preview, the titler, a rename) and RenameConversation (any other).
type TitleChanged struct {
	Conversation string
	Title        string
}

// UsageReported: a turn finished and used these tokens.
type UsageReported struct {
	Conversation string
	Usage        llm.Usage
}

// Resync: this subscriber fell so far behind that queued events were
// discarded; it must re-read the workspace state (Snapshot, etc.).
type Resync struct{}

func (TranscriptChanged) sessionEvent()    {}
func (ApprovalOpened) sessionEvent()       {}
func (ApprovalResolved) sessionEvent()     {}
func (BrowserStatusChanged) sessionEvent() {}
func (PageChanged) sessionEvent()          {}
func (TabsChanged) sessionEvent()          {}
func (ScreenshotTaken) sessionEvent()      {}
func (BrowserCommandDone) sessionEvent()   {}
func (OutsideCall) sessionEvent()          {}
func (SettingsChanged) sessionEvent()      {}
func (ConversationChanged) sessionEvent()  {}
func (QueueChanged) sessionEvent()         {}
func (BusyChanged) sessionEvent()          {}
func (TitleChanged) sessionEvent()         {}
func (UsageReported) sessionEvent()        {}
func (Resync) sessionEvent()               {}

// Origin says which front end an intent came from.
type Origin = tools.Origin

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
// reading for a long time reaches it; it then gets Resync instead of an
// unbounded queue, never a silent gap.
const maxQueued = 8192

// Subscription is one front end's view of the event stream. The workspace
// never blocks on a subscriber: events queue per subscriber, consecutive
// deltas of the same transcript item merge while they wait, and a backlog beyond maxQueued is replaced by one Resync.
type Subscription struct {
	feed  *Feed
	mu    sync.Mutex
	queue []pending
	ready chan struct{}
	done  bool
}

// Ready is signalled when events are waiting; call Drain after it fires.
func (s *Subscription) Ready() <-chan struct{} { return s.ready }

// pending is a queued event; merged holds the deltas of following events
// of the same message while it waits, joined once when it is delivered, so
// coalescing stays linear.
type pending struct {
	ev     Event
	merged *strings.Builder
}

// Drain returns every waiting event, oldest first.
func (s *Subscription) Drain() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue
	s.queue = nil
	if len(q) == 0 {
		return nil
	}
	out := make([]Event, len(q))
	for i := range q {
		out[i] = q[i].materialize()
	}
	return out
}

// Next waits for the next event. It returns ctx's error when ctx ends and
// ErrClosed after Close.
func (s *Subscription) Next(ctx context.Context) (Event, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			e := s.queue[0]
			s.queue[0] = pending{}
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return e.materialize(), nil
		}
		done := s.done
		s.mu.Unlock()
		if done {
			return nil, ErrClosed
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.ready:
		}
	}
}

// Close stops delivery and releases the subscription.
func (s *Subscription) Close() {
	s.feed.remove(s)
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
	if n := len(s.queue); n > 0 && s.queue[n-1].coalesce(e) {
		s.mu.Unlock()
		s.signal()
		return
	}
	if len(s.queue) >= maxQueued {
		s.queue = append(s.queue[:0], pending{ev: Resync{}})
	} else {
		s.queue = append(s.queue, pending{ev: e})
	}
	s.mu.Unlock()
	s.signal()
}

// coalesce merges next into p when both are deltas of the same item, so
// a slow subscriber's backlog grows by text, not by events.
func (p *pending) coalesce(next Event) bool {
	a, ok := p.ev.(TranscriptChanged)
	b, ok2 := next.(TranscriptChanged)
	if !ok || !ok2 {
		return false
	}
	x, y := a.Change, b.Change
	if x.Op != transcript.DeltaAppended || y.Op != transcript.DeltaAppended ||
		x.Item.ID != y.Item.ID || x.Conversation != y.Conversation || x.Run != y.Run {
		return false
	}
	if p.merged == nil {
		p.merged = new(strings.Builder)
	}
	p.merged.WriteString(y.Delta)
	return true
}

// materialize returns the event with its merged deltas appended, as a new
// value (the original may be shared with other subscribers).
func (p pending) materialize() Event {
	if p.merged == nil {
		return p.ev
	}
	c := p.ev.(TranscriptChanged)
	c.Change.Delta += p.merged.String()
	return c
}

// Feed fans events out to subscribers. A Workspace publishes through its
// own; a front end's tests make one to stand in for a workspace, so they
// drive the front end with the very events and subscription it gets in
// use. The zero value is ready.
type Feed struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

// Subscribe opens a subscription that sees every event published after it.
func (f *Feed) Subscribe() *Subscription {
	s := &Subscription{feed: f, ready: make(chan struct{}, 1)}
	f.mu.Lock()
	if f.subs == nil {
		f.subs = map[*Subscription]struct{}{}
	}
	f.subs[s] = struct{}{}
	f.mu.Unlock()
	return s
}

func (f *Feed) remove(s *Subscription) {
	f.mu.Lock()
	delete(f.subs, s)
	f.mu.Unlock()
}

// Publish delivers e to every subscriber. Holding f.mu across the pushes
// keeps the order of events identical for all subscribers.
func (f *Feed) Publish(e Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		s.push(e)
	}
}
