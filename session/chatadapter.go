package session

import (
	"sync"

	"github.com/infer-workspace/infer/bridge/agui"
	"github.com/infer-workspace/infer/session/transcript"
)

// chatAdapter tells the front ends that still read Chat, UserMessage and
// ToolFinished each transcript change in those events, through the
// panel's encoder. It goes once they read the transcript.
type chatAdapter struct {
	mu  sync.Mutex
	enc agui.Encoder
}

func (w *Workspace) publishChange(c transcript.Change) {
	a := &w.chat
	a.mu.Lock()
	defer a.mu.Unlock()
	if c.Op == transcript.ItemDone && c.Item.Kind == transcript.User {
		w.publish(UserMessage{Conversation: c.Conversation, Text: c.Item.Text, Origin: c.Item.Origin})
		return
	}
	if c.Op == transcript.ItemDone && c.Item.Kind == transcript.Notice && c.Run == "" {
		return // shown as NoticePosted
	}
	for _, e := range a.enc.Encode(c) {
		w.publish(Chat{Conversation: c.Conversation, Event: e.Event, Notice: e.Notice})
	}
	if c.Op == transcript.ItemDone && c.Item.Kind == transcript.Tool {
		k := c.Item.Call
		w.publish(ToolFinished{Conversation: c.Conversation, CallID: c.Item.ID, Name: k.Name, OK: k.OK, Duration: k.Duration, Artifacts: k.Artifacts, Skipped: k.Skipped})
	}
}
