package session

import (
	"errors"
	"fmt"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/transcript"
)

// This file holds what keeps a conversation sendable and its turns in one
// process: the claim on the conversations this workspace writes (see "One
// writer per conversation" in the package documentation), and the
// recovery of tool calls a crash left without results.

// hold claims conversation id for this workspace's turns. held is set when
// another process holds it; err only for a conversation that is not
// stored (store.ErrNotFound). When the claim fails otherwise (its lock file
// cannot be created), the conversation is written unclaimed, as it was
// before claims existed, with a warning: refusing to continue it would
// help nobody.
func (w *Workspace) hold(id string) (h *store.Hold, held *store.HeldError, err error) {
	h, err = w.opts.Store.Hold(id)
	switch {
	case err == nil:
		return h, nil, nil
	case errors.As(err, &held):
		return nil, held, nil
	case errors.Is(err, store.ErrNotFound):
		return nil, nil, err
	}
	w.log.Warn("claiming the conversation failed; writing it unclaimed", "conversation", id, "err", err)
	return nil, nil, nil
}

// load reads conversation id for Resume. When this workspace can claim it,
// tool calls an earlier run left without results are answered first
// (store.Recover), so that the next model request is one providers accept.
// When another process holds it, it is read as stored, without the claim:
// its unanswered calls may be running there.
func (w *Workspace) load(id string) (*conversation, error) {
	hold, held, err := w.hold(id)
	if err != nil {
		return nil, err
	}
	var c store.Conversation
	if held == nil {
		var answered []string
		c, answered, err = w.opts.Store.Recover(id)
		if len(answered) > 0 {
			w.log.Info("answered tool calls left unfinished by an earlier run", "conversation", id, "calls", answered)
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			// Still worth showing; the turn start tries again.
			w.log.Warn("recovering unfinished tool calls", "conversation", id, "err", err)
			c, err = w.opts.Store.Load(id)
		}
	} else {
		c, err = w.opts.Store.Load(id)
	}
	if err != nil {
		hold.Release()
		return nil, err
	}
	conv := &conversation{hold: hold, heldBy: held}
	conv.fill(c)
	return conv, nil
}

// fill sets conv's content from a stored conversation.
func (c *conversation) fill(s store.Conversation) {
	c.id, c.title = s.Meta.ID, s.Meta.Title
	c.tr, c.unsaved = fromStore(s), nil
}

// release gives up conv's claim, once conv is neither active nor running
// a turn.
func (w *Workspace) release(c *conversation) {
	w.mu.Lock()
	h := c.hold
	c.hold = nil
	w.mu.Unlock()
	h.Release()
}

// heldByLocked names the process holding the active conversation for
// Snapshot.HeldBy.
func (w *Workspace) heldByLocked() string {
	if h := w.conv.heldBy; h != nil {
		return h.Where()
	}
	return ""
}

// name is how a message to the person refers to the conversation.
func (c *conversation) name() string {
	if c.title != "" {
		return "“" + c.title + "”"
	}
	if len(c.id) >= 8 {
		return "conversation " + c.id[:8]
	}
	return "the conversation"
}

// heldNotice tells the person that a conversation they resumed is open in
// another process, and what that means here.
func heldNotice(c *conversation) string {
	return fmt.Sprintf("%s is open in %s, so it is shown here read-only; a message you send starts a new conversation.", c.name(), c.heldBy.Where())
}

// claim makes sure the turn about to run can write conv, and returns the
// conversation the turn runs in. A conversation another process held when
// it was resumed is claimed again, since that process may have let go; it
// is then read again (recovered), as it may have grown meanwhile. If it is
// still held, the turn runs in a new conversation, which becomes the
// active one: the person's message is not lost, it moves, and moved is the
// notice that says so.
func (w *Workspace) claim(conv *conversation) (ran *conversation, moved string) {
	w.mu.Lock()
	held := conv.heldBy
	w.mu.Unlock()
	if held == nil {
		return conv, ""
	}
	hold, again, err := w.hold(conv.id)
	if err == nil && again == nil {
		c, answered, rerr := w.opts.Store.Recover(conv.id)
		if rerr == nil {
			if len(answered) > 0 {
				w.log.Info("answered tool calls left unfinished by an earlier run", "conversation", conv.id, "calls", answered)
			}
			w.mu.Lock()
			conv.fill(c)
			conv.hold, conv.heldBy = hold, nil
			active := w.conv == conv
			snap := w.snapshotLocked()
			w.mu.Unlock()
			if active {
				// What the front ends show may be behind what the holder
				// added before it let go.
				w.conversationChanged(snap, false)
			}
			return conv, ""
		}
		hold.Release()
		err = rerr
	}
	why := fmt.Sprintf("%s is open in %s", conv.name(), held.Where())
	switch {
	case again != nil:
		why = fmt.Sprintf("%s is open in %s", conv.name(), again.Where())
	case err != nil:
		why = fmt.Sprintf("%s could not be opened for writing (%v)", conv.name(), err)
	}
	fresh := &conversation{}
	w.mu.Lock()
	if w.conv == conv {
		w.conv = fresh
	}
	w.running = fresh
	w.mu.Unlock()
	return fresh, why + ", so your message started a new conversation."
}

// movedTo tells every front end that the turn's message started conv (see
// claim): the snapshot switches them to it, message included, and the
// notice opens the turn's run, so that the browser panel, which shows only
// the run, says why too. The notice is not recorded: it is no part of the
// conversation the model reads.
func (w *Workspace) movedTo(conv *conversation, text string, report func(transcript.Change)) func(transcript.Change) {
	w.mu.Lock()
	active := w.conv == conv
	snap := w.snapshotLocked()
	w.mu.Unlock()
	if active {
		w.conversationChanged(snap, false)
	}
	told := false
	return func(c transcript.Change) {
		report(c)
		if c.Op == transcript.RunStarted && !told {
			told = true
			report(transcript.Change{Op: transcript.ItemDone, Run: c.Run, Item: transcript.Item{ID: newID(), Kind: transcript.Notice, Text: text, Level: transcript.Warn}})
		}
	}
}

// answerOpenCalls records a failed result (store.UnfinishedCallText) for
// every tool call of conv that has none, before a turn adds to it:
// providers reject a history with an unanswered call, on every later turn.
// A conversation resumed from the store was recovered already; this
// catches calls a failed save left open in this process (a full disk
// while a tool ran): in the transcript, or only in the store.
func (w *Workspace) answerOpenCalls(conv *conversation, rec *recorder) error {
	w.mu.Lock()
	open := conv.tr.OpenCalls()
	unsaved := conv.unsaved
	w.mu.Unlock()
	for _, id := range unsaved {
		if err := rec.toolMessage(llm.Message{Role: llm.RoleTool, ToolCallID: id, Content: store.UnfinishedCallText}, false); err != nil {
			return err
		}
		w.mu.Lock()
		conv.unsaved = conv.unsaved[1:]
		w.mu.Unlock()
	}
	for _, it := range open {
		if err := rec.toolMessage(llm.Message{Role: llm.RoleTool, ToolCallID: it.ID, Content: store.UnfinishedCallText}, false); err != nil {
			return err
		}
		it.Call.Result, it.Call.OK, it.Call.Skipped = store.UnfinishedCallText, false, true
		w.change(conv, transcript.Change{Op: transcript.ItemDone, Item: it})
	}
	return nil
}
