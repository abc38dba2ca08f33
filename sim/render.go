package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/infer-workspace/infer/bridge/wire"
)

// RenderOptions choose what a Renderer shows.
type RenderOptions struct {
	// Quiet shows only the conversation: text, messages typed elsewhere,
	// approvals and failed runs.
	Quiet bool
	// Verbose also shows browser commands and the answers to panel
	// requests (the frames themselves are a Tap's job).
	Verbose bool
	// Color dims reasoning and markers with ANSI escapes.
	Color bool
}

// Renderer prints infer's frames as a readable chat transcript as they
// stream: text deltas inline, tool calls as "→ Name {args}" with a ✓ or ✗
// line for their results, reasoning dimmed, runs bracketed, approvals with
// their id and how to answer them. It is safe for concurrent use; Println
// lets the prompt's own output share the writer without cutting a
// streaming line in half.
type Renderer struct {
	w    io.Writer
	opts RenderOptions

	mu       sync.Mutex
	open     string // "text" or "reasoning" while a line is streaming
	toolName map[string]string
	toolArgs map[string]*strings.Builder
}

// NewRenderer writes to w.
func NewRenderer(w io.Writer, opts RenderOptions) *Renderer {
	return &Renderer{w: w, opts: opts, toolName: map[string]string{}, toolArgs: map[string]*strings.Builder{}}
}

// chatEvent is the part of an AG-UI event the transcript shows.
type chatEvent struct {
	Type         string          `json:"type"`
	Delta        string          `json:"delta"`
	Role         string          `json:"role"`
	ToolCallID   string          `json:"toolCallId"`
	ToolCallName string          `json:"toolCallName"`
	Content      string          `json:"content"`
	Message      string          `json:"message"`
	Code         string          `json:"code"`
	Name         string          `json:"name"`
	Value        json.RawMessage `json:"value"`
}

// Println prints a line of the prompt's own, after closing a streaming
// line.
func (r *Renderer) Println(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closeLine()
	fmt.Fprintln(r.w, s)
}

// Frame renders one frame from infer.
func (r *Renderer) Frame(f wire.Frame) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch f := f.(type) {
	case wire.ChatEvent:
		var e chatEvent
		if json.Unmarshal(f.Event, &e) == nil {
			r.chat(e)
		}
	case wire.ApprovalRequest:
		r.line(fmt.Sprintf("? approval needed [%s]: %s %s", f.RequestID, f.ToolName, clip(f.ToolArgs, 300)))
		r.line("  answer with `approve` or `reject` (or `approve " + f.RequestID + "`)")
	case wire.ApprovalResolved:
		r.note("· approval " + f.RequestID + " resolved")
	case wire.Interrupted:
		r.note("⏹ interrupted")
	case wire.ConversationSnapshot:
		r.snapshot(f)
	case wire.Mode:
		r.note("· mode: " + f.Mode)
	case wire.Models:
		r.note("· model: " + f.Current)
	case wire.ToolResult:
		mark := "✓"
		text := f.Output
		if !f.Success {
			mark = "✗"
			if f.Error != "" && text == "" {
				text = f.Error
			}
		}
		r.line(fmt.Sprintf("%s tool_result %s: %s", mark, f.ID, firstLines(text)))
	case wire.BrowserCommand:
		if r.opts.Verbose {
			r.line(r.dim("· browser " + describeCommand(f)))
		}
	}
}

func (r *Renderer) chat(e chatEvent) {
	switch e.Type {
	case "RUN_STARTED":
		r.note("▶ run started")
	case "RUN_FINISHED":
		r.note("■ run finished")
	case "RUN_ERROR":
		msg := e.Message
		if e.Code != "" {
			msg += " (" + e.Code + ")"
		}
		r.line("✗ run ended: " + msg)
	case "TEXT_MESSAGE_START":
		r.startStream("text")
	case "TEXT_MESSAGE_CONTENT":
		if r.open != "text" {
			r.startStream("text")
		}
		fmt.Fprint(r.w, e.Delta)
	case "TEXT_MESSAGE_END":
		if r.open == "text" {
			r.closeLine()
		}
	case "REASONING_MESSAGE_START", "THINKING_TEXT_MESSAGE_START":
		if !r.opts.Quiet {
			r.startStream("reasoning")
		}
	case "REASONING_MESSAGE_CONTENT", "THINKING_TEXT_MESSAGE_CONTENT":
		if r.opts.Quiet {
			return
		}
		if r.open != "reasoning" {
			r.startStream("reasoning")
		}
		fmt.Fprint(r.w, r.dim(e.Delta))
	case "REASONING_MESSAGE_END", "THINKING_TEXT_MESSAGE_END":
		if r.open == "reasoning" {
			r.closeLine()
		}
	case "TOOL_CALL_START":
		r.toolName[e.ToolCallID] = e.ToolCallName
		r.toolArgs[e.ToolCallID] = &strings.Builder{}
	case "TOOL_CALL_ARGS":
		if b := r.toolArgs[e.ToolCallID]; b != nil {
			b.WriteString(e.Delta)
		}
	case "TOOL_CALL_END":
		args := ""
		if b := r.toolArgs[e.ToolCallID]; b != nil {
			args = b.String()
		}
		if !r.opts.Quiet {
			r.line("→ " + r.toolName[e.ToolCallID] + " " + clip(args, 300))
		}
	case "TOOL_CALL_RESULT":
		name := r.toolName[e.ToolCallID]
		delete(r.toolArgs, e.ToolCallID)
		delete(r.toolName, e.ToolCallID)
		if r.opts.Quiet {
			return
		}
		mark := "✓"
		if LooksFailed(name, e.Content) {
			mark = "✗"
		}
		r.line(mark + " " + firstLines(e.Content))
	case "CUSTOM":
		if e.Name == "infer.user_message" {
			var v struct{ Content, Origin string }
			if json.Unmarshal(e.Value, &v) == nil {
				r.line(fmt.Sprintf("you (%s): %s", v.Origin, v.Content))
			}
		}
	}
}

func (r *Renderer) snapshot(s wire.ConversationSnapshot) {
	if len(s.Messages) == 0 {
		r.line("— new conversation —")
		return
	}
	r.line(fmt.Sprintf("— conversation, %d messages —", len(s.Messages)))
	names := map[string]string{}
	for _, m := range s.Messages {
		switch m.Role {
		case "user":
			r.line("you: " + m.Content)
		case "assistant":
			if m.Reasoning != "" && !r.opts.Quiet {
				r.line(r.dim("thinking: " + clip(m.Reasoning, 300)))
			}
			if m.Content != "" {
				r.line("agent: " + m.Content)
			}
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Function.Name
				if !r.opts.Quiet {
					r.line("→ " + c.Function.Name + " " + clip(c.Function.Arguments, 300))
				}
			}
		case "tool":
			if r.opts.Quiet {
				continue
			}
			ok, known := s.ToolResults[m.ToolCallID]
			if !known {
				ok = !LooksFailed(names[m.ToolCallID], m.Content)
			}
			mark := "✓"
			if !ok {
				mark = "✗"
			}
			r.line(mark + " " + firstLines(m.Content))
		}
	}
	r.line("—")
}

// startStream opens a streaming line with its label.
func (r *Renderer) startStream(kind string) {
	r.closeLine()
	r.open = kind
	if kind == "reasoning" {
		fmt.Fprint(r.w, r.dim("thinking: "))
		return
	}
	fmt.Fprint(r.w, "agent: ")
}

func (r *Renderer) closeLine() {
	if r.open != "" {
		fmt.Fprintln(r.w)
		r.open = ""
	}
}

// line prints a whole line.
func (r *Renderer) line(s string) {
	r.closeLine()
	fmt.Fprintln(r.w, s)
}

// note is a line that quiet mode leaves out.
func (r *Renderer) note(s string) {
	if !r.opts.Quiet {
		r.line(r.dim(s))
	}
}

func (r *Renderer) dim(s string) string {
	if !r.opts.Color || s == "" {
		return s
	}
	return "\x1b[2m" + s + "\x1b[22m"
}

// failurePattern matches the openings and endings of infer's tool outputs
// that report a failure.
var failurePattern = regexp.MustCompile(`(?i)^(not run:|the person rejected|the call was interrupted|no browser is connected|the browser (did not answer|extension disconnected|reported an error|returned an empty)|no element matches|url .* is not an absolute|.* did not finish within .* and was stopped\.|.* is not allowed|.*refused)|\n\nExit code: [1-9][0-9]*$`)

// browserSuccess are the openings of the browser tools' successful outputs.
var browserSuccess = []string{"Navigated to ", "Clicked ", "Typed ", "Page: ", "Screenshot of ", "No tabs are open."}

// tabsSuccess is the opening of BrowserTabs' successful output.
var tabsSuccess = regexp.MustCompile(`^\d+ open tabs?:`)

// LooksFailed guesses whether a tool result reports a failure. AG-UI's
// TOOL_CALL_RESULT carries no success flag, so a live transcript can only
// go by the wording of infer's outputs; snapshots carry tool_results and
// need no guess.
func LooksFailed(tool, content string) bool {
	if failurePattern.MatchString(content) {
		return true
	}
	if strings.HasPrefix(tool, "Browser") {
		if tabsSuccess.MatchString(content) {
			return false
		}
		for _, p := range browserSuccess {
			if strings.HasPrefix(content, p) {
				return false
			}
		}
		return true
	}
	return false
}

// firstLines is the first line of s, with a count of the rest.
func firstLines(s string) string {
	first, rest, more := strings.Cut(strings.TrimSpace(s), "\n")
	first = clip(first, 200)
	if more {
		n := strings.Count(rest, "\n") + 1
		first += fmt.Sprintf(" (+%d lines)", n)
	}
	return first
}

// clip shortens s to at most n runes.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// describeCommand is a one-line summary of a browser command.
func describeCommand(c wire.BrowserCommand) string {
	s := string(c.Action)
	for _, part := range []string{c.URL, c.Selector} {
		if part != "" {
			s += " " + part
		}
	}
	if c.Text != "" {
		s += fmt.Sprintf(" %q", c.Text)
	}
	if c.PressEnter {
		s += " ⏎"
	}
	return s
}
