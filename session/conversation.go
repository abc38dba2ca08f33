package session

import (
	"errors"
	"fmt"
	"strings"

	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/transcript"
)

// The conversation lifecycle: which conversation is active, switching
// (new, resume, delete) and its store entry. It holds the publishers of
// ConversationChanged (for claims too, in resume.go) and TitleChanged (for
// the recorder too), and tells the notice that a resumed conversation is
// held by another process; claims and loading are in resume.go.

// Snapshot is a conversation as front ends show it.
type Snapshot struct {
	ID    string
	Title string
	// Transcript is the conversation so far, running turn included; a
	// front end renders it with the same apply it follows changes with.
	Transcript transcript.Transcript
	// HeldBy, when set, names the process that holds the conversation
	// ("infer serve (pid 1234)"): it is shown read-only, and a message
	// sent to it starts a new conversation (see the package
	// documentation).
	HeldBy string
}

// conversation is the active conversation's in-memory state. The store
// entry is created lazily on the first message so that new sessions nobody
// used do not clutter the list.
type conversation struct {
	id    string
	title string
	// tr is the conversation: the one copy in memory, which the model's
	// requests are built from and snapshots copy.
	tr transcript.Transcript
	// unsaved are calls whose result could not be saved (a full disk
	// while the tool ran): the store still has them open.
	unsaved []string
	// hold is this workspace's claim on writing the conversation, kept
	// while it is active or runs a turn; heldBy is set instead when
	// another process held it at resume (see claim).
	hold   *store.Hold
	heldBy *store.HeldError
}

// NewSession interrupts any turn and makes a fresh, empty conversation the
// active one. It returns the (empty) snapshot, which every front end also
// gets as a ConversationChanged.
func (w *Workspace) NewSession() Snapshot {
	snap, _, _ := w.activate(&conversation{}, "")
	return snap
}

// activate makes conv the active conversation and interrupts the running
// turn, in that order and under one lock with reading the turn: a turn
// is bound to its conversation when it is dequeued (see runner), so none
// can start in the old conversation after the switch without being
// interrupted. When onlyIf is set, nothing happens unless it is the
// active conversation's id (ok reports whether the switch happened). done
// is closed when the interrupted turn has stopped writing; nil when none
// ran.
func (w *Workspace) activate(conv *conversation, onlyIf string) (snap Snapshot, done <-chan struct{}, ok bool) {
	w.mu.Lock()
	if onlyIf != "" && w.conv.id != onlyIf {
		w.mu.Unlock()
		return Snapshot{}, nil, false
	}
	cancel := w.runCancel
	if w.runDone != nil {
		done = w.runDone
	}
	old := w.conv
	// A turn still writing the old conversation keeps its claim; the
	// runner releases it when the turn ends.
	idle := old != w.running && old != conv
	w.conv = conv
	snap = w.snapshotLocked()
	w.mu.Unlock()
	if idle {
		w.release(old)
	}
	if cancel != nil {
		cancel()
	}
	w.conversationChanged(snap, false)
	return snap, done, true
}

// Resume makes a stored conversation the active one, interrupting any
// turn, and returns its snapshot exactly as stored; front ends get it as a
// ConversationChanged. Resuming the active conversation while its turn
// runs changes nothing: the snapshot so far is returned and published with
// Same set, for the front end that lost the stream.
func (w *Workspace) Resume(id string) (Snapshot, error) {
	if strings.TrimSpace(id) == "" {
		return Snapshot{}, ErrUnknownConversation
	}
	// A panel that reconnects mid-turn resumes the conversation it shows
	// (the extension's does after every reconnect): that must not stop the turn.
	// The in-memory conversation is then the latest; when idle the file is
	// read again, since another process may have added to it.
	w.mu.Lock()
	if w.conv.id == id && w.runCancel != nil {
		snap := w.snapshotLocked()
		w.mu.Unlock()
		w.conversationChanged(snap, true)
		return snap, nil
	}
	w.mu.Unlock()
	conv, err := w.load(id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Snapshot{}, ErrUnknownConversation
		}
		return Snapshot{}, err
	}
	notice := ""
	if conv.heldBy != nil { // read before activate shares conv
		notice = heldNotice(conv)
	}
	snap, _, _ := w.activate(conv, "")
	if notice != "" {
		// Shown only: the holder writes the conversation (see record).
		w.noticeIn(conv, notice, Warn, "")
	}
	return snap, nil
}

// Snapshot returns the active conversation.
func (w *Workspace) Snapshot() Snapshot {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.snapshotLocked()
}

func (w *Workspace) snapshotLocked() Snapshot {
	c := w.conv
	return Snapshot{ID: c.id, Title: c.title, Transcript: c.tr.Clone(), HeldBy: w.heldByLocked()}
}

// ActiveConversation returns the active conversation's id ("" until its
// first message is stored).
func (w *Workspace) ActiveConversation() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.conv.id
}

// Conversations lists stored conversations, newest first.
func (w *Workspace) Conversations() ([]store.Meta, error) { return w.opts.Store.List() }

// RenameConversation gives a conversation the person's own title.
func (w *Workspace) RenameConversation(id, title string) error {
	title = strings.TrimSpace(title)
	if title == "" {
		return errors.New("a title cannot be empty")
	}
	if err := w.opts.Store.Rename(id, title); err != nil {
		return err
	}
	w.mu.Lock()
	active := w.conv.id == id
	conv := w.conv
	w.mu.Unlock()
	if active {
		w.setTitle(conv, title)
	} else {
		w.titleChanged(id, title)
	}
	return nil
}

// conversationChanged tells the front ends the conversation they show:
// the one publisher of ConversationChanged, for activate (new, resume,
// delete), Resume of the running conversation (same), claim (a held
// conversation read again) and movedTo (a message moved to a new one).
func (w *Workspace) conversationChanged(snap Snapshot, same bool) {
	w.publish(ConversationChanged{Snapshot: snap, Same: same})
}

// titleChanged tells the front ends a conversation's title: the one
// publisher of TitleChanged, for setTitle (the active conversation) and
// RenameConversation (any other).
func (w *Workspace) titleChanged(id, title string) {
	w.publish(TitleChanged{Conversation: id, Title: title})
}

// PinConversation pins or unpins a conversation in lists.
func (w *Workspace) PinConversation(id string, pinned bool) error {
	return w.opts.Store.SetPinned(id, pinned)
}

// DeleteConversation removes a stored conversation. Deleting the active
// one first starts a new session, so its running turn cannot write it back.
func (w *Workspace) DeleteConversation(id string) error {
	// The store would refuse a conversation another process holds; refuse
	// it before the switch below, which would leave the person elsewhere.
	h, err := w.opts.Store.Hold(id)
	if errors.Is(err, store.ErrHeld) {
		return fmt.Errorf("deleting conversation %s: %w; close it there first", id, err)
	}
	h.Release()
	if _, done, ok := w.activate(&conversation{}, id); ok && done != nil {
		<-done // the interrupted turn must stop writing before the delete
	}
	return w.opts.Store.Delete(id)
}

// ensureStored creates the conversation's store entry on its first message
// or notice. Both may come at once, from the runner and from a front end,
// so the check and the creation are one step under w.storing.
func (w *Workspace) ensureStored(conv *conversation) error {
	w.storing.Lock()
	defer w.storing.Unlock()
	w.mu.Lock()
	stored := conv.id != ""
	w.mu.Unlock()
	if stored {
		return nil
	}
	meta, err := w.opts.Store.Create()
	if err != nil {
		return err
	}
	hold, _, _ := w.hold(meta.ID) // nobody else knows the new id yet
	w.mu.Lock()
	conv.id = meta.ID
	conv.title = meta.Title
	conv.hold = hold
	w.mu.Unlock()
	return nil
}
