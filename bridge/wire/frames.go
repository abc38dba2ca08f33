package wire

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/infer-workspace/infer/session/browser"
)

// Frame is any decoded frame. FrameType returns its type discriminator, the
// "type" member it goes out with; each frame type's method is the only
// place its name is spelled.
type Frame interface {
	FrameType() string
}

// Side is the end of the connection that sends a frame type. The contract
// gives every type exactly one sender, so a frame arriving from the wrong
// side is an echo or a confused peer, never a request.
type Side int

// The two ends of the connection.
const (
	// Extension marks frames the browser extension sends.
	Extension Side = iota + 1
	// Infer marks frames infer sends.
	Infer
)

// kinds is the registry of known frame types: adding a frame type means
// writing its struct and FrameType method once and one line here.
var kinds = register(
	frame[BrowserHello](Extension),
	frame[BrowserHelloAck](Infer),
	frame[BrowserCommand](Infer),
	frame[BrowserResult](Extension),
	frame[ListConversations](Extension),
	frame[Conversations](Infer),
	frame[ResumeConversation](Extension),
	frame[ConversationSnapshot](Infer),
	frame[NewSession](Extension),
	frame[ChatEvent](Infer),
	frame[UserMessage](Extension),
	frame[Interrupt](Extension),
	frame[Interrupted](Infer),
	frame[ListHistory](Extension),
	frame[History](Infer),
	frame[ListSkills](Extension),
	frame[Skills](Infer),
	frame[ListModels](Extension),
	frame[Models](Infer),
	frame[SelectModel](Extension),
	frame[Mode](Infer),
	frame[SetMode](Extension),
	frame[ApprovalRequest](Infer),
	frame[ApprovalResponse](Extension),
	frame[ApprovalResolved](Infer),
	frame[ToolRequest](Extension),
	frame[ToolResult](Infer),
	frame[Keepalive](Infer),
)

// kind is what the decoder needs to know about one frame type. Frames
// without fields still go through the JSON decoder so that a non-object
// body is rejected consistently.
type kind struct {
	typ  string
	from Side
	// new returns a pointer to a zero frame for the decoder to fill;
	// value turns that pointer back into the frame, so that callers
	// switch on value types only.
	new   func() any
	value func(any) Frame
}

// frame describes the frame type F, sent by from.
func frame[F Frame](from Side) kind {
	var zero F
	return kind{
		typ:   zero.FrameType(),
		from:  from,
		new:   func() any { return new(F) },
		value: func(p any) Frame { return *p.(*F) },
	}
}

// register indexes kinds by type name. Two frame types answering to one
// name would make decoding ambiguous, so that is a panic at start-up.
func register(ks ...kind) map[string]kind {
	m := make(map[string]kind, len(ks))
	for _, k := range ks {
		if _, dup := m[k.typ]; dup {
			panic(fmt.Sprintf("wire: two frame types are named %q", k.typ))
		}
		m[k.typ] = k
	}
	return m
}

// SentBy reports which end sends frames of f's type; zero for a frame of a
// type this version does not know.
func SentBy(f Frame) Side {
	return kinds[f.FrameType()].from
}

// checked is implemented by frames with rules JSON types alone cannot
// express.
type checked interface {
	check() error
}

// validate applies f's own rules, if it has any.
func validate(f Frame) error {
	if c, ok := f.(checked); ok {
		return c.check()
	}
	return nil
}

// listed is implemented by frames holding lists that opentask iterates
// without checking for null.
type listed interface {
	nonNull() Frame
}

// NonNull returns f with every list the extension iterates set to an empty
// one where it is nil, so that it goes out as [] rather than null. Senders
// call it on every frame they send to the extension.
func NonNull(f Frame) Frame {
	if l, ok := f.(listed); ok {
		return l.nonNull()
	}
	return f
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// errMissingID rejects a frame that is matched by an id it lacks: it could
// never be answered or correlated.
var errMissingID = errors.New("missing id")

// Approval actions. Anything other than ActionApprove is a rejection.
const (
	ActionApprove = "approve"
	ActionReject  = "reject"
)

// BrowserHello is the extension's first frame: it authenticates the socket.
type BrowserHello struct {
	Token            string `json:"token"`
	ExtensionVersion string `json:"extension_version"`
}

// FrameType implements Frame.
func (BrowserHello) FrameType() string { return "browser_hello" }

// BrowserHelloAck tells the extension its hello was accepted.
type BrowserHelloAck struct{}

// FrameType implements Frame.
func (BrowserHelloAck) FrameType() string { return "browser_hello_ack" }

// BrowserCommand asks the extension to act in the controlled tab. Only the
// fields relevant to Action are set. Action is the domain's own type: its
// values are the wire's names, so the vocabulary is written once, in
// session/browser.
type BrowserCommand struct {
	ID         string         `json:"id"`
	Action     browser.Action `json:"action"`
	URL        string         `json:"url,omitempty"`
	Selector   string         `json:"selector,omitempty"`
	Text       string         `json:"text,omitempty"`
	PressEnter bool           `json:"press_enter,omitempty"`
	TimeoutMS  int64          `json:"timeout_ms,omitempty"`
}

// FrameType implements Frame.
func (BrowserCommand) FrameType() string { return "browser_command" }

func (c BrowserCommand) check() error {
	if c.ID == "" {
		return errMissingID
	}
	return nil
}

// BrowserResult is the extension's single answer to a BrowserCommand.
//
// Content is a pointer because opentask 1.12.1 sends `content: null` for a
// read of a missing element, which is distinct from an empty read.
type BrowserResult struct {
	ID            string            `json:"id"`
	URL           string            `json:"url"`
	Title         string            `json:"title"`
	Content       *string           `json:"content"`
	Events        []json.RawMessage `json:"events"`
	Error         string            `json:"error"`
	Image         string            `json:"image,omitempty"`
	ImageMIMEType string            `json:"image_mime_type,omitempty"`
	Tabs          []Tab             `json:"tabs,omitempty"`
}

// FrameType implements Frame.
func (BrowserResult) FrameType() string { return "browser_result" }

func (r BrowserResult) check() error {
	if r.ID == "" {
		return errMissingID
	}
	return nil
}

// Tab is one open browser tab in a tabs result.
//
// Controlled is an additive field of ours (the contract lets receivers ignore
// unknown fields): opentask's Active means the focused tab, which is not
// always the tab the agent drives.
type Tab struct {
	Index      int    `json:"index"`
	URL        string `json:"url"`
	Title      string `json:"title"`
	Active     bool   `json:"active"`
	Controlled bool   `json:"controlled,omitempty"`
}

// ListConversations asks for the stored conversations.
type ListConversations struct{}

// FrameType implements Frame.
func (ListConversations) FrameType() string { return "list_conversations" }

// ConversationInfo is one row of a Conversations frame.
type ConversationInfo struct {
	ID           string `json:"id"`
	Title        string `json:"title"`
	UpdatedAt    string `json:"updated_at"`
	MessageCount int    `json:"message_count"`
}

// Conversations lists stored conversations, newest first.
type Conversations struct {
	Conversations []ConversationInfo `json:"conversations"`
}

// FrameType implements Frame.
func (Conversations) FrameType() string { return "conversations" }

func (c Conversations) nonNull() Frame {
	c.Conversations = orEmpty(c.Conversations)
	return c
}

// ResumeConversation makes a stored conversation the active one.
type ResumeConversation struct {
	ID string `json:"id"`
}

// FrameType implements Frame.
func (ResumeConversation) FrameType() string { return "resume_conversation" }

// ToolCall is an assistant message's request to run a tool, in the
// OpenAI-style shape the extension rebuilds tool rows from.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the tool and carries its raw JSON arguments.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Message is one conversation message as the panel reads it. Content stays a
// string: opentask renders an array of parts as an empty bubble.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Reasoning  string     `json:"reasoning,omitempty"`
}

// ConversationSnapshot is the whole history of the active conversation.
type ConversationSnapshot struct {
	Messages    []Message       `json:"messages"`
	ToolResults map[string]bool `json:"tool_results,omitempty"`
}

// FrameType implements Frame.
func (ConversationSnapshot) FrameType() string { return "conversation_snapshot" }

func (s ConversationSnapshot) nonNull() Frame {
	s.Messages = orEmpty(s.Messages)
	return s
}

// NewSession starts a fresh conversation.
type NewSession struct{}

// FrameType implements Frame.
func (NewSession) FrameType() string { return "new_session" }

// ChatEvent carries one AG-UI event of the active conversation, already
// encoded, so the bridge never re-encodes what the workspace produced.
type ChatEvent struct {
	Event json.RawMessage `json:"event"`
}

// FrameType implements Frame.
func (ChatEvent) FrameType() string { return "chat_event" }

func (e ChatEvent) check() error {
	if len(e.Event) == 0 || e.Event[0] != '{' {
		return errors.New("event must be a JSON object")
	}
	return nil
}

// UserMessage is text the person typed into the panel.
type UserMessage struct {
	Content string `json:"content"`
}

// FrameType implements Frame.
func (UserMessage) FrameType() string { return "user_message" }

// Interrupt stops the running turn.
type Interrupt struct{}

// FrameType implements Frame.
func (Interrupt) FrameType() string { return "interrupt" }

// Interrupted tells the panel a turn ended cancelled.
type Interrupted struct{}

// FrameType implements Frame.
func (Interrupted) FrameType() string { return "interrupted" }

// ListHistory asks for the shared input history.
type ListHistory struct{}

// FrameType implements Frame.
func (ListHistory) FrameType() string { return "list_history" }

// History is the shared input history, oldest first.
type History struct {
	History []string `json:"history"`
}

// FrameType implements Frame.
func (History) FrameType() string { return "history" }

func (h History) nonNull() Frame {
	h.History = orEmpty(h.History)
	return h
}

// ListSkills asks for the merged skill list.
type ListSkills struct{}

// FrameType implements Frame.
func (ListSkills) FrameType() string { return "list_skills" }

// Skill is one entry of a Skills frame.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Scope       string `json:"scope"`
}

// Skills lists the discovered skills.
type Skills struct {
	Skills []Skill `json:"skills"`
}

// FrameType implements Frame.
func (Skills) FrameType() string { return "skills" }

func (s Skills) nonNull() Frame {
	s.Skills = orEmpty(s.Skills)
	return s
}

// ListModels asks for the configured model ids.
type ListModels struct{}

// FrameType implements Frame.
func (ListModels) FrameType() string { return "list_models" }

// Models lists provider/model ids; the first is the default.
type Models struct {
	Models  []string `json:"models"`
	Current string   `json:"current"`
}

// FrameType implements Frame.
func (Models) FrameType() string { return "models" }

func (m Models) nonNull() Frame {
	m.Models = orEmpty(m.Models)
	return m
}

// SelectModel switches the active model.
type SelectModel struct {
	Model string `json:"model"`
}

// FrameType implements Frame.
func (SelectModel) FrameType() string { return "select_model" }

// Mode reports the agent mode.
type Mode struct {
	Mode string `json:"mode"`
}

// FrameType implements Frame.
func (Mode) FrameType() string { return "mode" }

// SetMode switches the agent mode.
type SetMode struct {
	Mode string `json:"mode"`
}

// FrameType implements Frame.
func (SetMode) FrameType() string { return "set_mode" }

// ApprovalRequest asks the person to approve a tool call.
type ApprovalRequest struct {
	RequestID string `json:"request_id"`
	ToolName  string `json:"tool_name"`
	ToolArgs  string `json:"tool_args"`
}

// FrameType implements Frame.
func (ApprovalRequest) FrameType() string { return "approval_request" }

// ApprovalResponse is the person's decision on an approval request.
type ApprovalResponse struct {
	RequestID string `json:"request_id"`
	Action    string `json:"action"`
}

// FrameType implements Frame.
func (ApprovalResponse) FrameType() string { return "approval_response" }

// ApprovalResolved tells the panel a request is no longer pending.
type ApprovalResolved struct {
	RequestID string `json:"request_id"`
}

// FrameType implements Frame.
func (ApprovalResolved) FrameType() string { return "approval_resolved" }

// ToolRequest is the extension invoking one of infer's tools.
type ToolRequest struct {
	ID       string `json:"id"`
	ToolName string `json:"tool_name"`
	ToolArgs string `json:"tool_args"`
}

// FrameType implements Frame.
func (ToolRequest) FrameType() string { return "tool_request" }

func (r ToolRequest) check() error {
	if r.ID == "" {
		return errMissingID
	}
	return nil
}

// ToolResult is the single answer to a ToolRequest.
type ToolResult struct {
	ID      string `json:"id"`
	Success bool   `json:"success"`
	Output  string `json:"output"`
	Error   string `json:"error"`
}

// FrameType implements Frame.
func (ToolResult) FrameType() string { return "tool_result" }

func (r ToolResult) check() error {
	if r.ID == "" {
		return errMissingID
	}
	return nil
}

// Keepalive is infer's application-level keepalive; receivers ignore it.
//
// The contract requires extensions to ignore unknown types, and an MV3
// service worker stays alive on message traffic, so a frame nobody
// interprets is the cheapest way to keep the extension's worker from being
// suspended.
type Keepalive struct{}

// FrameType implements Frame.
func (Keepalive) FrameType() string { return "infer_keepalive" }

// Unknown is a frame whose type this version does not know. The contract
// says to ignore it; it is returned rather than an error so callers can log
// it at a low level without treating it as malformed.
type Unknown struct {
	Type string `json:"-"`
}

// FrameType implements Frame.
func (u Unknown) FrameType() string { return u.Type }
