package session

import (
	"context"
	"strings"
	"time"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
)

// recorder saves one turn's messages, mirrors them in memory, and
// publishes each tool call's outcome once its result is saved.
type recorder struct {
	w    *Workspace
	conv *conversation
	// names and outcomes are the turn's calls, from the assistant
	// messages and from running them; a call with a result and no
	// outcome was skipped. Used on the agent's goroutine only.
	names    map[string]string
	outcomes map[string]tools.Outcome
}

func (w *Workspace) recorder(c *conversation) *recorder {
	return &recorder{w: w, conv: c, names: map[string]string{}, outcomes: map[string]tools.Outcome{}}
}

func (r *recorder) message(m store.Message) error {
	return r.save(m, toLLM([]store.Message{m})[0])
}

// llmMessage saves a message the agent produced. The in-memory history keeps
// the original, images included (the store keeps text only; screenshots stay
// in artifacts/).
func (r *recorder) llmMessage(m llm.Message) error { return r.save(fromLLM(m), m) }

func (r *recorder) save(m store.Message, l llm.Message) error {
	for _, c := range m.ToolCalls {
		r.names[c.ID] = c.Function.Name
	}
	if err := r.w.opts.Store.Append(r.conv.id, m); err != nil {
		return err
	}
	r.w.mu.Lock()
	r.conv.messages = append(r.conv.messages, m)
	r.conv.history = append(r.conv.history, l)
	first := len(r.conv.messages) == 1 && m.Role == "user"
	r.w.mu.Unlock()
	if first {
		r.w.setTitle(r.conv, store.PreviewTitle(m.Content))
	}
	return nil
}

// ran keeps how a call ran until its result is recorded.
func (r *recorder) ran(id string, o tools.Outcome) { r.outcomes[id] = o }

// toolMessage saves a tool message together with its call's outcome, in
// one append, mirrors both in memory, and publishes the outcome, whether
// or not the save worked: the call ran either way.
func (r *recorder) toolMessage(m llm.Message, ok bool) error {
	sm := fromLLM(m)
	err := r.w.opts.Store.AppendToolResult(r.conv.id, sm, ok)
	if err == nil {
		r.w.mu.Lock()
		r.conv.messages = append(r.conv.messages, sm)
		r.conv.history = append(r.conv.history, m)
		r.conv.toolResults[m.ToolCallID] = ok
		r.w.mu.Unlock()
	}
	o, ran := r.outcomes[m.ToolCallID]
	delete(r.outcomes, m.ToolCallID)
	r.w.publish(ToolFinished{Conversation: r.conv.id, CallID: m.ToolCallID, Name: r.names[m.ToolCallID],
		OK: ok, Duration: o.Duration, Artifacts: o.Artifacts, Skipped: !ran})
	return err
}

func (w *Workspace) setTitle(c *conversation, title string) {
	w.mu.Lock()
	changed := c.title != title
	c.title = title
	w.mu.Unlock()
	if changed {
		w.publish(TitleChanged{Conversation: c.id, Title: title})
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
	for _, m := range c.messages {
		if m.Role == "user" {
			users++
			if firstUser == "" {
				firstUser = m.Content
			}
		}
		if m.Role == "assistant" && firstAnswer == "" && m.Content != "" {
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
