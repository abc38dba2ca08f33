package panelsync

import (
	"strconv"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"

	"github.com/infer-workspace/infer/bridge"
	"github.com/infer-workspace/infer/bridge/agui"
	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session"
)

// maxHeldOutside bounds the lines kept for the end of a turn; the rest
// are counted into one more line.
const maxHeldOutside = 50

// outsideLines shows the panel each call an MCP client made, once it
// ended, as a run of its own holding one text message: "MCP client ·
// BrowserNavigate https://… — ✓ …". opentask's reducer appends text to the
// last message and leaves "Working…" on any TEXT_MESSAGE_END, so a line
// sent while a turn streams would land inside the agent's answer and end
// its working state early: lines that end during a turn wait for the
// turn's end. It runs on the mirror goroutine only.
type outsideLines struct {
	running bool
	held    []session.OutsideCall
	dropped int
}

// track follows the workspace's runs from its chat events (of every
// conversation: a run of one the panel left still holds the runner) and
// reports whether e ended one.
func (o *outsideLines) track(e events.Event) bool {
	switch e.(type) {
	case *events.RunStartedEvent:
		o.running = true
	case *events.RunFinishedEvent, *events.RunErrorEvent:
		was := o.running
		o.running = false
		return was
	}
	return false
}

// show sends c's line now, or after the running turn.
func (o *outsideLines) show(snd bridge.Sender, c session.OutsideCall) error {
	if !o.running {
		return sendOutside(snd, c.ID, c.Conversation, c.Line())
	}
	if len(o.held) < maxHeldOutside {
		o.held = append(o.held, c)
	} else {
		o.dropped++
	}
	return nil
}

// idle is the runner going idle: a turn that ended without a terminal
// event the mirror saw still lets the held lines out.
func (o *outsideLines) idle(snd bridge.Sender) {
	o.running = false
	o.flush(snd)
}

// flush sends the held lines, oldest first, to snd (the live connection;
// a line for a connection that went away is not kept for the next).
func (o *outsideLines) flush(snd bridge.Sender) {
	held, dropped := o.held, o.dropped
	o.held, o.dropped = nil, 0
	for _, c := range held {
		if sendOutside(snd, c.ID, c.Conversation, c.Line()) != nil {
			return
		}
	}
	if dropped > 0 {
		_ = sendOutside(snd, "more-"+strconv.Itoa(dropped), "", "… and "+strconv.Itoa(dropped)+" more calls from MCP clients while the agent worked: infer's terminal shows them all.")
	}
}

// sendOutside sends one line as a whole run, bracketed like every run; its
// thread is the conversation that was active, or one of its own when there
// was none yet (AG-UI requires one).
func sendOutside(snd bridge.Sender, id, thread, line string) error {
	if thread == "" {
		thread = "mcp-clients"
	}
	run := "outside-" + id
	// The line quotes an MCP client's arguments and a page's answer; the
	// panel renders Markdown, which must not turn them into an image it
	// fetches or a link in infer's voice.
	for _, e := range agui.Say(thread, run, run, wire.PlainMarkdown(line)) {
		if err := sendEvent(snd, e); err != nil {
			return err
		}
	}
	return nil
}
