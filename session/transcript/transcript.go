// Package transcript is the domain's record of one conversation: the
// person's messages, what the model said and thought, the tool calls it
// made with their outcomes, and the notices shown beside them, as items in
// the order they happened.
//
// A transcript changes only through Apply, one Change at a time. The agent
// produces the changes, the workspace applies them to the conversation's
// one in-memory transcript and publishes each, and every front end applies
// the same changes to its own copy (or renders a snapshot, which is a
// transcript too). The model's request is built from the transcript
// (Request), so what the person sees and what the model reads cannot drift
// apart. No client's wire format lives here: encoders at the edges (the
// panel's AG-UI, headless's JSON) read items and changes as they are.
package transcript

import (
	"fmt"
	"strings"
	"time"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/tools"
)

// Kind says what an item is.
type Kind int

// Item kinds.
const (
	// User is a message the person sent, from any front end.
	User Kind = iota + 1
	// Text is a segment of what the model answered.
	Text
	// Reasoning is a segment of the model's visible reasoning.
	Reasoning
	// Tool is one tool call the model (or the person's "!command") made,
	// with its outcome once it has one.
	Tool
	// Notice is a line for the person that is no part of the dialogue:
	// the model never reads it.
	Notice
)

func (k Kind) String() string {
	switch k {
	case User:
		return "user"
	case Text:
		return "text"
	case Reasoning:
		return "reasoning"
	case Tool:
		return "tool"
	case Notice:
		return "notice"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Level says how a notice reads to the person.
type Level int

// Notice levels.
const (
	// Info is an ordinary line.
	Info Level = iota
	// Warn needs the person's attention.
	Warn
)

// Item is one entry of a transcript. Which fields mean something depends
// on Kind; the others are zero.
type Item struct {
	// ID names the item within its transcript. A tool call's ID is the
	// call's id, which its result answers.
	ID   string
	Kind Kind
	// Answer groups the Text, Reasoning and Tool items of one model answer:
	// together they are one assistant message in the model's request.
	Answer string
	// Text is the message (User), the segment (Text, Reasoning) or the
	// line (Notice).
	Text string
	// Origin is the front end that sent a User message, or whose action a
	// Notice reports ("" when none).
	Origin tools.Origin
	// Level is a Notice's.
	Level Level
	// Call is a Tool item's call and outcome.
	Call Call
	// Done says the item is complete: a segment stopped streaming, a
	// call has its result.
	Done bool
	// ProviderData is the opaque state a provider asked to get back with
	// the assistant message this item belongs to (see llm.Message); it is
	// set on one item of the answer at most.
	ProviderData map[string]string
	// At is when a Notice was recorded (zero when unknown).
	At time.Time
}

// Call is a tool call and, once its item is done, how it ended.
type Call struct {
	Name string
	// Args is the call's raw JSON arguments.
	Args string
	// Result is what the model reads back: the tool's output, or why it
	// failed or never ran.
	Result string
	// OK says the call succeeded.
	OK bool
	// Unreported says the stored result does not say whether the call
	// succeeded (conversations saved before outcomes were recorded).
	Unreported bool
	// Skipped says the call never ran: the turn was interrupted first.
	Skipped bool
	// Duration is how long the tool ran, without any wait for approval.
	Duration time.Duration
	// Artifacts are files the call saved, relative to the artifacts dir.
	Artifacts []string
	// Images go back to the model with the result (screenshots); they are
	// kept in memory only.
	Images []llm.Image
}

// Status says how a run ended.
type Status int

// Run outcomes.
const (
	Finished Status = iota
	Interrupted
	Failed
)

func (s Status) String() string {
	switch s {
	case Interrupted:
		return "interrupted"
	case Failed:
		return "failed"
	}
	return "finished"
}

// Op says what a Change does.
type Op int

// Change operations.
const (
	// RunStarted opens a run (one turn); Run names it.
	RunStarted Op = iota + 1
	// ItemStarted appends Item, which may still grow.
	ItemStarted
	// DeltaAppended appends Delta to the text (User, Text, Reasoning,
	// Notice) or the arguments (Tool) of the item Item.ID names.
	DeltaAppended
	// ItemDone replaces the item Item.ID names with Item, complete; an
	// item that never started is appended.
	ItemDone
	// RunEnded closes the run with Status (and Err, Code when it failed).
	RunEnded
)

func (o Op) String() string {
	switch o {
	case RunStarted:
		return "run started"
	case ItemStarted:
		return "item started"
	case DeltaAppended:
		return "delta appended"
	case ItemDone:
		return "item done"
	case RunEnded:
		return "run ended"
	}
	return fmt.Sprintf("op(%d)", int(o))
}

// Change is one step of a transcript. Only the fields its Op names are
// set, with Conversation and Run.
type Change struct {
	Op Op
	// Conversation is the conversation the change belongs to ("" for one
	// not stored yet).
	Conversation string
	// Run is the run the change happened in; "" for changes outside any
	// run (a notice, a stored conversation being loaded).
	Run string
	// Item is the item started or done; for DeltaAppended only its ID
	// is set.
	Item  Item
	Delta string
	// Status is how the run ended (RunEnded).
	Status Status
	// Err says why a Failed run failed; Code is a short machine word for
	// it ("rate_limited", "storage"), "interrupted" for an interrupted
	// run.
	Err, Code string
}

// Transcript is a conversation's items in order, and the run that is
// adding to it, if any. The zero value is an empty transcript.
//
// A streaming item's Text (or a Tool's Call.Args) is always whole: every
// reader, a snapshot taken mid-stream included, sees all the deltas
// applied so far. Applying a delta costs the delta's length, not the
// item's: see growing.
type Transcript struct {
	Items []Item
	// Run is the open run's id, "" when none runs.
	Run string

	// grow holds the text deltas last went to, so the next delta to the
	// same item appends in place instead of copying the item's text.
	grow *growing
}

// growing is the text of the item being streamed, in a buffer that only
// ever grows at its end. The item's field is the buffer's String(), which
// shares the buffer's bytes: appending writes only past what any earlier
// String() covers, so every string handed out stays as it was, and a
// delta costs its own length rather than the text's (an answer may be
// megabytes in tiny deltas).
type growing struct{ b strings.Builder }

// holds says the buffer's text is s, so that appending a delta to the
// buffer gives s followed by the delta. A streaming item's field is the
// buffer's own string, which compares equal without reading its bytes
// (the runtime compares the addresses of equal-length strings first);
// anything else (a field set by hand, a copy that applied deltas of its
// own) differs in length or text and starts a new buffer.
func (g *growing) holds(s string) bool {
	return g.b.Len() == len(s) && g.b.String() == s
}

// appendText returns s with delta appended, growing t's buffer when it
// holds s and starting one from s otherwise.
func (t *Transcript) appendText(s, delta string) string {
	if t.grow == nil || !t.grow.holds(s) {
		t.grow = new(growing)
		t.grow.b.Grow(2 * (len(s) + len(delta)))
		t.grow.b.WriteString(s)
	}
	t.grow.b.WriteString(delta)
	return t.grow.b.String()
}

// Apply changes t by c. It fails, leaving t unchanged, for a delta to an
// item t does not hold or an Op it does not know.
func (t *Transcript) Apply(c Change) error {
	switch c.Op {
	case RunStarted:
		t.Run = c.Run
	case RunEnded:
		t.Run = ""
	case ItemStarted:
		t.Items = append(t.Items, c.Item)
	case DeltaAppended:
		i := t.find(c.Item.ID)
		if i < 0 {
			return fmt.Errorf("transcript: a delta for item %q, which never started", c.Item.ID)
		}
		it := &t.Items[i]
		if it.Kind == Tool {
			it.Call.Args = t.appendText(it.Call.Args, c.Delta)
		} else {
			it.Text = t.appendText(it.Text, c.Delta)
		}
	case ItemDone:
		it := c.Item
		it.Done = true
		if i := t.find(it.ID); i >= 0 {
			if old := t.Items[i]; t.grow != nil && (t.grow.holds(old.Text) || t.grow.holds(old.Call.Args)) {
				t.grow = nil // done items never grow: let the buffer go
			}
			t.Items[i] = it
		} else {
			t.Items = append(t.Items, it)
		}
	default:
		return fmt.Errorf("transcript: unknown change %v", c.Op)
	}
	return nil
}

// find returns the index of the latest item with id, or -1. The latest:
// some models reuse a call id in a later answer.
func (t Transcript) find(id string) int {
	for i := len(t.Items) - 1; i >= 0; i-- {
		if t.Items[i].ID == id {
			return i
		}
	}
	return -1
}

// Item returns the latest item with id.
func (t Transcript) Item(id string) (Item, bool) {
	if i := t.find(id); i >= 0 {
		return t.Items[i], true
	}
	return Item{}, false
}

// Clone returns a copy of t whose items can be changed (or applied to)
// without changing t. Items' own slices are shared: an item is replaced
// whole, never changed in place, once another copy may hold it. The copy
// shares no streaming buffer with t, so the two can be applied to from
// different goroutines; its first delta to a streaming item copies that
// item's text once.
func (t Transcript) Clone() Transcript {
	t.Items = append([]Item(nil), t.Items...)
	t.grow = nil
	return t
}

// Settled returns t less the text and reasoning segments still
// streaming: what a front end that follows the rest live loads, since
// the rest of such a segment reaches it as deltas to an item it must
// start itself. Open tool calls stay: they are whole once started.
func (t Transcript) Settled() Transcript {
	out := Transcript{Run: t.Run, Items: make([]Item, 0, len(t.Items))}
	for _, it := range t.Items {
		if !it.Done && (it.Kind == Text || it.Kind == Reasoning) {
			continue
		}
		out.Items = append(out.Items, it)
	}
	return out
}

// OpenCalls returns the tool calls that have no result yet, in order.
func (t Transcript) OpenCalls() []Item {
	var open []Item
	for _, it := range t.Items {
		if it.Kind == Tool && !it.Done {
			open = append(open, it)
		}
	}
	return open
}

// Messages returns the conversation as the model-side messages it is
// stored as: each user message, each model answer as one assistant
// message (its text, reasoning and every call it made, answered or not)
// followed by the results of its answered calls. Notices are left out:
// they are no part of the dialogue.
func (t Transcript) Messages() []llm.Message {
	return t.messages(false)
}

// keptImages is how many of the most recent image-bearing messages keep
// their images in a model request: screenshots are large, and only the
// latest ones help the model.
const keptImages = 3

// Request returns what the model reads of the conversation: Messages less
// the calls that have no result (a request with an unanswered call is one
// providers reject) and the images of all but the latest keptImages
// messages that carry any.
func (t Transcript) Request() []llm.Message {
	msgs := t.messages(true)
	seen := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if len(msgs[i].Images) == 0 {
			continue
		}
		if seen++; seen > keptImages {
			msgs[i].Images = nil
		}
	}
	return msgs
}

func (t Transcript) messages(answeredOnly bool) []llm.Message {
	var out []llm.Message
	var cur *llm.Message // the open assistant message
	var results []llm.Message
	answer := ""
	flush := func() {
		if cur == nil {
			return
		}
		if cur.Content != "" || cur.Reasoning != "" || len(cur.ToolCalls) > 0 {
			out = append(out, *cur)
			out = append(out, results...)
		}
		cur, results = nil, nil
	}
	for _, it := range t.Items {
		switch it.Kind {
		case User:
			flush()
			out = append(out, llm.Message{Role: llm.RoleUser, Content: it.Text})
			continue
		case Text, Reasoning, Tool:
		default:
			continue
		}
		if cur == nil || it.Answer != answer {
			flush()
			cur, answer = &llm.Message{Role: llm.RoleAssistant}, it.Answer
		}
		if cur.ProviderData == nil && it.ProviderData != nil {
			cur.ProviderData = it.ProviderData
		}
		switch it.Kind {
		case Text:
			cur.Content += it.Text
		case Reasoning:
			cur.Reasoning += it.Text
		case Tool:
			if answeredOnly && !it.Done {
				continue
			}
			cur.ToolCalls = append(cur.ToolCalls, llm.ToolCall{ID: it.ID, Name: it.Call.Name, Arguments: it.Call.Args})
			if it.Done {
				results = append(results, llm.Message{Role: llm.RoleTool, ToolCallID: it.ID, Content: it.Call.Result, Images: it.Call.Images})
			}
		}
	}
	flush()
	return out
}
