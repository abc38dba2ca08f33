package panelsync

import (
	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/bridge/wire"
)

// Handle implements bridge.Panel: it routes each frame the panel sends to
// the method that answers it. Frames it does not list are ignored.
func (s *Sync) Handle(snd bridge.Sender, f wire.Frame) {
	switch f := f.(type) {
	case wire.ListConversations:
		s.ListConversations(snd)
	case wire.ResumeConversation:
		s.ResumeConversation(snd, f.ID)
	case wire.NewSession:
		s.NewSession(snd)
	case wire.UserMessage:
		s.UserMessage(snd, f.Content)
	case wire.Interrupt:
		s.Interrupt(snd)
	case wire.ListHistory:
		s.ListHistory(snd)
	case wire.ListSkills:
		s.ListSkills(snd)
	case wire.ListModels:
		s.ListModels(snd)
	case wire.SelectModel:
		s.SelectModel(snd, f.Model)
	case wire.SetMode:
		s.SetMode(snd, f.Mode)
	case wire.ApprovalResponse:
		s.ApprovalResponse(snd, f.RequestID, f.Action)
	case wire.ToolRequest:
		s.ToolRequest(snd, f)
	}
}
