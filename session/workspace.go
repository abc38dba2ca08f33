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
// holder and a KindNotice saying so. A message sent there is never
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
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/infer-workspace/infer/session/agent"
	"github.com/infer-workspace/infer/session/browser"
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

// Origins of intents.
const (
	FromTerminal = tools.OriginTerminal
	FromPanel    = tools.OriginPanel
	FromHeadless = tools.OriginHeadless
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
	// Tools is the tool pipeline's configuration; the workspace fills in
	// its approver.
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

// Snapshot is a conversation as front ends show it.
type Snapshot struct {
	ID          string
	Title       string
	Messages    []store.Message
	ToolResults map[string]bool
	// Notices are the notices recorded in the conversation, in order;
	// each one's After places it among Messages.
	Notices []store.Notice
	// HeldBy, when set, names the process that holds the conversation
	// ("infer serve (pid 1234)"): it is shown read-only, and a message
	// sent to it starts a new conversation (see the package
	// documentation).
	HeldBy string
}

// Approval is one tool call waiting for the person's decision.
type Approval struct {
	ID   string
	Call tools.Call
	// Why says why the call needs approval; JudgeReason is the judge's
	// reason when auto-with-judge passed it on to the person.
	Why         string
	JudgeReason string
	// Options are the "always allow" grants the person may choose from
	// (Decision.Option indexes them); empty when none applies.
	Options []tools.GrantOption
	// Sandbox says where a command runs if approved (see
	// tools.ApprovalRequest.Sandbox); empty for other tools.
	Sandbox string
	Opened  time.Time
	// Decision and By are set on KindApprovalResolved events.
	Decision tools.Decision
	By       Origin

	answer chan answer
}

type answer struct {
	d  tools.Decision
	by Origin
}

type queued struct {
	text   string
	origin Origin
}

// Workspace is the shared state behind every front end. Its methods are safe
// for concurrent use.
type Workspace struct {
	opts     Options
	log      *slog.Logger
	hub      hub
	pipeline *tools.Pipeline

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wake   chan struct{}
	done   chan struct{}  // closed when the runner exits
	bg     sync.WaitGroup // background work (title generation) Close waits for
	// storing serialises creating a conversation's store entry: the
	// runner creates it for a first message, notice for a first notice.
	storing sync.Mutex

	mu          sync.Mutex
	conv        *conversation // the active conversation
	running     *conversation // the running turn's, nil when idle
	queue       []queued
	runCancel   context.CancelFunc // cancels the running turn, nil when idle
	runDone     chan struct{}      // closed when the running turn ends
	mode        tools.Mode
	model       string
	effort      llm.Effort
	temperature *float64
	// effortSet and temperatureSet record that the person chose a value
	// in this session, which then beats provider overrides.
	effortSet, temperatureSet bool
	approvals                 []*Approval // pending, oldest first
	browser                   browser.Status
	view                      BrowserView
	closed                    bool
}

// conversation is the active conversation's in-memory state. The store
// entry is created lazily on the first message so that new sessions nobody
// used do not clutter the list.
type conversation struct {
	id          string
	title       string
	messages    []store.Message
	toolResults map[string]bool
	history     []llm.Message
	notices     []store.Notice
	// hold is this workspace's claim on writing the conversation, kept
	// while it is active or runs a turn; heldBy is set instead when
	// another process held it at resume (see claim).
	hold   *store.Hold
	heldBy *store.HeldError
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
		conv: &conversation{toolResults: map[string]bool{}},
		mode: opts.Mode, model: model, effort: opts.Effort, temperature: opts.Temperature,
	}
	pc := opts.Tools
	pc.Approver = approver{w}
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
func (w *Workspace) Subscribe() *Subscription { return w.hub.subscribe() }

func (w *Workspace) publish(e Event) { w.hub.publish(e) }

// Pipeline is the tool pipeline shared by the agent and the panel.
func (w *Workspace) Pipeline() *tools.Pipeline { return w.pipeline }

// Send submits a message from a front end. It is queued when a turn is
// running. "/clear", "/cls" and "/new" start a new conversation (opentask's
// New chat button sends "/clear"); a message starting with "!" runs the
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
		w.NewSession(origin)
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
		w.publish(Event{Kind: KindQueue, Queue: q})
	}
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return nil
}

// IsNewSessionCommand reports whether a message asks for a new
// conversation: "/clear", "/cls" or "/new".
func IsNewSessionCommand(text string) bool {
	switch strings.ToLower(strings.TrimSpace(text)) {
	case "/clear", "/cls", "/new":
		return true
	}
	return false
}

func (w *Workspace) queueTextsLocked() []string {
	out := make([]string, len(w.queue))
	for i, q := range w.queue {
		out[i] = q.text
	}
	return out
}

// Queue returns the messages waiting for the current turn.
func (w *Workspace) Queue() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.queueTextsLocked()
}

// Busy reports whether a turn is running.
func (w *Workspace) Busy() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.runCancel != nil
}

// Interrupt stops the running turn (a no-op when idle). Pending approvals
// of the turn are rejected; the turn keeps its partial text. Messages still
// queued run afterwards, in order.
func (w *Workspace) Interrupt() {
	w.mu.Lock()
	c := w.runCancel
	w.mu.Unlock()
	if c != nil {
		c()
	}
}

// NewSession interrupts any turn and makes a fresh, empty conversation the
// active one. It returns the (empty) snapshot.
// origin is the front end that asked, so it can skip the event it already
// answered.
func (w *Workspace) NewSession(origin Origin) Snapshot {
	snap, _, _ := w.activate(&conversation{toolResults: map[string]bool{}}, "", origin)
	return snap
}

// activate makes conv the active conversation and interrupts the running
// turn, in that order and under one lock with reading the turn: a turn
// is bound to its conversation when it is dequeued (see runner), so none
// can start in the old conversation after the switch without being
// interrupted. When onlyIf is set, nothing happens unless it is the
// active conversation's id (ok reports whether the switch happened). done
// is closed when the interrupted turn has stopped writing; nil when none
// ran.
func (w *Workspace) activate(conv *conversation, onlyIf string, origin Origin) (snap Snapshot, done <-chan struct{}, ok bool) {
	w.mu.Lock()
	if onlyIf != "" && w.conv.id != onlyIf {
		w.mu.Unlock()
		return Snapshot{}, nil, false
	}
	cancel := w.runCancel
	if w.runDone != nil {
		done = w.runDone
	}
	old := w.conv
	// A turn still writing the old conversation keeps its claim; the
	// runner releases it when the turn ends.
	idle := old != w.running && old != conv
	w.conv = conv
	snap = w.snapshotLocked()
	w.mu.Unlock()
	if idle {
		w.release(old)
	}
	if cancel != nil {
		cancel()
	}
	w.publish(Event{Kind: KindConversation, Conversation: snap.ID, Snapshot: &snap, Origin: origin})
	return snap, done, true
}

// Resume makes a stored conversation the active one, interrupting any
// turn, and returns its snapshot exactly as stored. Resuming the active
// conversation while its turn runs changes nothing and returns its
// snapshot so far. origin is the front end that asked.
func (w *Workspace) Resume(id string, origin Origin) (Snapshot, error) {
	if strings.TrimSpace(id) == "" {
		return Snapshot{}, ErrUnknownConversation
	}
	// A panel that reconnects mid-turn resumes the conversation it shows
	// (opentask does after every reconnect): that must not stop the turn.
	// The in-memory conversation is then the latest; when idle the file is
	// read again, since another process may have added to it.
	w.mu.Lock()
	if w.conv.id == id && w.runCancel != nil {
		snap := w.snapshotLocked()
		w.mu.Unlock()
		return snap, nil
	}
	w.mu.Unlock()
	conv, err := w.load(id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Snapshot{}, ErrUnknownConversation
		}
		return Snapshot{}, err
	}
	notice := ""
	if conv.heldBy != nil { // read before activate shares conv
		notice = heldNotice(conv)
	}
	snap, _, _ := w.activate(conv, "", origin)
	if notice != "" {
		w.publish(Event{Kind: KindNotice, Conversation: snap.ID, Text: notice})
	}
	return snap, nil
}

// Snapshot returns the active conversation.
func (w *Workspace) Snapshot() Snapshot {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.snapshotLocked()
}

func (w *Workspace) snapshotLocked() Snapshot {
	c := w.conv
	tr := make(map[string]bool, len(c.toolResults))
	for k, v := range c.toolResults {
		tr[k] = v
	}
	return Snapshot{ID: c.id, Title: c.title, Messages: append([]store.Message(nil), c.messages...), ToolResults: tr, Notices: append([]store.Notice(nil), c.notices...), HeldBy: w.heldByLocked()}
}

// ActiveConversation returns the active conversation's id ("" until its
// first message is stored).
func (w *Workspace) ActiveConversation() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.conv.id
}

// Conversations lists stored conversations, newest first.
func (w *Workspace) Conversations() ([]store.Meta, error) { return w.opts.Store.List() }

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

// Mode returns the agent mode.
func (w *Workspace) Mode() tools.Mode {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.mode
}

// SetMode switches the agent mode. Unknown names are ignored and reported
// false; either way the current mode is returned.
func (w *Workspace) SetMode(name string) (tools.Mode, bool) {
	return w.SetModeFrom(name, "")
}

// SetModeFrom is SetMode for a front end that answers its own request: the
// KindMode event carries origin, so that front end can skip it.
func (w *Workspace) SetModeFrom(name string, origin Origin) (tools.Mode, bool) {
	m, ok := tools.ParseMode(name)
	w.mu.Lock()
	old := w.mode
	if ok {
		w.mode = m
	}
	cur := w.mode
	w.mu.Unlock()
	if ok {
		w.publish(Event{Kind: KindMode, Mode: cur, Origin: origin})
		if cur != old {
			w.modeChanged(old, cur, origin)
		}
	}
	return cur, ok
}

// CycleMode moves to the next mode (the TUI's shift+tab).
func (w *Workspace) CycleMode() tools.Mode {
	m, _ := w.SetMode(string(tools.Next(w.Mode())))
	return m
}

// Model returns the current model id.
func (w *Workspace) Model() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.model
}

// Models returns the model ids the catalog offers, the default first.
func (w *Workspace) Models() []string { return w.opts.Catalog.Models() }

// ModelsChanged tells front ends the model list changed (e.g. discovery
// finished), so panels can ask again.
func (w *Workspace) ModelsChanged() {
	w.publish(Event{Kind: KindModel, Model: w.Model()})
}

// SelectModel switches the model for the next turn. An id the catalog
// cannot resolve is refused with its error and the model stays as it was.
func (w *Workspace) SelectModel(id string) error { return w.SelectModelFrom(id, "") }

// SelectModelFrom is SelectModel for a front end that answers its own
// request: the KindModel event carries origin, so that front end can skip
// it.
func (w *Workspace) SelectModelFrom(id string, origin Origin) error {
	id = strings.TrimSpace(id)
	if _, _, err := w.opts.Catalog.Resolve(id); err != nil {
		return err
	}
	w.mu.Lock()
	w.model = id
	w.mu.Unlock()
	w.publish(Event{Kind: KindModel, Model: id, Origin: origin})
	return nil
}

// Effort returns the reasoning effort for the next turn.
func (w *Workspace) Effort() llm.Effort {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.effort
}

// SetEffort sets the reasoning effort for the next turn.
func (w *Workspace) SetEffort(s string) error {
	e, err := llm.ParseEffort(s)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.effort = e
	w.effortSet = true
	w.mu.Unlock()
	return nil
}

// Temperature returns the sampling temperature (nil: provider default).
func (w *Workspace) Temperature() *float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.temperature
}

// SetTemperature sets the sampling temperature; nil restores the default.
func (w *Workspace) SetTemperature(t *float64) error {
	if t != nil {
		if err := llm.ValidateTemperature(*t); err != nil {
			return err
		}
	}
	w.mu.Lock()
	w.temperature = t
	w.temperatureSet = true
	w.mu.Unlock()
	return nil
}

// BrowserStatus records the extension connection's state and tells front
// ends. The bridge wiring calls it.
func (w *Workspace) SetBrowserStatus(st browser.Status) {
	w.mu.Lock()
	w.browser = st
	w.mu.Unlock()
	w.publish(Event{Kind: KindBrowserStatus, Browser: st})
}

// BrowserStatus returns the latest extension connection state.
func (w *Workspace) BrowserStatus() browser.Status {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.browser
}

// BrowserCommandDone tells front ends a browser command finished.
func (w *Workspace) BrowserCommandDone(rec browser.CommandRecord) {
	w.publish(Event{Kind: KindBrowserCommand, Command: rec})
}

// RenameConversation gives a conversation the person's own title.
func (w *Workspace) RenameConversation(id, title string) error {
	title = strings.TrimSpace(title)
	if title == "" {
		return errors.New("a title cannot be empty")
	}
	if err := w.opts.Store.Rename(id, title); err != nil {
		return err
	}
	w.mu.Lock()
	active := w.conv.id == id
	conv := w.conv
	w.mu.Unlock()
	if active {
		w.setTitle(conv, title)
	} else {
		w.publish(Event{Kind: KindTitle, Conversation: id, Text: title})
	}
	return nil
}

// PinConversation pins or unpins a conversation in lists.
func (w *Workspace) PinConversation(id string, pinned bool) error {
	return w.opts.Store.SetPinned(id, pinned)
}

// DeleteConversation removes a stored conversation. Deleting the active
// one first starts a new session, so its running turn cannot write it back.
func (w *Workspace) DeleteConversation(id string, origin Origin) error {
	// The store would refuse a conversation another process holds; refuse
	// it before the switch below, which would leave the person elsewhere.
	h, err := w.opts.Store.Hold(id)
	if errors.Is(err, store.ErrHeld) {
		return fmt.Errorf("deleting conversation %s: %w; close it there first", id, err)
	}
	h.Release()
	if _, done, ok := w.activate(&conversation{toolResults: map[string]bool{}}, id, origin); ok && done != nil {
		<-done // the interrupted turn must stop writing before the delete
	}
	return w.opts.Store.Delete(id)
}

// WatchBrowser wraps the browser driver the tools use so that front ends
// see the tabs, the controlled page and the latest screenshot as events,
// instead of parsing tool output.
func (w *Workspace) WatchBrowser(d browser.Driver) browser.Driver {
	return watchedDriver{d: d, w: w}
}

// BrowserView is the latest browser state the workspace has seen, for a
// front end that starts (or resyncs) after the events went by.
type BrowserView struct {
	Tabs       []browser.Tab
	Page       *Page
	Screenshot *Screenshot
}

// BrowserView returns the latest tabs, page and screenshot.
func (w *Workspace) BrowserView() BrowserView {
	w.mu.Lock()
	defer w.mu.Unlock()
	v := w.view
	v.Tabs = append([]browser.Tab(nil), v.Tabs...)
	return v
}

type watchedDriver struct {
	d browser.Driver
	w *Workspace
}

func (wd watchedDriver) Do(ctx context.Context, cmd browser.Command) (browser.Result, error) {
	res, err := wd.d.Do(ctx, cmd)
	if err != nil {
		return res, err
	}
	w := wd.w
	if res.URL != "" || res.Title != "" {
		page := &Page{URL: res.URL, Title: res.Title}
		w.mu.Lock()
		w.view.Page = page
		w.mu.Unlock()
		w.publish(Event{Kind: KindBrowserPage, Page: page})
	}
	switch cmd.Action {
	case browser.Tabs:
		tabs := append([]browser.Tab(nil), res.Tabs...)
		w.mu.Lock()
		w.view.Tabs = tabs
		w.mu.Unlock()
		w.publish(Event{Kind: KindBrowserTabs, Tabs: tabs})
	case browser.Screenshot:
		if len(res.Image) > 0 {
			shot := &Screenshot{Image: res.Image, MIME: res.ImageMIME, URL: res.URL, At: time.Now()}
			w.mu.Lock()
			w.view.Screenshot = shot
			w.mu.Unlock()
			w.publish(Event{Kind: KindScreenshot, Screenshot: shot})
		}
	}
	return res, nil
}

// RunTool runs one tool call on behalf of a front end (the panel's
// tool_request) through the same pipeline as the agent's calls. The
// request is logged, and announced and recorded in the active
// conversation unless the terminal made it (see toolRequested).
func (w *Workspace) RunTool(ctx context.Context, id, name, args string, origin Origin) tools.Outcome {
	mode := w.Mode()
	w.toolRequested(id, name, args, origin, mode)
	o := w.pipeline.Run(ctx, tools.Call{ID: id, Name: name, Args: args, Origin: origin}, mode)
	w.toolRequestDone(id, name, origin, o)
	return o
}

// PendingApprovals returns the open approval requests, oldest first.
func (w *Workspace) PendingApprovals() []Approval {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Approval, len(w.approvals))
	for i, a := range w.approvals {
		out[i] = *a
		out[i].answer = nil
	}
	return out
}

// Answer decides an open approval request. The first answer wins; later
// answers (and unknown ids) are no-ops that return false.
func (w *Workspace) Answer(requestID string, d tools.Decision, by Origin) bool {
	w.mu.Lock()
	var a *Approval
	for i, p := range w.approvals {
		if p.ID == requestID {
			a = p
			w.approvals = append(w.approvals[:i:i], w.approvals[i+1:]...)
			break
		}
	}
	w.mu.Unlock()
	if a == nil {
		return false
	}
	a.answer <- answer{d: d, by: by} // buffered: never blocks
	return true
}

// approver adapts the workspace to tools.Approver: a request is open in
// every front end at once and the first answer wins.
type approver struct{ w *Workspace }

func (ap approver) Approve(ctx context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	w := ap.w
	a := &Approval{ID: newID(), Call: req.Call, Why: req.Why, JudgeReason: req.JudgeReason, Options: req.Options, Sandbox: req.Sandbox, Opened: time.Now(), answer: make(chan answer, 1)}
	w.mu.Lock()
	w.approvals = append(w.approvals, a)
	w.mu.Unlock()
	opened := *a
	opened.answer = nil
	w.publish(Event{Kind: KindApprovalOpened, Approval: &opened})

	var got answer
	var err error
	select {
	case got = <-a.answer:
	case <-ctx.Done():
		// Withdraw the request unless an answer raced in first.
		if !w.withdraw(a.ID) {
			got = <-a.answer
		} else {
			got = answer{d: tools.Decision{Kind: tools.Deny, Reason: "the turn was interrupted"}, by: ""}
			err = ctx.Err()
		}
	}
	// The panel is a web page: what it allows still runs confined.
	got.d.Remote = got.by == FromPanel
	resolved := opened
	resolved.Decision, resolved.By = got.d, got.by
	w.publish(Event{Kind: KindApprovalResolved, Approval: &resolved})
	return got.d, err
}

func (w *Workspace) withdraw(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, p := range w.approvals {
		if p.ID == id {
			w.approvals = append(w.approvals[:i:i], w.approvals[i+1:]...)
			return true
		}
	}
	return false
}

// runner runs queued messages one turn at a time until Close.
func (w *Workspace) runner() {
	defer close(w.done)
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-w.wake:
		}
		for {
			w.mu.Lock()
			if len(w.queue) == 0 || w.closed {
				w.mu.Unlock()
				break
			}
			item := w.queue[0]
			w.queue = w.queue[1:]
			// The turn belongs to the conversation active now. Taken under
			// the same lock that publishes runDone, so a NewSession or a
			// delete that sees this turn can never hand it the next
			// conversation instead: it would write the message there.
			conv := w.conv
			w.running = conv
			q := w.queueTextsLocked()
			ctx, cancel := context.WithCancel(w.ctx)
			w.runCancel = cancel
			runDone := make(chan struct{})
			w.runDone = runDone
			w.mu.Unlock()

			w.publish(Event{Kind: KindQueue, Queue: q})
			w.publish(Event{Kind: KindBusy, Busy: true})
			interrupted := w.turn(ctx, item, conv)
			cancel()

			w.mu.Lock()
			w.runCancel = nil
			w.runDone = nil
			// The turn may have ended in a conversation no longer active
			// (a switch interrupted it, or it moved; see claim): its claim
			// goes before runDone tells a delete that the turn is over.
			ran := w.running
			w.running = nil
			idle := ran != w.conv
			w.mu.Unlock()
			if idle {
				w.release(ran)
			}
			close(runDone)
			if interrupted {
				w.publish(Event{Kind: KindInterrupted})
			}
			w.publish(Event{Kind: KindBusy, Busy: false})
		}
	}
}

// turn runs one message in conv to its end and reports whether it was
// interrupted.
func (w *Workspace) turn(ctx context.Context, item queued, conv *conversation) bool {
	w.mu.Lock()
	model, mode := w.model, w.mode
	effort, temp := w.effort, w.temperature
	effortSet, tempSet := w.effortSet, w.temperatureSet
	w.mu.Unlock()
	if w.opts.Overrides != nil {
		oe, ot := w.opts.Overrides(model)
		if !effortSet && oe != "" && oe != llm.EffortAuto {
			effort = oe
		}
		if !tempSet && ot != nil {
			temp = ot
		}
	}

	conv, moved := w.claim(conv)
	if err := w.ensureStored(conv); err != nil {
		w.publish(Event{Kind: KindNotice, Text: "Could not start a conversation: " + err.Error()})
		w.unsavedRun(conv, err)
		return false
	}
	user := store.Message{Role: "user", Content: item.text}
	rec := w.recorder(conv)
	err := w.answerOpenCalls(conv, rec)
	if err == nil {
		err = rec.message(user)
	}
	if err != nil {
		w.publish(Event{Kind: KindNotice, Text: "Could not save your message: " + err.Error()})
		w.unsavedRun(conv, err)
		return false
	}
	w.publish(Event{Kind: KindUserMessage, Conversation: conv.id, Text: item.text, Origin: item.origin})
	emit := func(e events.Event) { w.publish(Event{Kind: KindChat, Conversation: conv.id, Chat: e}) }
	if moved != "" {
		emit = w.movedTo(conv, moved, emit)
	}

	if cmd, ok := strings.CutPrefix(strings.TrimSpace(item.text), "!"); ok {
		return w.shell(ctx, conv, rec, strings.TrimSpace(cmd), mode, emit)
	}

	provider, name, err := w.opts.Catalog.Resolve(model)
	if err != nil {
		provider = failing{err}
	}
	req := llm.Request{Model: name, System: w.systemPrompt(), Tools: w.pipeline.Specs(), Effort: effort, Temperature: temp}
	out := agent.Run(ctx, agent.Config{Provider: provider, Request: req, MaxSteps: w.opts.MaxSteps, ThreadID: conv.id}, trimImages(conv.history), agent.Hooks{
		Emit:             emit,
		Record:           rec.llmMessage,
		RecordToolResult: rec.toolResult,
		RecordTool:       rec.toolMessage,
		Exec: func(ctx context.Context, call llm.ToolCall) agent.ToolResult {
			o := w.pipeline.Run(ctx, tools.Call{ID: call.ID, Name: call.Name, Args: call.Arguments, Origin: tools.OriginAgent}, w.Mode())
			w.publish(Event{Kind: KindToolDone, Conversation: conv.id, Tool: &ToolDone{CallID: call.ID, Name: call.Name, OK: o.Success, Duration: o.Duration, Artifacts: o.Artifacts}})
			return agent.ToolResult{Content: o.Output, OK: o.Success, Images: o.Images}
		},
	})
	w.publish(Event{Kind: KindUsage, Conversation: conv.id, Usage: out.Usage})
	if out.Status == agent.Failed {
		w.log.Warn("turn failed", "conversation", conv.id, "err", out.Err)
	}
	w.maybeTitle(conv, model)
	return out.Status == agent.Interrupted
}

// shell runs a "!command" message: a Bash call made by the person, which
// needs exactly the approval the agent's Bash call would need.
func (w *Workspace) shell(ctx context.Context, conv *conversation, rec recorder, cmd string, mode tools.Mode, emit func(events.Event)) bool {
	runID := newID()
	emit(events.NewRunStartedEvent(conv.id, runID))
	callID := "call_shell_" + strings.ReplaceAll(runID, "-", "")[:16]
	args := fmt.Sprintf(`{"command":%q}`, cmd)
	if b, err := jsonString(cmd); err == nil {
		args = `{"command":` + b + `}`
	}
	call := store.ToolCall{ID: callID, Type: "function", Function: store.FunctionCall{Name: "Bash", Arguments: args}}
	if err := rec.message(store.Message{Role: "assistant", ToolCalls: []store.ToolCall{call}}); err != nil {
		emit(events.NewRunErrorEvent(err.Error(), events.WithRunID(runID)))
		return false
	}
	emit(events.NewToolCallStartEvent(callID, "Bash"))
	emit(events.NewToolCallArgsEvent(callID, args))
	emit(events.NewToolCallEndEvent(callID))
	o := w.pipeline.Run(ctx, tools.Call{ID: callID, Name: "Bash", Args: args, Origin: tools.OriginShell}, mode)
	content := o.Output
	if content == "" {
		content = "(no output)"
	}
	emit(events.NewToolCallResultEvent(newID(), callID, content))
	w.publish(Event{Kind: KindToolDone, Conversation: conv.id, Tool: &ToolDone{CallID: callID, Name: "Bash", OK: o.Success, Duration: o.Duration}})
	if err := rec.message(store.Message{Role: "tool", ToolCallID: callID, Content: content}); err != nil {
		w.log.Warn("saving shell result", "err", err)
	}
	if err := rec.toolResult(callID, o.Success); err != nil {
		w.log.Warn("saving shell result", "err", err)
	}
	if ctx.Err() != nil {
		id := newID()
		emit(events.NewTextMessageStartEvent(id, events.WithRole("assistant")))
		emit(events.NewTextMessageContentEvent(id, agent.InterruptedNotice))
		emit(events.NewTextMessageEndEvent(id))
		emit(events.NewRunErrorEvent("interrupted", events.WithErrorCode("interrupted"), events.WithRunID(runID)))
		return true
	}
	emit(events.NewRunFinishedEvent(conv.id, runID))
	return false
}

// unsavedRun reports a turn that could not start because its message could
// not be saved (a full disk, a read-only home) as a run of its own: a
// RUN_STARTED, a visible notice and a RUN_ERROR, so that the panel, which
// shows chat events only, says why nothing happened and leaves its working
// state. The message stays in the input history for sending again.
func (w *Workspace) unsavedRun(conv *conversation, err error) {
	w.mu.Lock()
	id := conv.id
	w.mu.Unlock()
	emit := func(e events.Event) { w.publish(Event{Kind: KindChat, Conversation: id, Chat: e}) }
	runID := newID()
	msg := "saving the conversation: " + err.Error() + "; the agent did not run. Free some disk space (or fix the folder's permissions), then send the message again."
	emit(events.NewRunStartedEvent(id, runID))
	textID := newID()
	emit(events.NewTextMessageStartEvent(textID, events.WithRole("assistant")))
	emit(events.NewTextMessageContentEvent(textID, "⚠ "+msg))
	emit(events.NewTextMessageEndEvent(textID))
	emit(events.NewRunErrorEvent(msg, events.WithErrorCode("storage"), events.WithRunID(runID)))
}

// ensureStored creates the conversation's store entry on its first message
// or notice. Both may come at once, from the runner and from a front end,
// so the check and the creation are one step under w.storing.
func (w *Workspace) ensureStored(conv *conversation) error {
	w.storing.Lock()
	defer w.storing.Unlock()
	w.mu.Lock()
	stored := conv.id != ""
	w.mu.Unlock()
	if stored {
		return nil
	}
	meta, err := w.opts.Store.Create()
	if err != nil {
		return err
	}
	hold, _, _ := w.hold(meta.ID) // nobody else knows the new id yet
	w.mu.Lock()
	conv.id = meta.ID
	conv.title = meta.Title
	conv.hold = hold
	w.mu.Unlock()
	return nil
}

// recorder saves a conversation's messages and mirrors them in memory.
type recorder struct {
	w    *Workspace
	conv *conversation
}

func (w *Workspace) recorder(c *conversation) recorder { return recorder{w, c} }

func (r recorder) message(m store.Message) error {
	return r.save(m, toLLM([]store.Message{m})[0])
}

// llmMessage saves a message the agent produced. The in-memory history keeps
// the original, images included (the store keeps text only; screenshots stay
// in artifacts/).
func (r recorder) llmMessage(m llm.Message) error { return r.save(fromLLM(m), m) }

func (r recorder) save(m store.Message, l llm.Message) error {
	if err := r.w.opts.Store.Append(r.conv.id, m); err != nil {
		return err
	}
	r.w.mu.Lock()
	r.conv.messages = append(r.conv.messages, m)
	r.conv.history = append(r.conv.history, l)
	first := len(r.conv.messages) == 1 && m.Role == "user"
	r.w.mu.Unlock()
	if first {
		r.w.setTitle(r.conv, store.PreviewTitle(m.Content))
	}
	return nil
}

// toolMessage saves a tool message the agent produced together with its
// call's outcome, in one append, and mirrors both in memory.
func (r recorder) toolMessage(m llm.Message, ok bool) error {
	sm := fromLLM(m)
	if err := r.w.opts.Store.AppendToolResult(r.conv.id, sm, ok); err != nil {
		return err
	}
	r.w.mu.Lock()
	r.conv.messages = append(r.conv.messages, sm)
	r.conv.history = append(r.conv.history, m)
	r.conv.toolResults[m.ToolCallID] = ok
	r.w.mu.Unlock()
	return nil
}

func (r recorder) toolResult(id string, ok bool) error {
	if err := r.w.opts.Store.RecordToolResult(r.conv.id, id, ok); err != nil {
		return err
	}
	r.w.mu.Lock()
	r.conv.toolResults[id] = ok
	r.w.mu.Unlock()
	return nil
}

func (w *Workspace) setTitle(c *conversation, title string) {
	w.mu.Lock()
	changed := c.title != title
	c.title = title
	w.mu.Unlock()
	if changed {
		w.publish(Event{Kind: KindTitle, Conversation: c.id, Text: title})
	}
}

// maybeTitle asks for a generated title after the first exchange, in the
// background; the first-message preview stays until one arrives.
func (w *Workspace) maybeTitle(c *conversation, model string) {
	if w.opts.Titler == nil {
		return
	}
	w.mu.Lock()
	var firstUser, firstAnswer string
	users := 0
	for _, m := range c.messages {
		if m.Role == "user" {
			users++
			if firstUser == "" {
				firstUser = m.Content
			}
		}
		if m.Role == "assistant" && firstAnswer == "" && m.Content != "" {
			firstAnswer = m.Content
		}
	}
	w.mu.Unlock()
	if users != 1 || firstAnswer == "" {
		return
	}
	w.bg.Add(1)
	go func() {
		defer w.bg.Done()
		ctx, cancel := context.WithTimeout(w.ctx, 30*time.Second)
		defer cancel()
		title, err := w.opts.Titler(ctx, model, firstUser, firstAnswer)
		if err != nil || strings.TrimSpace(title) == "" {
			w.log.Debug("title generation failed; keeping the preview", "err", err)
			return
		}
		if err := w.opts.Store.SetGeneratedTitle(c.id, title); err != nil {
			w.log.Warn("saving generated title", "err", err)
			return
		}
		w.setTitle(c, title)
	}()
}

func (w *Workspace) systemPrompt() string {
	if w.opts.System != "" {
		return w.opts.System
	}
	return defaultSystemPrompt
}

const defaultSystemPrompt = `You are infer's agent. You work with a person in their own, real web browser ` +
	`(through the Browser* tools) and on their machine (Bash, Read, Write, Edit, Grep, Tree). ` +
	`Be direct and brief. Prefer reading a page before acting on it. Never type secrets the person did not give you. ` +
	`When a tool is refused or fails, say so plainly and suggest what the person can do.`

// failing is a provider that fails at once, used when the selected model
// cannot be resolved, so the failure still reaches the person as a run error.
type failing struct{ err error }

func (f failing) Stream(ctx context.Context, req llm.Request, emit func(llm.Delta)) (llm.Completion, error) {
	return llm.Completion{}, f.err
}
