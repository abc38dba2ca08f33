package demo

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/session/llm"
)

var someTools = []llm.Tool{{Name: "Bash"}}

func run(t *testing.T, m *Model, msgs ...llm.Message) (llm.Completion, []llm.Delta, error) {
	t.Helper()
	var ds []llm.Delta
	c, err := m.Stream(context.Background(), llm.Request{Messages: msgs, Tools: someTools}, func(d llm.Delta) { ds = append(ds, d) })
	return c, ds, err
}

func user(s string) llm.Message { return llm.Message{Role: llm.RoleUser, Content: s} }

func TestParseCommands(t *testing.T) {
	cases := []struct {
		in   string
		want []string // name + args
	}{
		{"open example.com", []string{`BrowserNavigate {"url":"https://example.com"}`}},
		{"go to http://demo.infer.localhost/", []string{`BrowserNavigate {"url":"http://demo.infer.localhost/"}`}},
		{"navigate demo.infer.localhost/search", []string{`BrowserNavigate {"url":"http://demo.infer.localhost/search"}`}},
		{"navigate localhost:8080", []string{`BrowserNavigate {"url":"http://localhost:8080"}`}},
		{"click a.more", []string{`BrowserClick {"selector":"a.more"}`}},
		{`type "hello world" into input[name=q] and press enter`, []string{`BrowserType {"press_enter":true,"selector":"input[name=q]","text":"hello world"}`}},
		{"type x into #q", []string{`BrowserType {"selector":"#q","text":"x"}`}},
		{"read", []string{`BrowserRead {}`}},
		{"read h1", []string{`BrowserRead {"selector":"h1"}`}},
		{"Screenshot", []string{`BrowserScreenshot {}`}},
		{"tabs", []string{`BrowserTabs {}`}},
		{"run ls -la", []string{`Bash {"command":"ls -la"}`}},
		{`mcp github search_issues {"query": "is:open"}`, []string{`mcp__github__search_issues {"query": "is:open"}`}},
		{"mcp t echo", []string{`mcp__t__echo {}`}},
		{"open example.com; read h1 ; screenshot", []string{`BrowserNavigate {"url":"https://example.com"}`, `BrowserRead {"selector":"h1"}`, `BrowserScreenshot {}`}},
	}
	for _, c := range cases {
		calls, ok := parseCommands(c.in)
		if !ok {
			t.Errorf("%q: not parsed", c.in)
			continue
		}
		var got []string
		for _, call := range calls {
			got = append(got, call.Name+" "+call.Arguments)
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%q:\n got %q\nwant %q", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"hello", "open", "type x", "click", "tabs; hello", "", "mcp", "mcp t", "mcp t echo [1]", "mcp t echo {oops"} {
		if _, ok := parseCommands(bad); ok {
			t.Errorf("%q parsed as commands", bad)
		}
	}
}

func TestUnknownMessageQuotesAndHints(t *testing.T) {
	c, ds, err := run(t, &Model{}, user("what is the weather"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.Text, "“what is the weather”") || !strings.Contains(c.Text, "not an LLM") || !strings.Contains(c.Text, Hint) {
		t.Fatalf("reply %q", c.Text)
	}
	if len(ds) < 10 {
		t.Fatalf("words should stream as separate deltas, got %d", len(ds))
	}
	var joined string
	for _, d := range ds {
		joined += d.Text
	}
	if joined != c.Text {
		t.Fatalf("deltas do not add up to the text")
	}
}

func TestThinkStreamsReasoningThenAnswer(t *testing.T) {
	c, ds, err := run(t, &Model{}, user("think about tabs"))
	if err != nil {
		t.Fatal(err)
	}
	if ds[0].Kind != llm.ReasoningDelta || ds[len(ds)-1].Kind != llm.TextDelta {
		t.Fatalf("want reasoning first, text last")
	}
	if c.Reasoning != "Thinking about: about tabs" || !strings.Contains(c.Text, "about tabs") {
		t.Fatalf("%+v", c)
	}
}

func TestStreamN(t *testing.T) {
	c, ds, _ := run(t, &Model{}, user("stream 5"))
	if c.Text != "1 2 3 4 5 " || len(ds) != 5 {
		t.Fatalf("%q %d", c.Text, len(ds))
	}
	c, _, _ = run(t, &Model{}, user("stream lots"))
	if !strings.Contains(c.Text, "whole number") {
		t.Fatalf("%q", c.Text)
	}
}

func TestFailErrorsMidStreamWithPartial(t *testing.T) {
	c, _, err := run(t, &Model{}, user("fail"))
	if llm.KindOf(err) != llm.ErrStream || c.Text == "" {
		t.Fatalf("err %v text %q", err, c.Text)
	}
}

func TestToolCallsAndSummary(t *testing.T) {
	c, ds, err := run(t, &Model{}, user("open example.com; run echo hi"))
	if err != nil || len(c.ToolCalls) != 2 || c.FinishReason != "tool_calls" {
		t.Fatalf("%+v %v", c, err)
	}
	frag := 0
	for _, d := range ds {
		if d.Kind == llm.ToolCallDelta {
			frag++
		}
	}
	if frag != 2 {
		t.Fatalf("tool call deltas %d", frag)
	}
	hist := []llm.Message{user("x"), {Role: llm.RoleAssistant, ToolCalls: c.ToolCalls},
		{Role: llm.RoleTool, ToolCallID: c.ToolCalls[0].ID, Content: "Example Domain\nhttps://example.com/"},
		{Role: llm.RoleTool, ToolCallID: c.ToolCalls[1].ID, Content: "exit code 0\nhi"}}
	s, _, err := run(t, &Model{}, hist...)
	if err != nil {
		t.Fatal(err)
	}
	want := "Done.\n- BrowserNavigate: Example Domain https://example.com/\n- Bash: exit code 0 hi"
	if s.Text != want {
		t.Fatalf("summary:\n%q\nwant\n%q", s.Text, want)
	}
}

func TestInterruptStopsPromptly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	m := &Model{Delay: time.Millisecond}
	n := 0
	c, err := m.Stream(ctx, llm.Request{Messages: []llm.Message{user("stream 100000")}}, func(d llm.Delta) {
		n++
		if n == 3 {
			cancel()
		}
	})
	if err == nil || c.Text != "1 2 3 " {
		t.Fatalf("err %v text %q", err, c.Text)
	}
}

func TestTitle(t *testing.T) {
	if got := Title("open the demo site and read the heading please"); got != "Open the demo site and read" {
		t.Fatalf("%q", got)
	}
	if Title("   ") != "New conversation" {
		t.Fatal("empty title")
	}
}

// TestJoinedCommandsMixAnswersAndToolCalls: think, stream and fail may be
// joined with tool commands by ";", as the hint says; each part is done in
// order and the tool calls end the turn.
func TestJoinedCommandsMixAnswersAndToolCalls(t *testing.T) {
	c, _, err := run(t, &Model{}, user("stream 150; run touch later.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Text, "1 2 3 ") || !strings.Contains(c.Text, " 150 Calling Bash.") {
		t.Errorf("text %q", c.Text)
	}
	if len(c.ToolCalls) != 1 || c.ToolCalls[0].Arguments != `{"command":"touch later.txt"}` || c.FinishReason != "tool_calls" {
		t.Errorf("calls %+v, finish %q", c.ToolCalls, c.FinishReason)
	}

	c, _, err = run(t, &Model{}, user("think first; read h1; stream 2"))
	if err != nil || c.Reasoning != "Thinking about: first" || len(c.ToolCalls) != 1 {
		t.Fatalf("%+v %v", c, err)
	}
	if want := "I thought about “first”. I am the offline demo model, so that is as deep as it goes.\n1 2 Calling BrowserRead."; c.Text != want {
		t.Errorf("text %q, want %q", c.Text, want)
	}

	c, _, err = run(t, &Model{}, user("stream 2; fail; run ls"))
	if llm.KindOf(err) != llm.ErrStream || len(c.ToolCalls) != 0 || !strings.HasPrefix(c.Text, "1 2 This reply will fail") {
		t.Errorf("%+v %v", c, err)
	}

	// A malformed stream is still named, wherever it is; a part that is no
	// command makes the whole message a question, as before.
	for msg, want := range map[string]string{
		"run ls; stream lots":  "stream takes a whole number",
		"stream 3; what now?":  "You said: “stream 3; what now?”",
		"think a; b":           "I thought about “a; b”",
		"stream 1000001; tabs": "from 1 to 1000000",
	} {
		c, _, err := run(t, &Model{}, user(msg))
		if err != nil || !strings.Contains(c.Text, want) || len(c.ToolCalls) != 0 {
			t.Errorf("%q: %q %v, want %q and no calls", msg, c.Text, err, want)
		}
	}

	// Without tools, a joined tool command is refused as a single one is.
	var ds []llm.Delta
	c, err = (&Model{}).Stream(context.Background(), llm.Request{Messages: []llm.Message{user("stream 2; tabs")}}, func(d llm.Delta) { ds = append(ds, d) })
	if err != nil || !strings.Contains(c.Text, "no tools are available") {
		t.Errorf("no tools: %q %v", c.Text, err)
	}
}

func TestSearchCallsWebSearchOnlyWhenOffered(t *testing.T) {
	req := llm.Request{Messages: []llm.Message{user("search go 1.26 release")}, Tools: append(someTools[:len(someTools):len(someTools)], llm.Tool{Name: "WebSearch"})}
	c, err := (&Model{}).Stream(context.Background(), req, func(llm.Delta) {})
	if err != nil || len(c.ToolCalls) != 1 || c.ToolCalls[0].Name != "WebSearch" || c.ToolCalls[0].Arguments != `{"query":"go 1.26 release"}` {
		t.Fatalf("%+v %v", c, err)
	}
	c, _, err = run(t, &Model{}, user("search go 1.26 release"))
	if err != nil || len(c.ToolCalls) != 0 || !strings.Contains(c.Text, "no hosted web search") {
		t.Fatalf("without the tool: %+v %v", c, err)
	}
}

// parseCommands turns a message made only of tool commands into its tool
// calls, or reports false, so that the command grammar can be tested apart
// from the steps the model takes.
func parseCommands(msg string) ([]llm.ToolCall, bool) {
	var calls []llm.ToolCall
	for _, part := range strings.Split(msg, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		c, ok := parseCommand(part)
		if !ok {
			return nil, false
		}
		calls = append(calls, c)
	}
	return calls, len(calls) > 0
}
