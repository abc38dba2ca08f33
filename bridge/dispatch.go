package bridge

import (
	"runtime/debug"

	"github.com/infer-workspace/infer/bridge/wire"
)

// toPanel hands one side-panel frame to the Panel, on the reader goroutine
// so frames are handled in arrival order. Frames only infer sends (a
// misbehaving or echoing peer) are ignored.
func (c *conn) toPanel(f wire.Frame) {
	p := c.srv.panel
	if p == nil {
		c.log.Debug("bridge: no panel attached; ignored a panel frame", "type", f.FrameType())
		return
	}
	if wire.SentBy(f) != wire.Extension {
		c.log.Debug("bridge: ignored a frame the extension is not expected to send", "type", f.FrameType())
		return
	}
	c.callPanel(f.FrameType(), func() { p.Handle(c, f) })
}

// callPanel runs one Panel call. A panic there is a bug in infer, not in
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
