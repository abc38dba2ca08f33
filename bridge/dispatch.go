package bridge

import (
	"runtime/debug"

	"github.com/infer-workspace/infer/bridge/wire"
)

// toPanel hands one side-panel frame to the Panel, on the reader goroutine
// so frames are handled in arrival order. Frames only infer sends (a
// misbehaving or echoing peer) and a repeated hello are ignored.
func (c *conn) toPanel(f wire.Frame) {
	p := c.srv.panel
	if p == nil {
		c.log.Debug("bridge: no panel attached; ignored a panel frame", "type", f.FrameType())
		return
	}
	var call func()
	switch f := f.(type) {
	case wire.ListConversations:
		call = func() { p.ListConversations(c) }
	case wire.ResumeConversation:
		call = func() { p.ResumeConversation(c, f.ID) }
	case wire.NewSession:
		call = func() { p.NewSession(c) }
	case wire.UserMessage:
		call = func() { p.UserMessage(c, f.Content) }
	case wire.Interrupt:
		call = func() { p.Interrupt(c) }
	case wire.ListHistory:
		call = func() { p.ListHistory(c) }
	case wire.ListSkills:
		call = func() { p.ListSkills(c) }
	case wire.ListModels:
		call = func() { p.ListModels(c) }
	case wire.SelectModel:
		call = func() { p.SelectModel(c, f.Model) }
	case wire.SetMode:
		call = func() { p.SetMode(c, f.Mode) }
	case wire.ApprovalResponse:
		call = func() { p.ApprovalResponse(c, f.RequestID, f.Action) }
	case wire.ToolRequest:
		call = func() { p.ToolRequest(c, f) }
	default:
		c.log.Debug("bridge: ignored a frame the extension is not expected to send", "type", f.FrameType())
		return
	}
	c.callPanel(f.FrameType(), call)
}

// callPanel runs one Panel method. A panic there is a bug in infer, not in
// the extension; it is logged with its stack and the connection carries on,
// rather than one bad frame taking the whole workspace down.
func (c *conn) callPanel(what string, call func()) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("bridge: the panel panicked handling a frame", "frame", what, "panic", r, "stack", string(debug.Stack()))
		}
	}()
	call()
}
