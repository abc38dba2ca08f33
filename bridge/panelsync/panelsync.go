// Package panelsync connects the extension's side panel to the workspace:
// it implements bridge.Panel by calling workspace intents, and mirrors the
// workspace's event stream (chat events, approvals, interruptions, mode and
// model changes) to the live extension connection.
//
// It lives beside the bridge, not in session, because the dependency must
// point from the transport to the workspace.
package panelsync

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/bridge/agui"
	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
)

// Sync is the panel side of one workspace.
type Sync struct {
	w   *session.Workspace
	log *slog.Logger
	sub *session.Subscription

	mu   sync.Mutex
	live bridge.Sender
	// enc encodes the transcript's changes, and panel adds what the
	// live connection needs around them; both run on the mirror
	// goroutine.
	enc   agui.Encoder
	panel *agui.Panel
	// outside holds the lines of MCP clients' calls that ended while a
	// turn ran, on the mirror goroutine too (see outside.go).
	outside outsideLines
	// inflight holds the tool_request ids being served on the live
	// connection. Each connection gets a fresh map (ids are the
	// extension's, and a reconnect does not resurrect old ones); a request
	// still running for an old connection clears its id from the old map.
	inflight map[string]bool
	// shown is the conversation whose snapshot the panel was last sent;
	// "" before any. A panel outlives infer: after a restart it still
	// shows the transcript of a conversation this process never opened.
	shown    string
	hasShown bool
	// unsure is set by a snapshot sent unasked: it may have gone to a
	// connection already dead but not yet noticed, so the next connection
	// is sent the active conversation again rather than trusting it.
	unsure bool
	// asked counts the panel's resumes and new sessions whose
	// ConversationChanged the mirror has yet to forward.
	asked int
	// A flood of refused panel messages is logged as a line for the
	// first and one line summing up the rest of each refusalLogInterval.
	refusedQuietUntil time.Time
	refusedCount      int

	wg     sync.WaitGroup // panel tool requests
	ctx    context.Context
	cancel context.CancelFunc
	// stopMirror ends the mirror goroutine, which closes mirrored.
	stopMirror context.CancelFunc
	mirrored   chan struct{}
}

var _ bridge.Panel = (*Sync)(nil)

// New subscribes to w and starts mirroring its events. Close stops it.
func New(w *session.Workspace, log *slog.Logger) *Sync {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	mctx, stopMirror := context.WithCancel(context.Background())
	s := &Sync{w: w, log: log, sub: w.Subscribe(), inflight: map[string]bool{}, ctx: ctx, cancel: cancel,
		stopMirror: stopMirror, mirrored: make(chan struct{})}
	s.panel = agui.NewPanel(w.Pipeline().ArtifactsDir())
	go s.mirror(mctx)
	return s
}

// Close forwards what the workspace already published (so a panel watching
// the end of a run gets its terminal events), stops mirroring, and cancels
// the panel's running tool requests. Close the workspace first, so that
// its last events are published, and the bridge after, so they go out.
func (s *Sync) Close() {
	s.stopMirror()
	<-s.mirrored
	s.cancel()
	s.sub.Close()
	s.wg.Wait()
	s.flushRefused()
}

func (s *Sync) current() bridge.Sender {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live
}

// mirror forwards workspace events to whichever connection is live.
func (s *Sync) mirror(ctx context.Context) {
	defer close(s.mirrored)
	deliver := func(ev session.Event) {
		// The encoder follows every change, connected or not, so that a
		// panel that connects mid-run gets the rest of it right.
		var chat []agui.Event
		if c, ok := ev.(session.TranscriptChanged); ok {
			chat = s.enc.Encode(c.Change)
		}
		snd := s.current()
		if snd == nil {
			return
		}
		if err := s.forward(snd, ev, chat); err != nil {
			s.log.Debug("panel: frame not delivered", "err", err)
		}
	}
	for {
		ev, err := s.sub.Next(ctx)
		if err != nil {
			for _, ev := range s.sub.Drain() {
				deliver(ev)
			}
			return
		}
		deliver(ev)
	}
}

// forward sends the panel what ev tells it; chat is ev's AG-UI events
// when ev is a transcript change.
func (s *Sync) forward(snd bridge.Sender, ev session.Event, chat []agui.Event) error {
	switch ev := ev.(type) {
	case session.TranscriptChanged:
		c := ev.Change
		if c.Op == transcript.ItemDone && c.Item.Kind == transcript.User {
			return s.userMessage(snd, c)
		}
		for _, e := range chat {
			if err := s.chat(snd, c.Conversation, e.Event); err != nil {
				return err
			}
		}
		return nil
	case session.OutsideCall:
		if ev.Done {
			return s.outside.show(snd, ev)
		}
	case session.BusyChanged:
		if !ev.Busy {
			defer s.outside.idle(snd)
		}
		if ev.Interrupted {
			return snd.Send(wire.Interrupted{})
		}
	case session.ApprovalOpened:
		if ev.Approval.LocalOnly {
			return nil // the panel's answer could not count
		}
		return snd.Send(approvalFrame(ev.Approval))
	case session.ApprovalResolved:
		if err := snd.Send(wire.ApprovalResolved{RequestID: ev.Approval.ID}); err != nil {
			return err
		}
		// opentask shows one request at a time, each new one replacing the
		// last: bring the oldest still-pending request back into view.
		if p := panelApprovals(s.w.PendingApprovals()); len(p) > 0 {
			return snd.Send(approvalFrame(p[0]))
		}
	case session.SettingsChanged:
		// Every front end's change, the panel's own set_mode and
		// select_model included, is answered from here.
		switch ev.Changed {
		case session.SettingMode:
			return snd.Send(wire.Mode{Mode: string(ev.Settings.Mode)})
		case session.SettingModel, session.SettingModels:
			return snd.Send(wire.Models{Models: s.w.Models(), Current: ev.Settings.Model})
		}
	case session.ConversationChanged:
		// The panel's own resume and new session are answered from here
		// too; Same is a resume of the running conversation, which only a
		// panel that lost the stream asks for.
		return s.sendSnapshot(snd, ev.Snapshot, !s.answered())
	case session.Resync:
		// Events were dropped for this subscriber: the snapshot restores
		// the panel's view rather than leaving a silent gap.
		return s.sendSnapshot(snd, s.w.Snapshot(), true)
	}
	return nil
}

// chat sends one AG-UI event of a run, with what the panel needs around
// it: the start of a message it never saw, the text that closes a run
// ending on a tool result, absolute artifact links.
func (s *Sync) chat(snd bridge.Sender, conversation string, e events.Event) error {
	if s.outside.track(e) {
		// The run ended: the calls that waited for it are shown
		// after whatever closes it.
		defer s.outside.flush(snd)
	}
	if conversation != s.w.ActiveConversation() {
		return nil // a cancelled turn of a conversation the panel left
	}
	s.follow(conversation)
	for _, out := range s.panel.Events(snd, snd.ArtifactBase(), e) {
		if err := sendEvent(snd, out); err != nil {
			return err
		}
	}
	return nil
}

// userMessage shows the panel a message another front end sent. The
// panel drew its own messages as they were typed; opentask renders
// user-role text events as assistant bubbles, so other front ends'
// messages travel as a CUSTOM event that panels may render and others
// ignore.
func (s *Sync) userMessage(snd bridge.Sender, c transcript.Change) error {
	if c.Item.Origin == tools.OriginPanel || c.Conversation != s.w.ActiveConversation() {
		return nil
	}
	s.follow(c.Conversation)
	return sendEvent(snd, agui.UserMessage(c.Item.Text, string(c.Item.Origin)))
}

// sendSnapshot sends snap and remembers that the panel shows it; unasked
// says the panel did not ask for it on this connection.
func (s *Sync) sendSnapshot(snd bridge.Sender, snap session.Snapshot, unasked bool) error {
	if err := snd.Send(snapshotFrame(snap, snd.ArtifactBase(), s.panel)); err != nil {
		return err
	}
	s.mu.Lock()
	s.shown, s.hasShown, s.unsure = snap.ID, true, unasked
	s.mu.Unlock()
	return nil
}

// follow notes that the panel, shown a new conversation before it had an
// id, now watches it under the id its first stored message gave it.
func (s *Sync) follow(id string) {
	s.mu.Lock()
	if s.hasShown && s.shown == "" {
		s.shown = id
	}
	s.mu.Unlock()
}

// sendEvent encodes one AG-UI event for the panel.
func sendEvent(snd bridge.Sender, e events.Event) error {
	b, err := e.ToJSON()
	if err != nil {
		return err
	}
	return snd.Send(wire.ChatEvent{Event: b})
}

// panelApprovals are the pending requests the panel may answer: not those
// only infer's terminal can (network hosts).
func panelApprovals(all []session.Approval) []session.Approval {
	out := all[:0:0]
	for _, a := range all {
		if !a.LocalOnly {
			out = append(out, a)
		}
	}
	return out
}

// approvalFrame is the request as the panel shows it. opentask shows
// only "Approve <tool_name>?" and the arguments, so a call an MCP client
// made says so in the tool's name: the person must know who asks before
// letting it act in their browser. The panel's own requests keep the bare
// name, which the extension may match against what it asked for.
func approvalFrame(a session.Approval) wire.ApprovalRequest {
	name := a.Call.Name
	if a.Call.Origin == tools.OriginMCP {
		name += " for an MCP client"
	}
	return wire.ApprovalRequest{RequestID: a.ID, ToolName: name, ToolArgs: a.Call.Args}
}

// snapshotFrame is the conversation as the panel reads it: its messages
// in the stored shape, and each answered call's outcome beside them. A
// segment still streaming is left out: the panel gets it live.
func snapshotFrame(snap session.Snapshot, artifactBase string, panel *agui.Panel) wire.ConversationSnapshot {
	tr := snap.Transcript.Settled()
	all := tr.Messages()
	msgs := make([]wire.Message, 0, len(all))
	for _, m := range all {
		wm := wire.Message{Role: string(m.Role), Content: panel.Content(m.Content, artifactBase), ToolCallID: m.ToolCallID, Reasoning: m.Reasoning}
		for _, c := range m.ToolCalls {
			wm.ToolCalls = append(wm.ToolCalls, wire.ToolCall{ID: c.ID, Type: "function", Function: wire.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
		}
		msgs = append(msgs, wm)
	}
	results := map[string]bool{}
	for _, it := range tr.Items {
		if it.Kind == transcript.Tool && it.Done && !it.Call.Unreported {
			results[it.ID] = it.Call.OK
		}
	}
	return wire.ConversationSnapshot{Messages: msgs, ToolResults: results}
}

// Connected makes snd the live connection, tells it the mode, and re-sends
// pending approval requests oldest first (opentask shows one at a time).
func (s *Sync) Connected(snd bridge.Sender, extensionVersion string) {
	s.mu.Lock()
	s.live = snd
	s.inflight = map[string]bool{}
	s.mu.Unlock()
	// The contract lets the panel pick what it shows, and it does, by
	// resuming after every reconnect what the person picked. A panel that
	// picked nothing keeps whatever it showed before, which after an infer
	// restart (or a /new while it was away) is a transcript the model no
	// longer has. Only then is the active conversation's snapshot sent
	// unasked; a resume that follows replaces it. It goes before the mode
	// frame, so a client can tell it from the answer to a request of its
	// own, which always comes after.
	s.mu.Lock()
	stale := !s.hasShown || s.unsure || s.shown != s.w.ActiveConversation()
	s.mu.Unlock()
	if stale {
		if err := s.sendSnapshot(snd, s.w.Snapshot(), false); err != nil {
			return
		}
	}
	if err := snd.Send(wire.Mode{Mode: string(s.w.Mode())}); err != nil {
		return
	}
	for _, a := range panelApprovals(s.w.PendingApprovals()) {
		if snd.Send(approvalFrame(a)) != nil {
			return
		}
	}
}

// ListConversations answers with stored conversations, newest first.
func (s *Sync) ListConversations(snd bridge.Sender) {
	metas, err := s.w.Conversations()
	if err != nil {
		s.log.Warn("listing conversations", "err", err)
	}
	list := make([]wire.ConversationInfo, 0, len(metas))
	for _, m := range metas {
		list = append(list, wire.ConversationInfo{ID: m.ID, Title: m.Title, UpdatedAt: m.UpdatedAt.UTC().Format(time.RFC3339), MessageCount: m.MessageCount})
	}
	_ = snd.Send(wire.Conversations{Conversations: list})
}

// ResumeConversation makes a stored conversation active; the workspace's
// ConversationChanged answers with its snapshot. Unknown or empty ids are
// ignored, as the contract says.
func (s *Sync) ResumeConversation(snd bridge.Sender, id string) {
	s.ask()
	if _, err := s.w.Resume(id); err != nil {
		s.answered() // nothing was published
		s.log.Debug("panel resume ignored", "id", id, "err", err)
	}
}

// ask notes that the panel asked for a conversation's snapshot, which the
// next ConversationChanged answers; answered takes one such note, and
// reports whether there was one. The snapshot the panel asked for is no
// unasked one (see unsure).
func (s *Sync) ask() {
	s.mu.Lock()
	s.asked++
	s.mu.Unlock()
}

func (s *Sync) answered() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.asked == 0 {
		return false
	}
	s.asked--
	return true
}

// NewSession starts a fresh conversation; the workspace's
// ConversationChanged answers with its empty snapshot. It runs
// synchronously in the read loop, so a user_message right after it lands
// in the new conversation.
func (s *Sync) NewSession(snd bridge.Sender) {
	s.ask()
	s.w.NewSession()
}

// UserMessage queues the panel's message; "/clear" and "/cls" start a new
// conversation and are answered with its empty snapshot. A message the
// workspace refuses (too many waiting, too large) is answered with a
// RefusedEvent chat event, so that it is never lost silently: the panel can
// show why and give the text back to the person.
func (s *Sync) UserMessage(snd bridge.Sender, content string) {
	if session.IsNewSessionCommand(content) {
		s.NewSession(snd)
		return
	}
	err := s.w.Send(content, tools.OriginPanel)
	if err == nil {
		return
	}
	if strings.TrimSpace(content) == "" {
		s.log.Debug("panel sent an empty message; ignored")
		return
	}
	s.logRefused(err, len(content))
	if err := sendEvent(snd, agui.Refused(err.Error(), preview(content), len(content))); err != nil {
		s.log.Debug("panel: sending a refusal notice", "err", err)
	}
}

// MaxRefusedPreview is how much of a refused message is sent back.
const MaxRefusedPreview = 4 << 10

func preview(content string) string {
	if len(content) <= MaxRefusedPreview {
		return content
	}
	cut := content[:MaxRefusedPreview]
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	return cut + "…"
}

// refusalLogInterval is how often a flood of refused panel messages is
// summed up in the log.
const refusalLogInterval = 10 * time.Second

// logRefused logs a refused panel message, unless one was logged less than
// refusalLogInterval ago: then it is only counted, and the count goes out
// with the next line (or at Close).
func (s *Sync) logRefused(err error, size int) {
	now := time.Now()
	s.mu.Lock()
	if now.Before(s.refusedQuietUntil) {
		s.refusedCount++
		s.mu.Unlock()
		return
	}
	s.refusedQuietUntil = now.Add(refusalLogInterval)
	s.mu.Unlock()
	s.flushRefused()
	s.log.Warn("panel: refused a message", "err", err, "bytes", size)
}

// flushRefused logs how many refusals were counted but not logged.
func (s *Sync) flushRefused() {
	s.mu.Lock()
	n := s.refusedCount
	s.refusedCount = 0
	s.mu.Unlock()
	if n > 0 {
		s.log.Warn("panel: refused more messages (not logged one by one)", "count", n)
	}
}

// Interrupt stops the running turn.
func (s *Sync) Interrupt(snd bridge.Sender) { s.w.Interrupt() }

// ListHistory answers with the shared input history.
func (s *Sync) ListHistory(snd bridge.Sender) {
	h := s.w.History()
	if h == nil {
		h = []string{}
	}
	_ = snd.Send(wire.History{History: h})
}

// ListSkills answers with the discovered skills.
func (s *Sync) ListSkills(snd bridge.Sender) {
	sk := s.w.Skills()
	list := make([]wire.Skill, 0, len(sk))
	for _, k := range sk {
		list = append(list, wire.Skill{Name: k.Name, Description: k.Description, Scope: string(k.Scope)})
	}
	_ = snd.Send(wire.Skills{Skills: list})
}

// ListModels answers with the model list, the default first.
func (s *Sync) ListModels(snd bridge.Sender) {
	_ = snd.Send(wire.Models{Models: s.w.Models(), Current: s.w.Model()})
}

// SelectModel switches the model if it can; the workspace's
// SettingsChanged answers with a models frame whose current says whether
// it took effect.
func (s *Sync) SelectModel(snd bridge.Sender, model string) {
	if err := s.w.SelectModel(model); err != nil {
		s.log.Info("panel asked for an unusable model", "model", model, "err", err)
	}
}

// SetMode switches the mode; unknown modes are ignored, and the
// workspace's SettingsChanged answers either way.
func (s *Sync) SetMode(snd bridge.Sender, mode string) {
	s.w.SetMode(mode, tools.OriginPanel)
}

// ApprovalResponse answers an approval request; any action other than
// "approve" rejects, failing safe. Unknown or answered ids are no-ops.
func (s *Sync) ApprovalResponse(snd bridge.Sender, requestID, action string) {
	d := tools.Decision{Kind: tools.Deny, Reason: "rejected in the browser panel"}
	if action == wire.ActionApprove {
		d = tools.Decision{Kind: tools.AllowOnce}
	}
	s.w.Answer(requestID, d, tools.OriginPanel)
}

// ToolRequest runs the panel's tool call through the workspace pipeline on
// its own goroutine and answers with exactly one tool_result. A second
// request with an id still in flight is ignored: answering it would give
// that id two results.
func (s *Sync) ToolRequest(snd bridge.Sender, req wire.ToolRequest) {
	s.mu.Lock()
	inflight := s.inflight
	if inflight[req.ID] {
		s.mu.Unlock()
		s.log.Warn("panel reused a tool_request id that is still running; ignored", "id", fmt.Sprintf("%.64q", req.ID))
		return
	}
	inflight[req.ID] = true
	s.mu.Unlock()

	ctx, cancel := context.WithCancel(s.ctx)
	if done := snd.Done(); done != nil {
		go func() {
			select {
			case <-done:
				cancel() // nobody is left to read the result
			case <-ctx.Done():
			}
		}()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		out := s.w.RunTool(ctx, req.ID, req.ToolName, req.ToolArgs, tools.OriginPanel)
		res := wire.ToolResult{ID: req.ID, Success: out.Success, Output: out.Output, Error: out.Error}
		if !res.Success && res.Error == "" {
			res.Error = "tool call failed"
		}
		s.mu.Lock()
		delete(inflight, req.ID)
		s.mu.Unlock()
		if err := snd.Send(res); err != nil {
			s.log.Debug("tool_result dropped: connection closed", "id", req.ID)
		}
	}()
}
