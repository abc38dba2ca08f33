package session

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
)

func callsMsg(ids ...string) store.Message {
	m := store.Message{Role: store.RoleAssistant, Content: "running"}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, store.ToolCall{ID: id, Type: "function", Function: store.FunctionCall{Name: "Bash", Arguments: `{"command":"sleep 600"}`}})
	}
	return m
}

// checkAnswered asserts that every tool call in msgs is followed, before
// any other kind of message, by a tool message answering it, which is what
// providers require of a request.
func checkAnswered(t *testing.T, msgs []llm.Message) {
	t.Helper()
	for i, m := range msgs {
		if len(m.ToolCalls) == 0 {
			continue
		}
		answered := map[string]bool{}
		for _, r := range msgs[i+1:] {
			if r.Role != llm.RoleTool {
				break
			}
			answered[r.ToolCallID] = true
		}
		for _, c := range m.ToolCalls {
			if !answered[c.ID] {
				t.Fatalf("message %d: call %s has no result right after it in the request:\n%+v", i, c.ID, msgs)
			}
		}
	}
}

// TestResumeAnswersCallsACrashLeftOpen resumes a conversation whose file
// ends, as `kill -9` during a tool call leaves it, with an assistant
// message whose calls have no results. The resume records a failed result
// for each, once, and the next model request carries them.
func TestResumeAnswersCallsACrashLeftOpen(t *testing.T) {
	dir := t.TempDir()
	rp := &recordingProvider{}
	f := newFixture(t, dir, func(o *Options) { o.Catalog = oneCatalog{rp} })
	meta, err := f.st.Create()
	if err != nil {
		t.Fatal(err)
	}
	id := meta.ID
	if err := f.st.Append(id, store.Message{Role: store.RoleUser, Content: "run two things"}, callsMsg("call_a", "call_b")); err != nil {
		t.Fatal(err)
	}

	snap, err := f.w.Resume(id)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(messagesOf(snap)); n != 4 || messagesOf(snap)[2].Content != store.UnfinishedCallText || messagesOf(snap)[3].ToolCallID != "call_b" {
		t.Fatalf("resumed %+v", messagesOf(snap))
	}
	for _, c := range []string{"call_a", "call_b"} {
		if ok, known := outcomes(snap)[c]; !known || ok {
			t.Fatalf("%s: result %v, recorded %v; want a recorded failure", c, ok, known)
		}
	}
	// Recorded in the file, so a second resume (or another process) finds
	// nothing left to answer.
	if c, err := f.st.Load(id); err != nil || len(c.Messages) != 4 {
		t.Fatalf("stored %+v, %v", c.Messages, err)
	}
	again, err := f.w.Resume(id)
	if err != nil || len(again.Transcript.Messages()) != 4 {
		t.Fatalf("second resume: %d messages, %v", len(again.Transcript.Messages()), err)
	}

	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("go on", tools.OriginTerminal)
	collect(t, sub, idle)
	if len(rp.reqs) != 1 {
		t.Fatalf("%d requests", len(rp.reqs))
	}
	msgs := rp.reqs[0].Messages
	checkAnswered(t, msgs)
	got := map[string]string{}
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			got[m.ToolCallID] = m.Content
		}
	}
	if len(got) != 2 || got["call_a"] != store.UnfinishedCallText || got["call_b"] != store.UnfinishedCallText {
		t.Fatalf("tool results in the request: %q", got)
	}
	if last := msgs[len(msgs)-1]; last.Role != llm.RoleUser || last.Content != "go on" {
		t.Fatalf("request ends with %+v", last)
	}
}

// TestTurnAnswersCallsLeftOpenInMemory: a call whose result could not be
// saved (a full disk while the tool ran) stays open in the workspace's
// own copy of the conversation; the next turn answers it before it adds
// the person's message.
func TestTurnAnswersCallsLeftOpenInMemory(t *testing.T) {
	rp := &recordingProvider{}
	f := newFixture(t, "", func(o *Options) { o.Catalog = oneCatalog{rp} })
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("first", tools.OriginTerminal)
	collect(t, sub, idle)
	id := f.w.ActiveConversation()
	// What recorder.llmMessage leaves when the tool message that should
	// follow fails to save.
	call := callsMsg("call_lost")
	f.w.mu.Lock()
	conv := f.w.conv
	f.w.mu.Unlock()
	if err := f.w.recorder(conv).message(call); err != nil {
		t.Fatal(err)
	}
	f.w.change(conv, transcript.Change{Op: transcript.ItemStarted, Item: transcript.Item{ID: "call_lost", Kind: transcript.Tool, Answer: "a",
		Call: transcript.Call{Name: "Bash", Args: call.ToolCalls[0].Function.Arguments}}})

	f.w.Send("second", tools.OriginTerminal)
	collect(t, sub, idle)
	checkAnswered(t, rp.reqs[1].Messages)
	c, err := f.st.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range c.Messages {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, " "); got != "user assistant assistant tool user assistant" {
		t.Fatalf("stored roles %s", got)
	}
	if c.Messages[3].Content != store.UnfinishedCallText || c.ToolResults["call_lost"] {
		t.Fatalf("stored result %+v, ok %v", c.Messages[3], c.ToolResults["call_lost"])
	}
}

// TestConversationOpenInAnotherProcess runs two workspaces on one project,
// each with its own store: flock locks belong to open file descriptions,
// so they exclude each other as two processes do. The second one shows the
// first one's conversation read-only, and what it sends there starts a new
// conversation; once the first one lets go, the conversation is its to
// continue.
func TestConversationOpenInAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	a := newFixture(t, dir)
	b := newFixture(t, dir)
	subA := a.w.Subscribe()
	defer subA.Close()
	a.w.Send("stream 3", tools.OriginTerminal)
	collect(t, subA, idle)
	id := a.w.ActiveConversation()
	before := len(messagesOf(a.w.Snapshot()))

	subB := b.w.Subscribe()
	defer subB.Close()
	snap, err := b.w.Resume(id)
	if err != nil {
		t.Fatal(err)
	}
	holder := fmt.Sprintf("(pid %d)", os.Getpid())
	if !strings.Contains(snap.HeldBy, holder) || len(messagesOf(snap)) != before {
		t.Fatalf("read-only resume: held by %q, %d messages", snap.HeldBy, len(messagesOf(snap)))
	}
	notice := collect(t, subB, isNotice)
	if text := lastNotice(notice).Text; !strings.Contains(text, "is open in") || !strings.Contains(text, holder) || !strings.Contains(text, "new conversation") {
		t.Fatalf("notice %q", text)
	}
	if err := b.w.DeleteConversation(id); !errors.Is(err, store.ErrHeld) {
		t.Fatalf("deleting a conversation open elsewhere: %v", err)
	}

	// The message moves to a new conversation, and the person is told.
	b.w.Send("stream 2", tools.OriginPanel)
	evs := collect(t, subB, idle)
	moved := b.w.ActiveConversation()
	if moved == id || moved == "" {
		t.Fatalf("the message went to %q", moved)
	}
	switched := false
	for _, e := range evs {
		if c, ok := e.(ConversationChanged); ok && c.Snapshot.ID == moved {
			switched = len(messagesOf(c.Snapshot)) > 0 && messagesOf(c.Snapshot)[0].Content == "stream 2"
		}
	}
	if !switched {
		t.Fatal("front ends were not switched to the new conversation, message included")
	}
	if text := runNotices(evs); !strings.Contains(text, "is open in") || !strings.Contains(text, "started a new conversation") {
		t.Fatalf("the run does not say why: %q", text)
	}
	if c, _ := b.st.Load(moved); len(c.Messages) != 2 || c.Messages[0].Content != "stream 2" {
		t.Fatalf("new conversation %+v", c.Messages)
	}
	if c, _ := b.st.Load(id); len(c.Messages) != before {
		t.Fatalf("the held conversation changed: %d messages, was %d", len(c.Messages), before)
	}

	// Resumed read-only again, then let go by its holder: the next message
	// claims it and continues it.
	if snap, err := b.w.Resume(id); err != nil || snap.HeldBy == "" {
		t.Fatalf("resume while still held: %q, %v", snap.HeldBy, err)
	}
	a.w.Close()
	b.w.Send("stream 2", tools.OriginTerminal)
	collect(t, subB, idle)
	if got := b.w.ActiveConversation(); got != id {
		t.Fatalf("active %s, want the released conversation %s", got, id)
	}
	if s := b.w.Snapshot(); s.HeldBy != "" || len(s.Transcript.Messages()) != before+2 {
		t.Fatalf("continued: held by %q, %d messages", s.HeldBy, len(s.Transcript.Messages()))
	}

	// And the first workspace's store now finds it held by the second.
	if _, err := a.st.Hold(id); !errors.Is(err, store.ErrHeld) {
		t.Fatalf("Hold while the second workspace writes it: %v", err)
	}
	b.w.NewSession() // switching away lets go
	h, err := a.st.Hold(id)
	if err != nil {
		t.Fatalf("Hold after the second workspace switched away: %v", err)
	}
	h.Release()
}

// TestMessageToADeletedConversationStartsANewOne: the open conversation's
// file goes (deleted from another terminal, or by hand). The next message
// is not lost: it starts a new conversation, which every front end is
// switched to, and the panel's run says why.
func TestMessageToADeletedConversationStartsANewOne(t *testing.T) {
	f := newFixture(t, "")
	sub := f.w.Subscribe()
	defer sub.Close()
	if err := f.w.Send("first words", tools.OriginTerminal); err != nil {
		t.Fatal(err)
	}
	collect(t, sub, idle)
	gone := f.w.ActiveConversation()
	if err := os.Remove(f.st.Path(gone)); err != nil {
		t.Fatal(err)
	}

	if err := f.w.Send("second words", tools.OriginTerminal); err != nil {
		t.Fatal(err)
	}
	evs := collect(t, sub, idle)
	now := f.w.ActiveConversation()
	if now == "" || now == gone {
		t.Fatalf("active conversation %q after %q was deleted", now, gone)
	}
	c, err := f.st.Load(now)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) == 0 || c.Messages[0].Content != "second words" {
		t.Fatalf("the new conversation holds %+v, want the message first", c.Messages)
	}
	switched := false
	for _, e := range evs {
		if cc, ok := e.(ConversationChanged); ok && cc.Snapshot.ID == now {
			switched = true
		}
	}
	if !switched {
		t.Fatal("front ends were not switched to the new conversation")
	}
	if text := runNotices(evs); !strings.Contains(text, "was deleted outside infer, so your message started a new conversation") {
		t.Fatalf("no notice saying why: %q", text)
	}
}
