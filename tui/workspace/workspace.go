// Package workspace is the workspace as the terminal UI sees it: the
// methods the TUI calls and the events it listens to, in the TUI's own small
// types. Keeping this port separate lets the TUI be built and tested with a
// fake while the session package evolves, and keeps policy types (modes,
// decisions) behind one adapter instead of in every pane.
package workspace

import (
	"time"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
)

// Workspace is every call the TUI makes. Implementations must be safe for
// concurrent use: the TUI calls them from tea.Cmds, never from Update.
type Workspace interface {
	// Subscribe opens a view of the event stream. The TUI subscribes once,
	// before it reads any state, so nothing that happens in between is lost.
	Subscribe() Subscription

	// Send submits a message typed at the terminal (queued when busy).
	Send(text string) error
	// Interrupt stops the running turn; a no-op when idle.
	Interrupt()
	// NewSession starts a fresh, empty conversation.
	NewSession() Snapshot
	// Resume makes a stored conversation the active one.
	Resume(id string) (Snapshot, error)
	// Snapshot returns the active conversation.
	Snapshot() Snapshot

	// Conversations lists stored conversations, newest first.
	Conversations() ([]store.Meta, error)
	// RenameConversation gives a conversation a title chosen by the person.
	RenameConversation(id, title string) error
	// PinConversation pins or unpins a conversation in the list.
	PinConversation(id string, pinned bool) error
	// DeleteConversation removes a stored conversation; deleting the
	// active one starts a new session first.
	DeleteConversation(id string) error

	// History is the shared input history, oldest first.
	History() []string
	// Skills lists the discovered skills.
	Skills() []Skill

	// Mode is the agent mode's canonical key (standard, plan, auto,
	// auto-with-judge); Modes lists them in cycling order.
	Mode() string
	Modes() []string
	// SetMode switches the mode; unknown names report false.
	SetMode(name string) (string, bool)
	// CycleMode moves to the next mode and returns it.
	CycleMode() string

	// Model, Models and SelectModel read and switch the model.
	Model() string
	Models() []string
	SelectModel(id string) error
	// Rejections lists what model id rejected this session (a parameter
	// now left out or sent in another form), shown in /model's details.
	Rejections(id string) []string
	// Effort and SetEffort read and set the reasoning effort.
	Effort() string
	SetEffort(level string) error
	// Temperature and SetTemperature read and set the sampling
	// temperature; nil is the provider's default.
	Temperature() *float64
	SetTemperature(t *float64) error

	// BrowserStatus is the extension connection's latest state.
	BrowserStatus() browser.Status
	// BrowserView is the latest tabs, page and screenshot, for a view that
	// starts or resyncs after their events went by.
	BrowserView() BrowserView

	// PendingApprovals lists open approval requests, oldest first.
	PendingApprovals() []Approval
	// Answer decides an approval request; false when it was already
	// answered elsewhere (a harmless no-op).
	Answer(requestID string, d Decision) bool

	// Queue lists messages waiting for the running turn; Busy says whether
	// a turn runs.
	Queue() []string
	Busy() bool
}

// Subscription delivers events in batches: Ready fires when some are
// waiting, Drain takes them all.
type Subscription interface {
	Ready() <-chan struct{}
	Drain() []Event
	Close()
}

// Kind says what an Event reports. The values mirror session's kinds.
type Kind int

// Event kinds.
const (
	// KindChat carries one AG-UI event of the active conversation.
	KindChat Kind = iota
	// KindUserMessage: a user message entered the conversation (Text, Origin).
	KindUserMessage
	// KindQueue: the waiting messages changed (Queue).
	KindQueue
	// KindConversation: the active conversation changed (Snapshot).
	KindConversation
	// KindBusy: a turn started or ended (Busy).
	KindBusy
	// KindInterrupted: a turn ended cancelled.
	KindInterrupted
	// KindApprovalOpened and KindApprovalResolved track requests (Approval).
	KindApprovalOpened
	KindApprovalResolved
	// KindMode: the mode changed (Mode).
	KindMode
	// KindModel: the model changed (Model).
	KindModel
	// KindTitle: a conversation's title changed (Text, Conversation).
	KindTitle
	// KindBrowserStatus: the extension connection changed (Browser).
	KindBrowserStatus
	// KindBrowserCommand: a browser command finished (Command).
	KindBrowserCommand
	// KindNotice: a line for the person outside any turn (Text, Warn).
	KindNotice
	// KindResync: events were dropped; re-read all state.
	KindResync
	// KindToolDone: a tool call finished (Tool): its outcome and duration,
	// as the pipeline saw them.
	KindToolDone
	// KindBrowserTabs: the extension reported its open tabs (Tabs).
	KindBrowserTabs
	// KindBrowserPage: the controlled tab is on a page (Page).
	KindBrowserPage
	// KindScreenshot: the extension returned a screenshot (Screenshot).
	KindScreenshot
	// KindUsage: a turn of a conversation used tokens (Usage,
	// Conversation).
	KindUsage
)

// Origin says which front end an intent came from; tools defines the
// origins and how people read them (Label).
type Origin = tools.Origin

// Event is one thing that happened in the workspace.
type Event struct {
	Kind         Kind
	Conversation string
	Chat         events.Event
	Text         string
	// Warn marks a notice that needs the person's attention.
	Warn       bool
	Origin     Origin
	Queue      []string
	Snapshot   *Snapshot
	Approval   *Approval
	Mode       string
	Model      string
	Busy       bool
	Browser    browser.Status
	Command    browser.CommandRecord
	Tool       *ToolDone
	Tabs       []browser.Tab
	Page       *Page
	Screenshot *Screenshot
	Usage      Usage
}

// ToolDone is a finished tool call.
type ToolDone struct {
	CallID string
	Name   string
	OK     bool
	// Duration is how long the tool ran, without any wait for approval.
	Duration time.Duration
	// Artifacts are files the call saved, relative to the artifacts dir.
	Artifacts []string
}

// Page is the page the controlled tab shows.
type Page struct {
	URL, Title string
}

// Screenshot is the latest picture of the controlled tab, as encoded
// image bytes (PNG or JPEG, per MIME).
type Screenshot struct {
	Image []byte
	MIME  string
	URL   string
	At    time.Time
}

// Usage counts the tokens of one turn, or of several summed.
type Usage struct {
	Input, Output, Reasoning int
}

// Add returns the sum of two counts.
func (u Usage) Add(v Usage) Usage {
	return Usage{Input: u.Input + v.Input, Output: u.Output + v.Output, Reasoning: u.Reasoning + v.Reasoning}
}

// Zero reports whether nothing was counted.
func (u Usage) Zero() bool { return u == Usage{} }

// Snapshot is a conversation as stored.
type Snapshot struct {
	ID          string
	Title       string
	Messages    []store.Message
	ToolResults map[string]bool
	// Notices were recorded beside the messages (what the browser panel
	// did, for one); each one's After places it among Messages.
	Notices []store.Notice
}

// Call is the tool call an approval is about.
type Call struct {
	ID     string
	Name   string
	Args   string // raw JSON arguments
	Origin Origin
}

// Approval is one tool call waiting for the person.
type Approval struct {
	ID   string
	Call Call
	Why  string
	// JudgeReason is the judge's reason when auto-with-judge passed the
	// call on to the person.
	JudgeReason string
	// Options label the "always allow" grants the person may choose from,
	// narrowest first (Decision.Option indexes them); empty when none
	// applies, and then AllowAlways acts as AllowOnce.
	Options []string
	// Sandbox says where a command runs if approved: outside the sandbox
	// once, inside it for "always"; empty for other tools.
	Sandbox string
	Opened  time.Time
	// Decision and By are set on KindApprovalResolved.
	Decision Decision
	By       Origin
}

// DecisionKind is the person's answer.
type DecisionKind int

// Answers to an approval request.
const (
	// Deny refuses the call (Reason goes to the model).
	Deny DecisionKind = iota
	// AllowOnce runs this call only.
	AllowOnce
	// AllowAlways runs it and saves a grant so matching calls stop asking.
	AllowAlways
)

// Decision answers an approval request.
type Decision struct {
	Kind   DecisionKind
	Reason string
	// Option picks which of the request's Options AllowAlways saves.
	Option int
}

// Skill is one discovered skill, for "/" completion and /skills.
type Skill struct {
	Name        string
	Description string
	Scope       string
}

// Grant is one saved "always allow" permission, for /permissions.
type Grant struct {
	ID          string
	Description string // e.g. "Bash commands starting with `git commit`"
	Created     time.Time
}

// Grants lists and revokes saved permissions.
type Grants interface {
	List() ([]Grant, error)
	Revoke(id string) error
}

// BrowserView is the browser state the workspace last saw.
type BrowserView struct {
	Tabs       []browser.Tab
	Page       *Page
	Screenshot *Screenshot
}
