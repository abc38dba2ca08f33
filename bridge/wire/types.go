package wire

// Frame type names, kept while callers move to the frames' own FrameType
// methods.
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
	TypeKeepalive            = "infer_keepalive"
)
