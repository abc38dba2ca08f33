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
		{"open example.com; read h1 ; screenshot", []string{`BrowserNavigate {"url":"https://example.com"}`, `BrowserRead {"selector":"h1"}`, `BrowserScreenshot {}`}},
	}
	for _, c := range cases {
		calls, ok := ParseCommands(c.in)
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
	for _, bad := range []string{"hello", "open", "type x", "click", "tabs; hello", ""} {
		if _, ok := ParseCommands(bad); ok {
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
