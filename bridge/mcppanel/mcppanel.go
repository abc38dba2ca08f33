// Package mcppanel is the side panel of an infer that only serves MCP
// clients: standalone `infer mcp`, which holds the bridge with no
// workspace, no model and no conversations.
//
// The extension's panel still talks to whichever infer holds the bridge,
// and it waits for answers: opentask sits on "Working…" until a run ends
// with a text message. So every request that expects a reply gets one
// (empty lists, the mode infer mcp runs in), and a message typed in the
// panel is answered with a short run saying why nobody can chat here and
// what to start instead. The MCP clients' calls are shown in its chat, as
// any infer shows them. Nothing the panel sends changes what infer mcp
// allows its MCP clients.
package mcppanel

import (
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync"

	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/bridge/agui"
	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/tools"
)

// Reply is the text a message typed in the panel is answered with.
const Reply = "This infer only serves MCP clients (`infer mcp`, started by another agent such as Claude Code or Codex): " +
	"it has no model and keeps no conversations, so nobody here can answer you.\n\n" +
	"To chat, run `infer` (or `infer serve`) in a project folder; this panel then talks to it."

// ToolRefusal is the error of every tool_request: the panel's own tool
// calls need a workspace, with its approvals, which infer mcp does not
// have.
const ToolRefusal = "this infer only serves MCP clients and runs no tools for the browser panel; run infer in a project to use them"

// thread names the runs that answer the panel: they belong to no
// conversation.
const thread = "infer-mcp"

// Panel answers the side panel for standalone infer mcp. Its zero value
// is not usable; call New.
type Panel struct {
	mode string
	log  *slog.Logger

	mu   sync.Mutex
	live bridge.Sender // the connection last connected; nil before any
	// saying keeps each run's events together: MCP clients' calls end
	// concurrently, and opentask's reducer mixes interleaved messages.
	saying sync.Mutex
}

var _ bridge.Panel = (*Panel)(nil)

// New returns the panel of an infer mcp running its MCP clients' calls in
// mode (mcp.standalone.mode), which the panel is told as the mode.
func New(mode string, log *slog.Logger) *Panel {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Panel{mode: mode, log: log}
}

// Connected clears whatever the panel showed before (a conversation of an
// infer that has since stopped, which no longer has it) and tells the
// mode.
func (p *Panel) Connected(s bridge.Sender, extensionVersion string) {
	p.mu.Lock()
	p.live = s
	p.mu.Unlock()
	if s.SendSnapshot(empty()) != nil {
		return
	}
	_ = s.SendMode(p.mode)
}

func empty() wire.ConversationSnapshot {
	return wire.ConversationSnapshot{Messages: []wire.Message{}}
}

// ListConversations answers with no conversations: none are kept here.
func (p *Panel) ListConversations(s bridge.Sender) {
	_ = s.SendConversations([]wire.ConversationInfo{})
}

// ResumeConversation ignores the id, as the contract says for an unknown
// one: this infer has no conversations. The panel was already sent an
// empty snapshot when it connected.
func (p *Panel) ResumeConversation(s bridge.Sender, id string) {}

// NewSession answers with the empty snapshot of a new conversation.
func (p *Panel) NewSession(s bridge.Sender) { _ = s.SendSnapshot(empty()) }

// UserMessage answers a typed message with a run holding Reply, so the
// panel leaves its working state and the person learns what to do; the
// new chat commands get an empty snapshot, as from any infer.
func (p *Panel) UserMessage(s bridge.Sender, content string) {
	if session.IsNewSessionCommand(content) {
		p.NewSession(s)
		return
	}
	if strings.TrimSpace(content) == "" {
		return
	}
	p.log.Info("the browser panel sent a message; this infer only serves MCP clients, so it was answered with how to chat")
	p.say(s, Reply)
}

// Ran shows an MCP client's call, once it ended, in the panel's chat
// ("MCP client · BrowserNavigate https://… — ✗ not run: …"), as infer does
// for calls through a workspace, and returns o unchanged: the person sees
// what another agent did, or tried, in their browser. Nothing is shown
// while no panel is connected; no turn ever runs here, so nothing can be
// interleaved with it.
func (p *Panel) Ran(o tools.Outcome) tools.Outcome {
	p.mu.Lock()
	s := p.live
	p.mu.Unlock()
	if s == nil {
		return o
	}
	// The line quotes the client's arguments and the page's answer; the
	// panel renders Markdown, which must not turn them into an image it
	// fetches or a link in infer's voice.
	p.say(s, wire.PlainMarkdown(session.OutsideCallEnded(o).Line()))
	return o
}

// say sends text as a whole run of one assistant message.
func (p *Panel) say(s bridge.Sender, text string) {
	p.saying.Lock()
	defer p.saying.Unlock()
	run := newID()
	msg := "mcp-only-" + run
	for _, e := range agui.Say(thread, run, msg, text) {
		b, err := e.ToJSON()
		if err != nil {
			p.log.Error("panel: encoding a chat event", "err", err)
			return
		}
		if s.SendChatEvent(b) != nil {
			return
		}
	}
}

// Interrupt does nothing: no turn ever runs here.
func (p *Panel) Interrupt(s bridge.Sender) {}

// ListHistory answers with an empty history.
func (p *Panel) ListHistory(s bridge.Sender) { _ = s.SendHistory([]string{}) }

// ListSkills answers with no skills.
func (p *Panel) ListSkills(s bridge.Sender) { _ = s.SendSkills([]wire.Skill{}) }

// ListModels answers with no models: there is no model here.
func (p *Panel) ListModels(s bridge.Sender) { _ = s.SendModels([]string{}, "") }

// SelectModel answers with the same empty list, whose empty current says
// the switch did not take effect.
func (p *Panel) SelectModel(s bridge.Sender, model string) { p.ListModels(s) }

// SetMode answers with the mode unchanged: mcp.standalone.mode is the
// person's choice in config.yaml, and a web page can drive the panel.
func (p *Panel) SetMode(s bridge.Sender, mode string) {
	if mode != p.mode {
		p.log.Info("the browser panel asked for another mode; infer mcp keeps mcp.standalone.mode", "asked", mode, "mode", p.mode)
	}
	_ = s.SendMode(p.mode)
}

// ApprovalResponse ignores the answer: nothing here ever asks.
func (p *Panel) ApprovalResponse(s bridge.Sender, requestID, action string) {}

// ToolRequest answers with one failed result, as the contract wants for
// every request id.
func (p *Panel) ToolRequest(s bridge.Sender, req wire.ToolRequest) {
	_ = s.SendToolResult(wire.ToolResult{ID: req.ID, Success: false, Error: ToolRefusal})
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
