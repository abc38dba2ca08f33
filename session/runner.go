package session

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/infer-workspace/infer/session/agent"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
)

// The runner takes queued messages one turn at a time. It publishes the
// busy and usage events, and reports each turn's transcript changes (the
// person's message, the agent's run) through change; saving is the
// turn's recorder's (recorder.go). The queue and the
// running turn share the workspace's lock with the active conversation
// (conversation.go): a turn is bound to its conversation under the same
// lock that a switch reads the running turn with.

// queued is a message waiting for its turn.
type queued struct {
	text   string
	origin Origin
}

func (w *Workspace) queueTextsLocked() []string {
	out := make([]string, len(w.queue))
	for i, q := range w.queue {
		out[i] = q.text
	}
	return out
}

// Queue returns the messages waiting for the current turn.
func (w *Workspace) Queue() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.queueTextsLocked()
}

// Busy reports whether a turn is running.
func (w *Workspace) Busy() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.runCancel != nil
}

// Interrupt stops the running turn (a no-op when idle). Pending approvals
// of the turn are rejected; the turn keeps its partial text. Messages still
// queued run afterwards, in order.
func (w *Workspace) Interrupt() {
	w.mu.Lock()
	c := w.runCancel
	w.mu.Unlock()
	if c != nil {
		c()
	}
}

// runner runs queued messages one turn at a time until Close.
func (w *Workspace) runner() {
	defer close(w.done)
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-w.wake:
		}
		for {
			w.mu.Lock()
			if len(w.queue) == 0 || w.closed {
				w.mu.Unlock()
				break
			}
			item := w.queue[0]
			w.queue = w.queue[1:]
			// The turn belongs to the conversation active now. Taken under
			// the same lock that publishes runDone, so a NewSession or a
			// delete that sees this turn can never hand it the next
			// conversation instead: it would write the message there.
			conv := w.conv
			w.running = conv
			q := w.queueTextsLocked()
			ctx, cancel := context.WithCancel(w.ctx)
			w.runCancel = cancel
			runDone := make(chan struct{})
			w.runDone = runDone
			w.mu.Unlock()

			w.queueChanged(q)
			w.publish(BusyChanged{Busy: true})
			interrupted := w.turn(ctx, item, conv)
			cancel()

			w.mu.Lock()
			w.runCancel = nil
			w.runDone = nil
			// The turn may have ended in a conversation no longer active
			// (a switch interrupted it, or it moved; see claim): its claim
			// goes before runDone tells a delete that the turn is over.
			ran := w.running
			w.running = nil
			idle := ran != w.conv
			w.mu.Unlock()
			if idle {
				w.release(ran)
			}
			close(runDone)
			w.publish(BusyChanged{Busy: false, Interrupted: interrupted})
		}
	}
}

// turn runs one message in conv to its end and reports whether it was
// interrupted.
func (w *Workspace) turn(ctx context.Context, item queued, conv *conversation) bool {
	set := w.forTurn()
	model, mode := set.Model, set.Mode

	conv, moved := w.claim(conv)
	if err := w.ensureStored(conv); err != nil {
		w.noticeIn(conv, "Could not start a conversation: "+err.Error(), Warn, "")
		w.unsavedRun(conv, err)
		return false
	}
	user := store.Message{Role: "user", Content: item.text}
	rec := w.recorder(conv)
	err := w.answerOpenCalls(conv, rec)
	if err == nil {
		err = rec.message(user)
	}
	if errors.Is(err, store.ErrNotFound) && moved == "" {
		conv, rec, moved, err = w.replaceDeleted(conv, user)
	}
	if err != nil {
		w.noticeIn(conv, "Could not save your message: "+err.Error(), Warn, "")
		w.unsavedRun(conv, err)
		return false
	}
	w.userMessage(conv, item)
	report := func(c transcript.Change) { w.change(conv, c) }
	if moved != "" {
		report = w.movedTo(conv, moved, report)
	}

	if cmd, ok := strings.CutPrefix(strings.TrimSpace(item.text), "!"); ok {
		return w.shell(ctx, conv, rec, strings.TrimSpace(cmd), mode, report)
	}

	provider, name, err := w.opts.Catalog.Resolve(model)
	if err != nil {
		provider = failing{err}
	}
	req := llm.Request{Model: name, System: w.systemPrompt(), Tools: offeredTools(w.pipeline.Specs(), provider), Effort: set.Effort, Temperature: set.Temperature}
	w.mu.Lock()
	tr, id := conv.tr.Clone(), conv.id
	w.mu.Unlock()
	out := agent.Run(ctx, agent.Config{Provider: provider, Request: req, MaxSteps: w.opts.MaxSteps, Conversation: id}, tr, agent.Hooks{
		Report:     report,
		Record:     rec.llmMessage,
		RecordTool: rec.toolMessage,
		Exec: func(ctx context.Context, call llm.ToolCall) agent.ToolResult {
			o := w.pipeline.Run(ctx, tools.Call{ID: call.ID, Name: call.Name, Args: call.Arguments, Origin: tools.OriginAgent}, w.Mode())
			if o.Warning != "" {
				// For the person, never the model: e.g. a site grant's
				// navigation that ended on another site.
				w.notice(o.Warning, Warn, tools.OriginAgent)
			}
			return agent.ToolResult{Content: o.Output, OK: o.Success, Images: o.Images, Duration: o.Duration, Artifacts: o.Artifacts}
		},
	})
	w.publish(UsageReported{Conversation: id, Usage: out.Usage})
	if out.Status == agent.Failed {
		w.log.Warn("turn failed", "conversation", id, "err", out.Err)
	}
	w.maybeTitle(conv, model)
	return out.Status == agent.Interrupted
}

// userMessage puts the person's message, saved, in conv's transcript; the
// first one titles the conversation until a better title comes.
func (w *Workspace) userMessage(conv *conversation, item queued) {
	w.mu.Lock()
	first := true
	for _, it := range conv.tr.Items {
		if it.Kind == transcript.User {
			first = false
			break
		}
	}
	w.mu.Unlock()
	if first {
		w.setTitle(conv, store.PreviewTitle(item.text))
	}
	w.change(conv, transcript.Change{Op: transcript.ItemDone, Item: transcript.Item{ID: newID(), Kind: transcript.User, Text: item.text, Origin: item.origin}})
}

// shell runs a "!command" message: a Bash call made by the person, which
// needs exactly the approval the agent's Bash call would need.
func (w *Workspace) shell(ctx context.Context, conv *conversation, rec *recorder, cmd string, mode tools.Mode, report func(transcript.Change)) bool {
	runID := newID()
	report(transcript.Change{Op: transcript.RunStarted, Run: runID})
	end := func(status transcript.Status, err, code string) {
		report(transcript.Change{Op: transcript.RunEnded, Run: runID, Status: status, Err: err, Code: code})
	}
	callID := "call_shell_" + strings.ReplaceAll(runID, "-", "")[:16]
	args := fmt.Sprintf(`{"command":%q}`, cmd)
	if b, err := jsonString(cmd); err == nil {
		args = `{"command":` + b + `}`
	}
	call := store.ToolCall{ID: callID, Type: "function", Function: store.FunctionCall{Name: tools.NameBash, Arguments: args}}
	if err := rec.message(store.Message{Role: "assistant", ToolCalls: []store.ToolCall{call}}); err != nil {
		end(transcript.Failed, err.Error(), "")
		return false
	}
	item := transcript.Item{ID: callID, Kind: transcript.Tool, Answer: runID, Call: transcript.Call{Name: tools.NameBash, Args: args}}
	report(transcript.Change{Op: transcript.ItemStarted, Run: runID, Item: item})
	o := w.pipeline.Run(ctx, tools.Call{ID: callID, Name: tools.NameBash, Args: args, Origin: tools.OriginShell}, mode)
	content := o.Output
	if content == "" {
		content = "(no output)"
	}
	if err := rec.toolMessage(llm.Message{Role: llm.RoleTool, ToolCallID: callID, Content: content}, o.Success); err != nil {
		w.log.Warn("saving shell result", "err", err)
	}
	item.Call.Result, item.Call.OK, item.Call.Duration, item.Call.Artifacts = content, o.Success, o.Duration, o.Artifacts
	report(transcript.Change{Op: transcript.ItemDone, Run: runID, Item: item})
	if ctx.Err() != nil {
		end(transcript.Interrupted, "", "interrupted")
		return true
	}
	end(transcript.Finished, "", "")
	return false
}

// unsavedRun reports a turn that could not start because its message could
// not be saved (a full disk, a read-only home) as a run of its own that
// failed, so that the panel, which shows chat events only, says why
// nothing happened and leaves its working state. The message stays in the
// input history for sending again.
func (w *Workspace) unsavedRun(conv *conversation, err error) {
	runID := newID()
	msg := "saving the conversation: " + err.Error() + "; the agent did not run. Free some disk space (or fix the folder's permissions), then send the message again."
	w.change(conv, transcript.Change{Op: transcript.RunStarted, Run: runID})
	w.change(conv, transcript.Change{Op: transcript.RunEnded, Run: runID, Status: transcript.Failed, Err: msg, Code: "storage"})
}

func (w *Workspace) systemPrompt() string {
	if w.opts.System != "" {
		return w.opts.System
	}
	return defaultSystemPrompt
}

const defaultSystemPrompt = `You are infer's agent. You work with a person in their own, real web browser ` +
	`(through the Browser* tools) and on their machine (Bash, Read, Write, Edit, Grep, Tree). ` +
	`Be direct and brief. Prefer reading a page before acting on it. Never type secrets the person did not give you. ` +
	`When a tool is refused or fails, say so plainly and suggest what the person can do.`

// offeredTools is the tool list for a turn with provider: WebSearch only
// when the provider runs searches itself, so the model is never told of a
// search it cannot have.
func offeredTools(specs []llm.Tool, provider llm.Provider) []llm.Tool {
	if llm.CanWebSearch(provider) {
		return specs
	}
	out := make([]llm.Tool, 0, len(specs))
	for _, t := range specs {
		if t.Name != tools.NameWebSearch {
			out = append(out, t)
		}
	}
	return out
}

// webSearch runs the WebSearch tool's query with the current model's
// provider, failing closed when that provider has no hosted search.
func (w *Workspace) webSearch(ctx context.Context, query string) (llm.SearchResult, error) {
	id := w.Model()
	p, model, err := w.opts.Catalog.Resolve(id)
	if err != nil {
		return llm.SearchResult{}, fmt.Errorf("%w: %v", tools.ErrNoWebSearch, err)
	}
	ws, ok := p.(llm.WebSearcher)
	if !ok || !llm.CanWebSearch(p) {
		return llm.SearchResult{}, fmt.Errorf("%w: the provider of %s has no hosted web search; nothing was searched. "+
			"Search with an OpenAI, Anthropic, Gemini, OpenRouter, PayPerQ or Ollama model (/model)", tools.ErrNoWebSearch, id)
	}
	return ws.WebSearch(ctx, model, query)
}

// failing is a provider that fails at once, used when the selected model
// cannot be resolved, so the failure still reaches the person as a run error.
type failing struct{ err error }

func (f failing) Stream(ctx context.Context, req llm.Request, emit func(llm.Delta)) (llm.Completion, error) {
	return llm.Completion{}, f.err
}

// replaceDeleted runs a turn whose conversation vanished from the store
// (deleted from another terminal, or its file removed by hand) in a new
// conversation, which becomes the active one, with the person's message
// saved there: the message is not lost, and the notice it returns (moved)
// says what happened, as claim's does for a conversation held elsewhere.
func (w *Workspace) replaceDeleted(gone *conversation, user store.Message) (*conversation, *recorder, string, error) {
	w.mu.Lock()
	name := gone.name()
	w.mu.Unlock()
	fresh := &conversation{}
	w.mu.Lock()
	if w.conv == gone {
		w.conv = fresh
	}
	w.running = fresh
	w.mu.Unlock()
	w.release(gone)
	w.log.Warn("the active conversation was deleted outside infer; the message starts a new one", "conversation", gone.id)
	rec := w.recorder(fresh)
	if err := w.ensureStored(fresh); err != nil {
		return fresh, rec, "", err
	}
	if err := rec.message(user); err != nil {
		return fresh, rec, "", err
	}
	return fresh, rec, name + " was deleted outside infer, so your message started a new conversation.", nil
}
