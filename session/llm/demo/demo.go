// Package demo is offline/demo, infer's built-in deterministic model. It is
// not an LLM and says so: it turns a few plain commands in the person's last
// message into tool calls, streams its words as separate deltas, and sums up
// tool results, so the workspace works offline and tests are exact.
//
// Commands (several may be joined with ";", done in order, the tool calls
// together at the end of the turn): open|go to|navigate <url>,
// click <selector>, type <text> into <selector> [and press enter],
// read [selector], screenshot, tabs, run <command>, search <query> (the
// WebSearch tool, when the provider offers it),
// mcp <server> <tool> [json arguments], think <text>,
// stream <n>, fail.
package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/tools"
)

// ID is the model id under which the workspace offers this model.
const ID = "offline/demo"

// Model is the offline demo model. The zero value streams without delay.
type Model struct {
	// Delay is the pause between streamed words (a few ms makes streaming
	// visible; zero is for benchmarks).
	Delay time.Duration
}

// New returns the demo model with a delay that makes streaming visible.
func New() *Model { return &Model{Delay: 8 * time.Millisecond} }

// Hint lists the commands the model understands.
const Hint = "Try: open <url> · click <selector> · type <text> into <selector> [and press enter] · " +
	"read [selector] · screenshot · tabs · run <command> · search <query> · mcp <server> <tool> [json arguments] · " +
	"think <text> · stream <n> · fail " +
	"(join several with ;)."

// MaxStream bounds `stream <n>` so a typo cannot stream forever.
const MaxStream = 1_000_000

// Stream implements llm.Provider.
func (m *Model) Stream(ctx context.Context, req llm.Request, emit func(llm.Delta)) (llm.Completion, error) {
	s := &streamer{ctx: ctx, delay: m.Delay, emit: emit}
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == llm.RoleTool {
		return s.summarise(req.Messages)
	}
	return s.answer(lastUser(req.Messages), req.Tools, len(req.Messages))
}

type streamer struct {
	ctx   context.Context
	delay time.Duration
	emit  func(llm.Delta)
	comp  llm.Completion
	words int
	// text and reasoning accumulate the streamed words; appending to a
	// string per word would copy the whole answer each time.
	text, reasoning strings.Builder
}

// say streams text word by word (each word with its trailing space).
func (s *streamer) say(kind llm.DeltaKind, text string) error {
	for _, w := range splitWords(text) {
		if err := s.pause(); err != nil {
			return err
		}
		s.emit(llm.Delta{Kind: kind, Text: w})
		if kind == llm.ReasoningDelta {
			s.reasoning.WriteString(w)
		} else {
			s.text.WriteString(w)
		}
		s.words++
	}
	return nil
}

func (s *streamer) pause() error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	if s.delay <= 0 {
		return nil
	}
	t := time.NewTimer(s.delay)
	defer t.Stop()
	select {
	case <-s.ctx.Done():
		return s.ctx.Err()
	case <-t.C:
		return nil
	}
}

func (s *streamer) done(err error) (llm.Completion, error) {
	s.comp.Text, s.comp.Reasoning = s.text.String(), s.reasoning.String()
	s.comp.Usage.OutputTokens = s.words
	if err == nil {
		s.comp.FinishReason = "stop"
		if len(s.comp.ToolCalls) > 0 {
			s.comp.FinishReason = "tool_calls"
		}
	}
	return s.comp, err
}

// answer replies to the person's message. seq (the history length) makes
// tool call ids unique within a conversation yet deterministic.
func (s *streamer) answer(msg string, offered []llm.Tool, seq int) (llm.Completion, error) {
	toolsOffered := hasTools(offered)
	text := strings.TrimSpace(msg)
	steps, complaint, ok := parseSteps(text)
	if !ok {
		// "think" takes the rest of the message when it is not a list of
		// commands, so a thought may contain a semicolon.
		if lower := strings.ToLower(text); strings.HasPrefix(lower, "think ") {
			return s.done(s.think(strings.TrimSpace(text[len("think "):])))
		}
		if complaint == "" {
			complaint = fmt.Sprintf("I am infer's offline demo model, not an LLM, so I only follow a few commands. You said: “%s”. %s", text, Hint)
		}
		return s.done(s.say(llm.TextDelta, complaint))
	}
	var calls []llm.ToolCall
	for _, st := range steps {
		if st.kind == stepCall {
			calls = append(calls, st.call)
		}
	}
	if len(calls) > 0 && !toolsOffered {
		return s.done(s.say(llm.TextDelta, "I would call tools for that, but no tools are available in this turn."))
	}
	for _, c := range calls {
		// Only WebSearch is checked: the other tools are the workspace's
		// own and always offered together.
		if c.Name == tools.NameWebSearch && !offersTool(offered, c.Name) {
			// Fail closed: a search nobody can run is not answered from
			// memory as though it had been.
			return s.done(s.say(llm.TextDelta, "I would search the web for that, but this model's provider has no hosted web search, so nothing was searched."))
		}
	}
	for _, st := range steps {
		var err error
		switch st.kind {
		case stepThink:
			err = s.think(st.text)
		case stepStream:
			err = s.count(st.n)
		case stepFail:
			if err := s.say(llm.TextDelta, s.sep()+"This reply will fail halfway, as you asked."); err != nil {
				return s.done(err)
			}
			return s.done(&llm.Error{Kind: llm.ErrStream, Provider: "offline", Model: "demo",
				Message: "simulated provider failure mid-stream (you asked for it with `fail`)"})
		}
		if err != nil {
			return s.done(err)
		}
	}
	if len(calls) == 0 {
		return s.done(nil)
	}
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
	}
	if err := s.say(llm.TextDelta, s.sep()+"Calling "+strings.Join(names, ", ")+"."); err != nil {
		return s.done(err)
	}
	for i, c := range calls {
		c.ID = fmt.Sprintf("call_demo_%d_%d", seq, i)
		s.emit(llm.Delta{Kind: llm.ToolCallDelta, ToolCall: llm.ToolCallFragment{Index: i, ID: c.ID, Name: c.Name, Arguments: c.Arguments}})
		s.comp.ToolCalls = append(s.comp.ToolCalls, c)
	}
	return s.done(nil)
}

// think streams a thought as reasoning, then a line of text about it.
func (s *streamer) think(thought string) error {
	if err := s.say(llm.ReasoningDelta, "Thinking about: "+thought); err != nil {
		return err
	}
	return s.say(llm.TextDelta, s.sep()+"I thought about “"+thought+"”. I am the offline demo model, so that is as deep as it goes.")
}

// count streams the numbers 1 to n, one word each.
func (s *streamer) count(n int) error {
	if sep := s.sep(); sep != "" {
		s.emit(llm.Delta{Kind: llm.TextDelta, Text: sep})
		s.text.WriteString(sep)
	}
	for i := 1; i <= n; i++ {
		if err := s.pause(); err != nil {
			return err
		}
		w := strconv.Itoa(i) + " "
		s.emit(llm.Delta{Kind: llm.TextDelta, Text: w})
		s.text.WriteString(w)
		s.words++
	}
	return nil
}

// sep is what goes before the next piece of text so that it does not run
// into the previous one: a line break after text that ends without a
// space, nothing otherwise.
func (s *streamer) sep() string {
	t := s.text.String()
	if t == "" || strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\n") {
		return ""
	}
	return "\n"
}

// stepKind says what one ";"-separated part of a message asks for.
type stepKind int

const (
	stepCall stepKind = iota
	stepThink
	stepStream
	stepFail
)

// step is one part of a message: a tool call, or one of the commands the
// model answers itself (think, stream, fail).
type step struct {
	kind stepKind
	call llm.ToolCall
	text string
	n    int
}

// parseSteps splits a message at ";" into steps. It reports false when a
// part is not a command, with the complaint to answer when the part was
// meant as one but is malformed (such as "stream lots"), or "" when it is
// simply not a command.
func parseSteps(msg string) ([]step, string, bool) {
	var steps []step
	for _, part := range strings.Split(msg, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lower := strings.ToLower(part)
		switch {
		case lower == "fail":
			steps = append(steps, step{kind: stepFail})
		case strings.HasPrefix(lower, "think ") && strings.TrimSpace(part[len("think "):]) != "":
			steps = append(steps, step{kind: stepThink, text: strings.TrimSpace(part[len("think "):])})
		case strings.HasPrefix(lower, "stream "):
			n, err := strconv.Atoi(strings.TrimSpace(part[len("stream "):]))
			if err != nil || n < 1 || n > MaxStream {
				return nil, fmt.Sprintf("stream takes a whole number from 1 to %d.", MaxStream), false
			}
			steps = append(steps, step{kind: stepStream, n: n})
		default:
			c, ok := parseCommand(part)
			if !ok {
				return nil, "", false
			}
			steps = append(steps, step{kind: stepCall, call: c})
		}
	}
	return steps, "", len(steps) > 0
}

// summarise answers the tool results that follow the last assistant message
// with one line per result.
func (s *streamer) summarise(msgs []llm.Message) (llm.Completion, error) {
	start := len(msgs)
	for start > 0 && msgs[start-1].Role == llm.RoleTool {
		start--
	}
	names := map[string]string{}
	if start > 0 {
		for _, c := range msgs[start-1].ToolCalls {
			names[c.ID] = c.Name
		}
	}
	var lines, images []string
	for _, m := range msgs[start:] {
		name := names[m.ToolCallID]
		if name == "" {
			name = "tool"
		}
		// A picture the tool offers to show is shown, as a model would,
		// on a line of its own; the summary line keeps the rest, so a long
		// line is never cut in the middle of the picture's name.
		content := m.Content
		if img := imageLink.FindString(content); img != "" {
			images = append(images, img)
			content = imageLink.ReplaceAllString(content, "")
			content = strings.TrimSuffix(strings.TrimSpace(content), "Show it to the person with .")
		}
		lines = append(lines, "- "+name+": "+oneLine(content, 200))
	}
	text := "Done.\n" + strings.Join(lines, "\n")
	if len(images) > 0 {
		text += "\n\n" + strings.Join(images, "\n")
	}
	return s.done(s.say(llm.TextDelta, text))
}

// imageLink finds the Markdown image a tool result offers to show, such as
// the screenshot tool's ![screenshot](/artifacts/…).
var imageLink = regexp.MustCompile(`!\[[^\]]*\]\(/artifacts/[^)\s]+\)`)

func parseCommand(part string) (llm.ToolCall, bool) {
	lower := strings.ToLower(part)
	rest := func(prefix string) string { return strings.TrimSpace(part[len(prefix):]) }
	call := func(name string, args map[string]any) (llm.ToolCall, bool) {
		// Not json.Marshal: its HTML escaping turns a command's && into
		// \u0026\u0026, which every front end then shows as written.
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(args)
		return llm.ToolCall{Name: name, Arguments: strings.TrimSuffix(b.String(), "\n")}, true
	}
	for _, p := range []string{"navigate ", "open ", "go to "} {
		if strings.HasPrefix(lower, p) && rest(p) != "" {
			return call(tools.NameBrowserNavigate, map[string]any{"url": NormaliseURL(rest(p))})
		}
	}
	switch {
	case strings.HasPrefix(lower, "click ") && rest("click ") != "":
		return call(tools.NameBrowserClick, map[string]any{"selector": unquote(rest("click "))})
	case strings.HasPrefix(lower, "type "):
		body := rest("type ")
		enter := false
		if l := strings.ToLower(body); strings.HasSuffix(l, " and press enter") {
			body = strings.TrimSpace(body[:len(body)-len(" and press enter")])
			enter = true
		}
		i := strings.LastIndex(strings.ToLower(body), " into ")
		if i < 0 {
			return llm.ToolCall{}, false
		}
		text, sel := unquote(strings.TrimSpace(body[:i])), unquote(strings.TrimSpace(body[i+len(" into "):]))
		if sel == "" {
			return llm.ToolCall{}, false
		}
		args := map[string]any{"selector": sel, "text": text}
		if enter {
			args["press_enter"] = true
		}
		return call(tools.NameBrowserType, args)
	case lower == "read":
		return call(tools.NameBrowserRead, map[string]any{})
	case strings.HasPrefix(lower, "read "):
		return call(tools.NameBrowserRead, map[string]any{"selector": unquote(rest("read "))})
	case lower == "screenshot":
		return call(tools.NameBrowserScreenshot, map[string]any{})
	case lower == "tabs":
		return call(tools.NameBrowserTabs, map[string]any{})
	case strings.HasPrefix(lower, "search ") && rest("search ") != "":
		return call(tools.NameWebSearch, map[string]any{"query": rest("search ")})
	case strings.HasPrefix(lower, "run ") && rest("run ") != "":
		return call(tools.NameBash, map[string]any{"command": rest("run ")})
	case strings.HasPrefix(lower, "mcp "):
		return mcpCall(rest("mcp "))
	}
	return llm.ToolCall{}, false
}

// mcpCall turns "<server> <tool> [json arguments]" into a call of the MCP
// tool mcp__<server>__<tool>, with the arguments as written ({} when
// none); arguments that are not a JSON object are not a command.
func mcpCall(body string) (llm.ToolCall, bool) {
	server, body, _ := strings.Cut(strings.TrimSpace(body), " ")
	tool, args, _ := strings.Cut(strings.TrimSpace(body), " ")
	args = strings.TrimSpace(args)
	if server == "" || tool == "" {
		return llm.ToolCall{}, false
	}
	if args == "" {
		args = "{}"
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return llm.ToolCall{}, false
	}
	return llm.ToolCall{Name: "mcp__" + server + "__" + tool, Arguments: args}, true
}

// NormaliseURL adds a scheme to a bare address: http for local hosts (the
// demo site, localhost, loopback), https otherwise.
func NormaliseURL(u string) string {
	u = unquote(u)
	if strings.Contains(u, "://") || strings.HasPrefix(u, "about:") || strings.HasPrefix(u, "data:") {
		return u
	}
	host := u
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	h := host
	if i := strings.LastIndex(h, ":"); i >= 0 {
		h = h[:i]
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") || strings.HasPrefix(h, "127.") || h == "[::1]" {
		return "http://" + u
	}
	return "https://" + u
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

func lastUser(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser {
			return msgs[i].Content
		}
	}
	return ""
}

func hasTools(ts []llm.Tool) bool { return len(ts) > 0 }

func offersTool(ts []llm.Tool, name string) bool {
	for _, t := range ts {
		if t.Name == name {
			return true
		}
	}
	return false
}

// splitWords cuts text after each run of spaces, keeping the spaces with the
// word before them, so the deltas concatenate back to the exact text.
func splitWords(text string) []string {
	var out []string
	start := 0
	inSpace := false
	for i, r := range text {
		sp := unicode.IsSpace(r)
		if inSpace && !sp {
			out = append(out, text[start:i])
			start = i
		}
		inSpace = sp
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// oneLine collapses whitespace and shortens text to at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	if s == "" {
		return "(empty)"
	}
	return s
}

// Title derives a conversation title from the first user message: the
// offline model's deterministic stand-in for a generated title.
func Title(firstMessage string) string {
	words := strings.Fields(firstMessage)
	if len(words) > 6 {
		words = words[:6]
	}
	t := strings.Join(words, " ")
	if t == "" {
		return "New conversation"
	}
	r := []rune(t)
	r[0] = unicode.ToUpper(r[0])
	if len(r) > 60 {
		r = append(r[:59], '…')
	}
	return string(r)
}

// LocalTitle implements llm.LocalTitler: the offline model titles a
// conversation with Title, as it has no model to ask.
func (m *Model) LocalTitle(firstUser, _ string) string { return Title(firstUser) }

// JudgedByRule implements llm.RuleJudged: the offline model's answers are
// scripted, so they cannot review a call.
func (m *Model) JudgedByRule() bool { return true }

var (
	_ llm.LocalTitler = (*Model)(nil)
	_ llm.RuleJudged  = (*Model)(nil)
)
