package session

import (
	"context"
	"strings"
	"time"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/transcript"
)

// recorder saves one turn's messages in the store. The conversation's
// transcript holds them in memory: it changes through the turn's
// transcript changes (see change), not here.
type recorder struct {
	w    *Workspace
	conv *conversation
}

func (w *Workspace) recorder(c *conversation) *recorder {
	return &recorder{w: w, conv: c}
}

func (r *recorder) message(m store.Message) error {
	return r.w.opts.Store.Append(r.conv.id, m)
}

// llmMessage saves a message the agent produced (the store keeps text
// only; screenshots stay in artifacts/).
func (r *recorder) llmMessage(m llm.Message) error { return r.message(storeMessage(m)) }

// toolMessage saves a tool message together with its call's outcome, in
// one append. A call whose result could not be saved stays open in the
// store, and is answered there before the next turn (answerOpenCalls).
func (r *recorder) toolMessage(m llm.Message, ok bool) error {
	err := r.w.opts.Store.AppendToolResult(r.conv.id, storeMessage(m), ok)
	if err != nil {
		r.w.mu.Lock()
		r.conv.unsaved = append(r.conv.unsaved, m.ToolCallID)
		r.w.mu.Unlock()
	}
	return err
}

// change applies c to conv's transcript, the one copy in memory, and
// tells every front end. It publishes under the lock it applies under, so
// front ends get the changes of two goroutines (a turn's, a notice's) in
// the order the transcript took them.
func (w *Workspace) change(conv *conversation, c transcript.Change) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c.Conversation == "" {
		c.Conversation = conv.id
	}
	if err := conv.tr.Apply(c); err != nil {
		w.log.Warn("a transcript change did not apply", "conversation", c.Conversation, "err", err)
		return
	}
	w.publish(TranscriptChanged{Change: c})
}

func (w *Workspace) setTitle(c *conversation, title string) {
	w.mu.Lock()
	changed := c.title != title
	c.title = title
	w.mu.Unlock()
	if changed {
		w.titleChanged(c.id, title)
	}
}

// maybeTitle asks for a generated title after the first exchange, in the
// background; the first-message preview stays until one arrives.
func (w *Workspace) maybeTitle(c *conversation, model string) {
	if w.opts.Titler == nil {
		return
	}
	w.mu.Lock()
	var firstUser, firstAnswer string
	users := 0
	for _, m := range c.tr.Messages() {
		if m.Role == llm.RoleUser {
			users++
			if firstUser == "" {
				firstUser = m.Content
			}
		}
		if m.Role == llm.RoleAssistant && firstAnswer == "" && m.Content != "" {
			firstAnswer = m.Content
		}
	}
	w.mu.Unlock()
	if users != 1 || firstAnswer == "" {
		return
	}
	w.bg.Add(1)
	go func() {
		defer w.bg.Done()
		ctx, cancel := context.WithTimeout(w.ctx, 30*time.Second)
		defer cancel()
		title, err := w.opts.Titler(ctx, model, firstUser, firstAnswer)
		if err != nil || strings.TrimSpace(title) == "" {
			w.log.Debug("title generation failed; keeping the preview", "err", err)
			return
		}
		if err := w.opts.Store.SetGeneratedTitle(c.id, title); err != nil {
			w.log.Warn("saving generated title", "err", err)
			return
		}
		w.setTitle(c, title)
	}()
}
