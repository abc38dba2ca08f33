// Package session is the workspace: the one owner of the active
// conversation, the agent's current turn, the queue of waiting messages, the
// pending approvals, the mode and the model. Front ends (the TUI, the
// bridge's panel side, infer serve, infer headless) call its methods for
// every intent and subscribe to its single event stream; none of them decides
// policy.
//
// session must not import bridge or tui: transports adapt to the workspace,
// never the reverse.
//
// # One writer per conversation
//
// Several infer processes may share a project, but a conversation's turns
// are taken by one of them: the workspace claims (store.Hold) the
// conversation it writes, from its first message or its resume until it
// switches away or closes, and a crash releases the claim with the
// process. Resuming a conversation another process holds still works, read
// only: the snapshot shows it as stored, with Snapshot.HeldBy naming the
// holder and a notice saying so. A message sent there is never
// dropped: when its turn starts, the conversation is claimed again (the
// other process may have let go) and, if it is still held, the message
// starts a new conversation instead, which becomes the active one, and the
// turn's run opens with a notice that says why. The front ends use this
// as follows:
//
//   - the TUI's resume picker and the browser panel's resume (infer serve,
//     and the panel of any infer) show the conversation read-only, so the
//     person can read it, and move what they send next as above; the panel
//     learns it from that notice, as it shows chat events only;
//   - infer headless --session-id, which has a prompt for the
//     conversation and nothing to read it with, continues in a new
//     conversation at once, saying so on stderr (run_started then reports
//     the new id, not resumed).
//
// Resuming a conversation the workspace can claim first answers every tool
// call that has no result (a kill during a tool call leaves one) with a
// failed result, "infer stopped before this call finished", recorded in
// the store (store.Recover); so does the start of a turn, for calls a
// failed save left open. Providers reject a history with an unanswered
// call, so without that the conversation would fail on every later turn.
package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/skills"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
)

// ErrClosed is returned after the workspace or a subscription is closed.
var ErrClosed = errors.New("workspace closed")

// ErrUnknownConversation is returned by Resume for ids the store does not
// hold (including empty ones).
var ErrUnknownConversation = errors.New("unknown conversation")

// ErrQueueFull is returned by Send when Options.MaxQueued messages are
// already waiting for the running turn.
var ErrQueueFull = errors.New("too many messages are waiting for the agent; wait for the current ones to run, or interrupt")

// ErrMessageTooLarge is returned by Send for a message longer than
// Options.MaxMessageBytes.
var ErrMessageTooLarge = errors.New("the message is too large to send to the agent; attach the text as a file in the project instead")

// Defaults for Options.MaxQueued and Options.MaxMessageBytes.
const (
	DefaultMaxQueued       = 100
	DefaultMaxMessageBytes = 1 << 20
)

// Options configures a workspace.
type Options struct {
	// Store holds conversations; store.OpenMemory() when storage is off.
	Store *store.Store
	// History is the shared input history (nil: none kept).
	History *store.History
	// Catalog resolves model ids; it must offer at least offline/demo.
	Catalog llm.Catalog
	// Model is the starting model id; empty means the catalog's default.
	Model string
	// Mode is the starting agent mode (default standard).
	Mode tools.Mode
	// Effort and Temperature are the starting options.
	Effort      llm.Effort
	Temperature *float64
	// MaxSteps bounds model calls per turn (default 50).
	MaxSteps int
	// Overrides returns a provider's own effort and temperature settings
	// (config.yaml providers.<name>.effort/temperature) for a model id;
	// they beat Effort and Temperature until the person sets either in
	// this session. Nil means none.
	Overrides func(model string) (llm.Effort, *float64)
	// System replaces the built-in system prompt when non-empty.
	System string
	// Tools is the tool pipeline's configuration; the workspace gives it
	// its approver. Tools.Env is used as given, never written: what of it
	// only the workspace can give — its Browser watched (WatchBrowser), so
	// that front ends see the tabs, pages and screenshots as events, and
	// WebSearch with the model selected when it runs (Workspace.WebSearch)
	// — the caller binds to the workspace New returns (see package
	// assemble). A nil Env is an empty one of the workspace's own, with
	// WebSearch bound.
	Tools tools.PipelineConfig
	// Skills lists the discovered skills (nil: none).
	Skills func() []skills.Skill
	// Titler makes a short title for a conversation after its first
	// exchange; nil keeps the first-message preview.
	Titler func(ctx context.Context, model string, firstUser, firstAnswer string) (string, error)
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// MaxQueued caps the messages waiting while a turn runs (default
	// DefaultMaxQueued); Send refuses more with ErrQueueFull, so a front
	// end that floods the workspace costs bounded memory and is told.
	MaxQueued int
	// MaxMessageBytes caps one message (default DefaultMaxMessageBytes);
	// Send refuses a longer one with ErrMessageTooLarge. Far beyond any
	// model's context, such a message would only be stored, kept in
	// memory and sent with every later request.
	MaxMessageBytes int
}

// Workspace is the shared state behind every front end. Its methods are safe
// for concurrent use.
//
// It is made of parts along the seams of what it knows, each the one
// publisher of its own events: settings (settings.go), the approvals
// broker (approvals.go), the browser view and watched driver
// (browserview.go), the runner and its queue (runner.go), the
// conversation lifecycle (conversation.go, resume.go) and each turn's
// recorder (recorder.go).
type Workspace struct {
	// The settings and the browser view have their own locks; their
	// methods are the workspace's.
	*settings
	*browserView
	approvals *approvals

	opts     Options
	log      *slog.Logger
	feed     Feed
	pipeline *tools.Pipeline

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wake   chan struct{}
	done   chan struct{}  // closed when the runner exits
	bg     sync.WaitGroup // background work (title generation) Close waits for
	// storing serialises creating a conversation's store entry: the
	// runner creates it for a first message, notice for a first notice.
	storing sync.Mutex

	// mu guards the runner's queue and turn together with the active
	// conversation and its contents (see runner.go).
	mu        sync.Mutex
	conv      *conversation // the active conversation
	running   *conversation // the running turn's, nil when idle
	queue     []queued
	runCancel context.CancelFunc // cancels the running turn, nil when idle
	runDone   chan struct{}      // closed when the running turn ends
	closed    bool
}

// New starts a workspace with a fresh, empty conversation.
func New(opts Options) (*Workspace, error) {
	if opts.Store == nil {
		return nil, errors.New("session: Options.Store is required (store.OpenMemory() when storage is off)")
	}
	if opts.Catalog == nil {
		return nil, errors.New("session: Options.Catalog is required")
	}
	if opts.Mode == "" {
		opts.Mode = tools.Standard
	}
	if opts.Effort == "" {
		opts.Effort = llm.EffortAuto
	}
	if opts.MaxQueued <= 0 {
		opts.MaxQueued = DefaultMaxQueued
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	model := opts.Model
	if model == "" {
		if ms := opts.Catalog.Models(); len(ms) > 0 {
			model = ms[0]
		}
	}
	if _, _, err := opts.Catalog.Resolve(model); err != nil {
		return nil, fmt.Errorf("model %q: %w", model, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &Workspace{
		opts: opts, log: log, ctx: ctx, cancel: cancel,
		wake: make(chan struct{}, 1), done: make(chan struct{}),
		conv: &conversation{},
	}
	w.settings = &settings{catalog: opts.Catalog, overrides: opts.Overrides, publish: w.publish, modeChanged: w.modeChanged,
		mode: opts.Mode, model: model, effort: opts.Effort, temperature: opts.Temperature}
	w.browserView = &browserView{publish: w.publish}
	w.approvals = &approvals{publish: w.publish}
	pc := opts.Tools
	pc.Approver = w.approvals
	if pc.Env == nil {
		pc.Env = &tools.Env{WebSearch: w.WebSearch}
	}
	if j, ok := pc.Judge.(Judge); ok && j.Model == nil {
		// The judge asks the model the person uses unless one is
		// configured; only the workspace knows that model.
		j.Model = w.Model
		pc.Judge = j
	}
	w.pipeline = tools.NewPipeline(pc)
	go w.runner()
	return w, nil
}

// Close interrupts any turn, rejects pending approvals, waits for the
// current turn to finish writing, and stops the workspace.
func (w *Workspace) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-w.done
		return nil
	}
	w.closed = true
	w.queue = nil
	w.mu.Unlock()
	w.cancel()
	<-w.done
	w.bg.Wait()
	// No turn runs any more, so the active conversation's claim is the
	// last one held.
	w.mu.Lock()
	active := w.conv
	w.mu.Unlock()
	w.release(active)
	return nil
}

// Subscribe returns a new view of the event stream. Close it when done.
func (w *Workspace) Subscribe() *Subscription { return w.feed.Subscribe() }

func (w *Workspace) publish(e Event) { w.feed.Publish(e) }

// Pipeline is the tool pipeline shared by the agent and the panel.
func (w *Workspace) Pipeline() *tools.Pipeline { return w.pipeline }

// WebSearch runs query with the hosted search of the provider of the model
// selected now, for the tools' Env (tools.Env.WebSearch); its error wraps
// tools.ErrNoWebSearch when that provider has none.
func (w *Workspace) WebSearch(ctx context.Context, query string) (llm.SearchResult, error) {
	return w.webSearch(ctx, query)
}

// Send submits a message from a front end. It is queued when a turn is
// running. "/clear", "/cls" and "/new" start a new conversation (the browser
// panel's New chat button sends "/clear"); a message starting with "!" runs the
// rest as a Bash command with the approval a Bash call would need. A
// message longer than MaxMessageBytes, or one arriving while MaxQueued
// messages wait, is refused (ErrMessageTooLarge, ErrQueueFull) and
// recorded nowhere; every accepted message reaches the conversation when
// its turn runs, and the input history unless it is longer than the
// history keeps (64 KiB, see store.History).
func (w *Workspace) Send(text string, origin Origin) error {
	if len(text) > w.opts.MaxMessageBytes {
		return fmt.Errorf("%w (%d bytes, at most %d)", ErrMessageTooLarge, len(text), w.opts.MaxMessageBytes)
	}
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return errors.New("empty message")
	}
	if IsNewSessionCommand(trimmed) {
		w.NewSession()
		return nil
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	if len(w.queue) >= w.opts.MaxQueued {
		w.mu.Unlock()
		return fmt.Errorf("%w (%d waiting)", ErrQueueFull, w.opts.MaxQueued)
	}
	w.queue = append(w.queue, queued{text: text, origin: origin})
	q := w.queueTextsLocked()
	busy := w.runCancel != nil
	w.mu.Unlock()
	// History is written after the message is accepted, so that it never
	// holds a refused one; a message still waiting is already in it, as it
	// was when history came first.
	if h := w.opts.History; h != nil {
		if err := h.Add(text); err != nil {
			w.log.Warn("saving input history", "err", err)
		}
	}
	if busy {
		w.queueChanged(q)
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return nil
}

// queueChanged tells the front ends which messages wait now: the one
// publisher of QueueChanged, for Send and the runner.
func (w *Workspace) queueChanged(q []string) { w.publish(QueueChanged{Queue: q}) }

// IsNewSessionCommand reports whether a message asks for a new
// conversation: "/clear", "/cls" or "/new".
func IsNewSessionCommand(text string) bool {
	switch strings.ToLower(strings.TrimSpace(text)) {
	case "/clear", "/cls", "/new":
		return true
	}
	return false
}

// History returns the shared input history, oldest first.
func (w *Workspace) History() []string {
	if w.opts.History == nil {
		return nil
	}
	return w.opts.History.List()
}

// Skills returns the discovered skills.
func (w *Workspace) Skills() []skills.Skill {
	if w.opts.Skills == nil {
		return nil
	}
	return w.opts.Skills()
}

// PendingApprovals returns the open approval requests, oldest first.
func (w *Workspace) PendingApprovals() []Approval { return w.approvals.PendingApprovals() }

// Answer decides an open approval request on behalf of by. The first
// answer wins; later answers (and unknown ids) are no-ops that return
// false.
func (w *Workspace) Answer(requestID string, d tools.Decision, by Origin) bool {
	return w.approvals.Answer(requestID, d, by)
}

// RunTool runs one tool call on behalf of a front end (the panel's
// tool_request, an MCP client's call) through the same pipeline as the
// agent's calls. The request is logged, and announced and recorded in the
// active conversation unless the terminal made it (see toolRequested); an
// MCP client's call is shown live as it runs instead (see OutsideCall).
func (w *Workspace) RunTool(ctx context.Context, id, name, args string, origin Origin) tools.Outcome {
	mode := w.Mode()
	w.toolRequested(id, name, args, origin, mode)
	var o tools.Outcome
	if outside(origin) {
		o = w.runOutside(ctx, id, name, args, origin, mode)
	} else {
		o = w.pipeline.Run(ctx, tools.Call{ID: id, Name: name, Args: args, Origin: origin}, mode)
	}
	w.toolRequestDone(id, name, origin, o)
	if o.Warning != "" {
		w.notice(o.Warning, Warn, origin)
	}
	return o
}
