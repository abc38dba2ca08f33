package tui

import (
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/skills"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/tools/grants"
)

// Workspace is the part of *session.Workspace the terminal UI uses, in
// session's own types: the TUI reads the same events and values as every
// other front end, so nothing is translated twice. It is an interface only
// so tests can drive the TUI with a fake (a session.Feed stands in for the
// event stream). Implementations must be safe for concurrent use: the TUI
// calls them from tea.Cmds, never from Update. Each method is documented
// on *session.Workspace; the comments here say only what the TUI relies on.
type Workspace interface {
	// Subscribe opens a view of the event stream. The TUI subscribes once,
	// before it reads any state, so nothing in between is lost.
	Subscribe() *session.Subscription

	// Send submits a message (queued while a turn runs); the TUI always
	// sends as tools.OriginTerminal.
	Send(text string, from session.Origin) error
	// Interrupt stops the running turn; a no-op when idle.
	Interrupt()
	NewSession() session.Snapshot
	Resume(id string) (session.Snapshot, error)
	Snapshot() session.Snapshot

	Conversations() ([]store.Meta, error)
	RenameConversation(id, title string) error
	PinConversation(id string, pinned bool) error
	// DeleteConversation removes a stored conversation; deleting the
	// active one starts a new session first.
	DeleteConversation(id string) error

	History() []string
	Skills() []skills.Skill

	Mode() tools.Mode
	// SetMode switches the mode; an unknown name reports false.
	SetMode(name string, from session.Origin) (tools.Mode, bool)
	CycleMode() tools.Mode

	Model() string
	Models() []string
	SelectModel(id string) error
	// Rejections lists what a model rejected this session, for /model.
	Rejections(id string) []string
	Effort() llm.Effort
	SetEffort(level string) error
	// Temperature is nil for the provider's default.
	Temperature() *float64
	SetTemperature(t *float64) error

	BrowserStatus() browser.Status
	// BrowserView is the latest tabs, page and screenshot, for a view that
	// starts or resyncs after their events went by.
	BrowserView() session.BrowserView

	PendingApprovals() []session.Approval
	// Answer decides a request; false when it was already answered
	// elsewhere (a harmless no-op).
	Answer(requestID string, d tools.Decision, by session.Origin) bool

	Queue() []string
	Busy() bool
}

// Grants lists and revokes a project's saved permissions, for
// /permissions; *grants.Store is one.
type Grants interface {
	List() ([]grants.Grant, error)
	Revoke(id string) error
}

// The session's own types satisfy the TUI's ports as they are.
var (
	_ Workspace = (*session.Workspace)(nil)
	_ Grants    = (*grants.Store)(nil)
)
