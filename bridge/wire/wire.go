// Package wire defines the frames of the browser-extension bridge protocol
// (docs/protocol.md) and their lenient decoding.
//
// It is the single vocabulary shared by the bridge server and the extension
// simulator, so both sides agree on every field name by construction.
// Decoding follows the contract's forward-compatibility rule: a frame of an
// unknown type decodes to Unknown and is meant to be ignored, while a known
// frame whose fields have the wrong JSON types is an error, so callers never
// act on a half-understood frame.
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Frame types of the contract, plus Keepalive, which is ours.
const (
	TypeBrowserHello         = "browser_hello"
	TypeBrowserHelloAck      = "browser_hello_ack"
	TypeBrowserCommand       = "browser_command"
	TypeBrowserResult        = "browser_result"
	TypeListConversations    = "list_conversations"
	TypeConversations        = "conversations"
	TypeResumeConversation   = "resume_conversation"
	TypeConversationSnapshot = "conversation_snapshot"
	TypeNewSession           = "new_session"
	TypeChatEvent            = "chat_event"
	TypeUserMessage          = "user_message"
	TypeInterrupt            = "interrupt"
	TypeInterrupted          = "interrupted"
	TypeListHistory          = "list_history"
	TypeHistory              = "history"
	TypeListSkills           = "list_skills"
	TypeSkills               = "skills"
	TypeListModels           = "list_models"
	TypeModels               = "models"
	TypeSelectModel          = "select_model"
	TypeMode                 = "mode"
	TypeSetMode              = "set_mode"
	TypeApprovalRequest      = "approval_request"
	TypeApprovalResponse     = "approval_response"
	TypeApprovalResolved     = "approval_resolved"
	TypeToolRequest          = "tool_request"
	TypeToolResult           = "tool_result"

	// TypeKeepalive is infer's application-level keepalive. The contract
	// requires extensions to ignore unknown types, and an MV3 service worker
	// stays alive on message traffic, so a frame nobody interprets is the
	// cheapest way to keep the extension's worker from being suspended.
	TypeKeepalive = "infer_keepalive"
)

// Browser command actions.
const (
	ActionNavigate   = "navigate"
	ActionClick      = "click"
	ActionType       = "type"
	ActionRead       = "read"
	ActionScreenshot = "screenshot"
	ActionTabs       = "tabs"
)

// Approval actions. Anything other than ActionApprove is a rejection.
const (
	ActionApprove = "approve"
	ActionReject  = "reject"
)

// Frame is any decoded frame. FrameType returns its type discriminator.
type Frame interface {
	FrameType() string
}

// BrowserHello is the extension's first frame: it authenticates the socket.
type BrowserHello struct {
	Token            string `json:"token"`
	ExtensionVersion string `json:"extension_version"`
}

// BrowserHelloAck tells the extension its hello was accepted.
type BrowserHelloAck struct{}

// BrowserCommand asks the extension to act in the controlled tab. Only the
// fields relevant to Action are set.
type BrowserCommand struct {
	ID         string `json:"id"`
	Action     string `json:"action"`
	URL        string `json:"url,omitempty"`
	Selector   string `json:"selector,omitempty"`
	Text       string `json:"text,omitempty"`
	PressEnter bool   `json:"press_enter,omitempty"`
	TimeoutMS  int64  `json:"timeout_ms,omitempty"`
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

// ResumeConversation makes a stored conversation the active one.
type ResumeConversation struct {
	ID string `json:"id"`
}

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

// NewSession starts a fresh conversation.
type NewSession struct{}

// ChatEvent carries one AG-UI event of the active conversation, already
// encoded, so the bridge never re-encodes what the workspace produced.
type ChatEvent struct {
	Event json.RawMessage `json:"event"`
}

// UserMessage is text the person typed into the panel.
type UserMessage struct {
	Content string `json:"content"`
}

// Interrupt stops the running turn.
type Interrupt struct{}

// Interrupted tells the panel a turn ended cancelled.
type Interrupted struct{}

// ListHistory asks for the shared input history.
type ListHistory struct{}

// History is the shared input history, oldest first.
type History struct {
	History []string `json:"history"`
}

// ListSkills asks for the merged skill list.
type ListSkills struct{}

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

// ListModels asks for the configured model ids.
type ListModels struct{}

// Models lists provider/model ids; the first is the default.
type Models struct {
	Models  []string `json:"models"`
	Current string   `json:"current"`
}

// SelectModel switches the active model.
type SelectModel struct {
	Model string `json:"model"`
}

// Mode reports the agent mode.
type Mode struct {
	Mode string `json:"mode"`
}

// SetMode switches the agent mode.
type SetMode struct {
	Mode string `json:"mode"`
}

// ApprovalRequest asks the person to approve a tool call.
type ApprovalRequest struct {
	RequestID string `json:"request_id"`
	ToolName  string `json:"tool_name"`
	ToolArgs  string `json:"tool_args"`
}

// ApprovalResponse is the person's decision on an approval request.
type ApprovalResponse struct {
	RequestID string `json:"request_id"`
	Action    string `json:"action"`
}

// ApprovalResolved tells the panel a request is no longer pending.
type ApprovalResolved struct {
	RequestID string `json:"request_id"`
}

// ToolRequest is the extension invoking one of infer's tools.
type ToolRequest struct {
	ID       string `json:"id"`
	ToolName string `json:"tool_name"`
	ToolArgs string `json:"tool_args"`
}

// ToolResult is the single answer to a ToolRequest.
type ToolResult struct {
	ID      string `json:"id"`
	Success bool   `json:"success"`
	Output  string `json:"output"`
	Error   string `json:"error"`
}

// Keepalive is infer's application-level keepalive; receivers ignore it.
type Keepalive struct{}

// Unknown is a frame whose type this version does not know. The contract
// says to ignore it; it is returned rather than an error so callers can log
// it at a low level without treating it as malformed.
type Unknown struct {
	Type string `json:"-"`
}

// FrameType implementations.
func (BrowserHello) FrameType() string         { return TypeBrowserHello }
func (BrowserHelloAck) FrameType() string      { return TypeBrowserHelloAck }
func (BrowserCommand) FrameType() string       { return TypeBrowserCommand }
func (BrowserResult) FrameType() string        { return TypeBrowserResult }
func (ListConversations) FrameType() string    { return TypeListConversations }
func (Conversations) FrameType() string        { return TypeConversations }
func (ResumeConversation) FrameType() string   { return TypeResumeConversation }
func (ConversationSnapshot) FrameType() string { return TypeConversationSnapshot }
func (NewSession) FrameType() string           { return TypeNewSession }
func (ChatEvent) FrameType() string            { return TypeChatEvent }
func (UserMessage) FrameType() string          { return TypeUserMessage }
func (Interrupt) FrameType() string            { return TypeInterrupt }
func (Interrupted) FrameType() string          { return TypeInterrupted }
func (ListHistory) FrameType() string          { return TypeListHistory }
func (History) FrameType() string              { return TypeHistory }
func (ListSkills) FrameType() string           { return TypeListSkills }
func (Skills) FrameType() string               { return TypeSkills }
func (ListModels) FrameType() string           { return TypeListModels }
func (Models) FrameType() string               { return TypeModels }
func (SelectModel) FrameType() string          { return TypeSelectModel }
func (Mode) FrameType() string                 { return TypeMode }
func (SetMode) FrameType() string              { return TypeSetMode }
func (ApprovalRequest) FrameType() string      { return TypeApprovalRequest }
func (ApprovalResponse) FrameType() string     { return TypeApprovalResponse }
func (ApprovalResolved) FrameType() string     { return TypeApprovalResolved }
func (ToolRequest) FrameType() string          { return TypeToolRequest }
func (ToolResult) FrameType() string           { return TypeToolResult }
func (Keepalive) FrameType() string            { return TypeKeepalive }
func (u Unknown) FrameType() string            { return u.Type }

// ErrMalformed wraps every decoding failure, so callers can tell a bad frame
// (log and drop) from a transport failure.
var ErrMalformed = errors.New("malformed frame")

// factories maps each known type to a constructor of its zero frame. Frames
// without fields still go through json.Unmarshal so that a non-object body is
// rejected consistently.
var factories = map[string]func() any{
	TypeBrowserHello:         func() any { return new(BrowserHello) },
	TypeBrowserHelloAck:      func() any { return new(BrowserHelloAck) },
	TypeBrowserCommand:       func() any { return new(BrowserCommand) },
	TypeBrowserResult:        func() any { return new(BrowserResult) },
	TypeListConversations:    func() any { return new(ListConversations) },
	TypeConversations:        func() any { return new(Conversations) },
	TypeResumeConversation:   func() any { return new(ResumeConversation) },
	TypeConversationSnapshot: func() any { return new(ConversationSnapshot) },
	TypeNewSession:           func() any { return new(NewSession) },
	TypeChatEvent:            func() any { return new(ChatEvent) },
	TypeUserMessage:          func() any { return new(UserMessage) },
	TypeInterrupt:            func() any { return new(Interrupt) },
	TypeInterrupted:          func() any { return new(Interrupted) },
	TypeListHistory:          func() any { return new(ListHistory) },
	TypeHistory:              func() any { return new(History) },
	TypeListSkills:           func() any { return new(ListSkills) },
	TypeSkills:               func() any { return new(Skills) },
	TypeListModels:           func() any { return new(ListModels) },
	TypeModels:               func() any { return new(Models) },
	TypeSelectModel:          func() any { return new(SelectModel) },
	TypeMode:                 func() any { return new(Mode) },
	TypeSetMode:              func() any { return new(SetMode) },
	TypeApprovalRequest:      func() any { return new(ApprovalRequest) },
	TypeApprovalResponse:     func() any { return new(ApprovalResponse) },
	TypeApprovalResolved:     func() any { return new(ApprovalResolved) },
	TypeToolRequest:          func() any { return new(ToolRequest) },
	TypeToolResult:           func() any { return new(ToolResult) },
	TypeKeepalive:            func() any { return new(Keepalive) },
}

// PeekType returns a frame's type discriminator without decoding the rest.
func PeekType(data []byte) (string, error) {
	var head struct {
		Type *string `json:"type"`
	}
	if err := unmarshal(data, &head); err != nil {
		return "", fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if head.Type == nil {
		return "", fmt.Errorf("%w: no \"type\" field", ErrMalformed)
	}
	return *head.Type, nil
}

// Decode parses one frame. Unknown types decode to Unknown with a nil error;
// invalid JSON, a missing or non-string type, and known frames whose fields
// have the wrong JSON types are errors wrapping ErrMalformed. Frames read
// as encoding/json reads them (codec.go); a browser_result usually takes a
// one-pass path (fast.go) that yields exactly the same.
func Decode(data []byte) (Frame, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	if r, ok := decodeResultFast(data); ok {
		return r, nil
	}
	return decodeGeneric(data)
}

// decodeGeneric is Decode through the library alone (codec.go), for every
// frame the fast path leaves alone: in one pass when the frame starts with
// its type, as senders write it, and otherwise, or when that pass fails,
// by reading the type first and then the frame.
func decodeGeneric(data []byte) (Frame, error) {
	if typ, ok := firstType(data); ok {
		if mk, known := factories[typ]; known {
			if f, ok := decodeAs(data, typ, mk); ok && validate(f) == nil {
				return f, nil
			}
		}
	}
	typ, err := PeekType(data)
	if err != nil {
		return nil, err
	}
	mk, ok := factories[typ]
	if !ok {
		return Unknown{Type: typ}, nil
	}
	v := mk()
	if err := unmarshal(data, v); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, typ, err)
	}
	f := deref(v)
	if err := validate(f); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, typ, err)
	}
	return f, nil
}

// deref turns the pointer a factory made back into the value type, so that
// callers switch on value types only.
func deref(v any) Frame {
	switch f := v.(type) {
	case *BrowserHello:
		return *f
	case *BrowserHelloAck:
		return *f
	case *BrowserCommand:
		return *f
	case *BrowserResult:
		return *f
	case *ListConversations:
		return *f
	case *Conversations:
		return *f
	case *ResumeConversation:
		return *f
	case *ConversationSnapshot:
		return *f
	case *NewSession:
		return *f
	case *ChatEvent:
		return *f
	case *UserMessage:
		return *f
	case *Interrupt:
		return *f
	case *Interrupted:
		return *f
	case *ListHistory:
		return *f
	case *History:
		return *f
	case *ListSkills:
		return *f
	case *Skills:
		return *f
	case *ListModels:
		return *f
	case *Models:
		return *f
	case *SelectModel:
		return *f
	case *Mode:
		return *f
	case *SetMode:
		return *f
	case *ApprovalRequest:
		return *f
	case *ApprovalResponse:
		return *f
	case *ApprovalResolved:
		return *f
	case *ToolRequest:
		return *f
	case *ToolResult:
		return *f
	case *Keepalive:
		return *f
	}
	panic(fmt.Sprintf("wire: no deref for %T", v))
}

// validate checks what JSON types alone cannot: the ids a frame is matched
// by must be present, since a frame without one can never be answered or
// correlated.
func validate(f Frame) error {
	switch f := f.(type) {
	case BrowserCommand:
		if f.ID == "" {
			return errors.New("missing id")
		}
	case BrowserResult:
		if f.ID == "" {
			return errors.New("missing id")
		}
	case ToolRequest:
		if f.ID == "" {
			return errors.New("missing id")
		}
	case ToolResult:
		if f.ID == "" {
			return errors.New("missing id")
		}
	case ChatEvent:
		if len(f.Event) == 0 || f.Event[0] != '{' {
			return errors.New("event must be a JSON object")
		}
	}
	return nil
}

// Encode renders a frame as one JSON text message, with its type first.
func Encode(f Frame) ([]byte, error) {
	switch f := f.(type) {
	case BrowserResult:
		return encodeResult(f)
	}
	return encodeGeneric(f)
}

// encodeGeneric is Encode through the library alone (codec.go).
func encodeGeneric(f Frame) ([]byte, error) {
	return appendGeneric(nil, f)
}

// appendGeneric appends f to dst with the frame's type as its first
// member, as encoding/json would write the frame's members after it.
func appendGeneric(dst []byte, f Frame) ([]byte, error) {
	out, err := appendFrame(dst, f)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", f.FrameType(), err)
	}
	return out, nil
}

// AppendResult appends r to dst exactly as Encode(r) renders it, so that
// a sender of many results can reuse one buffer. On error dst's contents
// are unspecified and the result is nil.
func AppendResult(dst []byte, r BrowserResult) ([]byte, error) {
	return appendResult(dst, r)
}

// AppendCommand appends c to dst exactly as Encode(c) renders it, so that
// a connection can reuse one buffer for its commands.
func AppendCommand(dst []byte, c BrowserCommand) []byte {
	out, err := appendGeneric(dst, c)
	if err != nil {
		// Strings, a bool and an integer always encode.
		panic(fmt.Sprintf("wire: a browser command failed to encode: %v", err))
	}
	return out
}

// DecodeResult decodes data exactly as Decode would when it is a
// browser_result of the usual shape (the one-pass path of fast.go), without
// boxing it in a Frame. ok is false for anything else, including unusual
// or malformed results: hand those to Decode.
func DecodeResult(data []byte) (r BrowserResult, ok bool) {
	return decodeResultFast(bytes.TrimSpace(data))
}

// MustEncode is Encode for frames that cannot fail to encode (all of ours
// except ChatEvent with invalid raw JSON); it panics on error.
func MustEncode(f Frame) []byte {
	b, err := Encode(f)
	if err != nil {
		panic(err)
	}
	return b
}
