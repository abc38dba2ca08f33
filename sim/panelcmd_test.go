package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/internal/infertest"
)

// startPanel starts a test infer and runs a client with the given profile
// (nil: the contract's) against it, subscribed before it connects, so no
// frame infer sends on connect is missed.
func startPanel(t *testing.T, p *Profile) (*infertest.Infer, *Client, *Subscription) {
	t.Helper()
	in := infertest.Start(t, infertest.Options{})
	c := NewClient(ClientOptions{URL: in.URL, Token: in.Token, Profile: p, Browser: &Minimal{}, MinBackoff: 10 * time.Millisecond})
	sub := c.Subscribe()
	t.Cleanup(sub.Close)
	runClient(t, c)
	return in, c, sub
}

// panelOn connects a client with the given profile to a test infer.
func panelOn(t *testing.T, p *Profile) (*Panel, *Client, *Subscription) {
	t.Helper()
	_, c, sub := startPanel(t, p)
	if err := c.WaitConnected(ctxGuard(t)); err != nil {
		t.Fatal(err)
	}
	return NewPanel(c), c, sub
}

func exec(t *testing.T, p *Panel, line string) string {
	t.Helper()
	out, err := p.Exec(ctxGuard(t), line)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return out
}

func waitRunEnd(t *testing.T, sub *Subscription) {
	t.Helper()
	if _, err := WaitFor(ctxGuard(t), sub, func(f wire.ChatEvent) bool {
		return strings.Contains(string(f.Event), `"RUN_FINISHED"`) || strings.Contains(string(f.Event), `"RUN_ERROR"`)
	}); err != nil {
		t.Fatal(err)
	}
}

func TestPanelCommandsAgainstInfer(t *testing.T) {
	t.Parallel()
	p, _, sub := panelOn(t, nil)
	if out := exec(t, p, "list"); out != "no stored conversations" {
		t.Errorf("list: %q", out)
	}
	exec(t, p, "think about lighthouses") // a bare line is a message
	waitRunEnd(t, sub)
	if out := exec(t, p, "list"); !strings.HasPrefix(out, " 1. ") || !strings.Contains(out, "2 messages") {
		t.Errorf("list: %q", out)
	}
	if out := exec(t, p, "resume 1"); !strings.HasPrefix(out, "resumed ") || !strings.HasSuffix(out, "(2 messages)") {
		t.Errorf("resume: %q", out)
	}
	if out := exec(t, p, "history"); !strings.Contains(out, "think about lighthouses") {
		t.Errorf("history: %q", out)
	}
	if out := exec(t, p, "skills"); !strings.Contains(out, "/tmux") {
		t.Errorf("skills: %q", out)
	}
	if out := exec(t, p, "models"); out != "* offline/demo" {
		t.Errorf("models: %q", out)
	}
	if out := exec(t, p, "model offline/demo"); out != "model: offline/demo" {
		t.Errorf("model: %q", out)
	}
	if out := exec(t, p, "mode plan"); out != "mode: plan" {
		t.Errorf("mode: %q", out)
	}
	if _, err := p.Exec(ctxGuard(t), "mode sideways"); err == nil || !strings.Contains(err.Error(), `"sideways" is not a mode`) {
		t.Errorf("bad mode: %v", err)
	}
	exec(t, p, "mode standard")

	// A tool request that needs approval: approve the latest from the panel.
	out := exec(t, p, `tool Bash {"command":"touch from-panel.txt"}`)
	id := strings.TrimSuffix(strings.TrimPrefix(out, "tool_request "), " sent")
	if _, err := WaitFor[wire.ApprovalRequest](ctxGuard(t), sub, nil); err != nil {
		t.Fatal(err)
	}
	if out := exec(t, p, "approve"); !strings.HasPrefix(out, "approved ") {
		t.Errorf("approve: %q", out)
	}
	res, err := WaitFor(ctxGuard(t), sub, func(r wire.ToolResult) bool { return r.ID == id })
	if err != nil || !res.Success {
		t.Fatalf("tool result %+v %v", res, err)
	}
	if _, err := p.Exec(ctxGuard(t), "approve"); err == nil || !strings.Contains(err.Error(), "no approval is pending") {
		t.Errorf("approve with nothing pending: %v", err)
	}

	// new starts an empty conversation.
	exec(t, p, "new")
	if snap, err := WaitFor[wire.ConversationSnapshot](ctxGuard(t), sub, nil); err != nil || len(snap.Messages) != 0 {
		t.Fatalf("snapshot after new: %+v %v", snap, err)
	}
	for line, want := range map[string]string{
		"say":              "say what?",
		"model":            "model needs an id",
		"tool":             "tool needs a tool name",
		`tool Bash {"x":`:  "not valid JSON",
		"resume 9":         "no conversation number 9",
		"resume not-an-id": "infer sent no snapshot",
	} {
		if line == "resume not-an-id" {
			p.Timeout = 300 * time.Millisecond
		}
		if _, err := p.Exec(ctxGuard(t), line); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", line, err, want)
		}
	}
	if _, err := p.Exec(ctxGuard(t), "quit"); !errors.Is(err, ErrQuit) {
		t.Errorf("quit: %v", err)
	}
	if out := exec(t, p, "help"); out != PanelHelp {
		t.Errorf("help: %q", out)
	}
}

func TestOpenTaskPanelSendsClearAndRefusesTheRest(t *testing.T) {
	t.Parallel()
	p, _, sub := panelOn(t, OpenTask)
	exec(t, p, "say hello")
	waitRunEnd(t, sub)
	exec(t, p, "new")
	if snap, err := WaitFor[wire.ConversationSnapshot](ctxGuard(t), sub, nil); err != nil || len(snap.Messages) != 0 {
		t.Fatalf("New chat: %+v %v", snap, err)
	}
	for _, line := range []string{"interrupt", "history", "models", "model a/b", "mode auto", `tool Bash {}`} {
		var refused *RefusedError
		if _, err := p.Exec(ctxGuard(t), line); !errors.As(err, &refused) {
			t.Errorf("%s: %v, want refused by the profile", line, err)
		}
	}
}

func chat(t *testing.T, event string) wire.ChatEvent {
	t.Helper()
	if !json.Valid([]byte(event)) {
		t.Fatalf("bad event %s", event)
	}
	return wire.ChatEvent{Event: json.RawMessage(event)}
}

func TestRendererShowsTheChatAsItStreams(t *testing.T) {
	t.Parallel()
	frames := []wire.Frame{
		chat(t, `{"type":"RUN_STARTED"}`),
		chat(t, `{"type":"REASONING_MESSAGE_START"}`),
		chat(t, `{"type":"REASONING_MESSAGE_CONTENT","delta":"Thinking about: "}`),
		chat(t, `{"type":"REASONING_MESSAGE_CONTENT","delta":"cats"}`),
		chat(t, `{"type":"REASONING_MESSAGE_END"}`),
		chat(t, `{"type":"TEXT_MESSAGE_START","role":"assistant"}`),
		chat(t, `{"type":"TEXT_MESSAGE_CONTENT","delta":"Calling "}`),
		chat(t, `{"type":"TEXT_MESSAGE_CONTENT","delta":"Bash."}`),
		chat(t, `{"type":"TEXT_MESSAGE_END"}`),
		chat(t, `{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"Bash"}`),
		chat(t, `{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"command\":"}`),
		chat(t, `{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"\"ls\"}"}`),
		chat(t, `{"type":"TOOL_CALL_END","toolCallId":"c1"}`),
		wire.ApprovalRequest{RequestID: "r1", ToolName: "Bash", ToolArgs: `{"command":"ls"}`},
		wire.ApprovalResolved{RequestID: "r1"},
		chat(t, `{"type":"TOOL_CALL_RESULT","toolCallId":"c1","content":"a\nb\n\nExit code: 2"}`),
		chat(t, `{"type":"TOOL_CALL_START","toolCallId":"c2","toolCallName":"BrowserNavigate"}`),
		chat(t, `{"type":"TOOL_CALL_END","toolCallId":"c2"}`),
		chat(t, `{"type":"TOOL_CALL_RESULT","toolCallId":"c2","content":"Navigated to Tidewater Library (http://demo.infer.localhost/)."}`),
		chat(t, `{"type":"CUSTOM","name":"infer.user_message","value":{"content":"hi from the terminal","origin":"tui"}}`),
		chat(t, `{"type":"RUN_ERROR","message":"interrupted","code":"interrupted"}`),
		wire.Interrupted{},
		wire.ToolResult{ID: "t1", Success: false, Error: "denied"},
		wire.BrowserCommand{ID: "b", Action: "read", Selector: "h1"},
	}
	render := func(opts RenderOptions) string {
		var b bytes.Buffer
		r := NewRenderer(&b, opts)
		for _, f := range frames {
			r.Frame(f)
		}
		return b.String()
	}
	want := `▶ run started
thinking: Thinking about: cats
agent: Calling Bash.
→ Bash {"command":"ls"}
? approval needed [r1]: Bash {"command":"ls"}
  answer with ` + "`approve` or `reject` (or `approve r1`)" + `
· approval r1 resolved
✗ a (+3 lines)
→ BrowserNavigate 
✓ Navigated to Tidewater Library (http://demo.infer.localhost/).
you (tui): hi from the terminal
✗ run ended: interrupted (interrupted)
⏹ interrupted
✗ tool_result t1: denied
`
	if got := render(RenderOptions{}); got != want {
		t.Errorf("normal:\n%s\nwant:\n%s", got, want)
	}
	quiet := render(RenderOptions{Quiet: true})
	for _, gone := range []string{"▶", "thinking", "→", "✓ Navigated", "⏹"} {
		if strings.Contains(quiet, gone) {
			t.Errorf("quiet output shows %q:\n%s", gone, quiet)
		}
	}
	for _, kept := range []string{"agent: Calling Bash.", "? approval needed", "you (tui)", "✗ run ended"} {
		if !strings.Contains(quiet, kept) {
			t.Errorf("quiet output lacks %q:\n%s", kept, quiet)
		}
	}
	if v := render(RenderOptions{Verbose: true}); !strings.Contains(v, "· browser read h1") {
		t.Errorf("verbose output lacks the browser command:\n%s", v)
	}
	if c := render(RenderOptions{Color: true}); !strings.Contains(c, "\x1b[2mthinking: \x1b[22m") {
		t.Errorf("color output does not dim reasoning:\n%q", c)
	}
}

func TestRendererShowsSnapshotsWithTheirToolResults(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	r := NewRenderer(&b, RenderOptions{})
	r.Frame(wire.ConversationSnapshot{
		Messages: []wire.Message{
			{Role: "user", Content: "run ls"},
			{Role: "assistant", Content: "Calling Bash.", ToolCalls: []wire.ToolCall{{ID: "c1", Function: wire.FunctionCall{Name: "Bash", Arguments: `{"command":"ls"}`}}}},
			{Role: "tool", ToolCallID: "c1", Content: "The person rejected this call."},
		},
		ToolResults: map[string]bool{"c1": false},
	})
	r.Frame(wire.ConversationSnapshot{})
	want := `— conversation, 3 messages —
you: run ls
agent: Calling Bash.
→ Bash {"command":"ls"}
✗ The person rejected this call.
—
— new conversation —
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestLooksFailed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tool, content string
		failed        bool
	}{
		{"Bash", "hello\n\nExit code: 1", true},
		{"Bash", "hello", false},
		{"Bash", "The person rejected this call.", true},
		{"BrowserRead", "Page: x (y)\n\ntext", false},
		{"BrowserRead", `no element matches the selector "#x" on x`, true},
		{"BrowserNavigate", "the browser reported an error: net::ERR_NAME_NOT_RESOLVED", true},
		{"BrowserTabs", "2 open tabs:\n0. a", false},
		{"BrowserTabs", "1 open tab:\n0. a", false},
		{"Read", "file contents", false},
		{"Write", "Not run: the turn was interrupted before this call started.", true},
	} {
		if got := LooksFailed(tc.tool, tc.content); got != tc.failed {
			t.Errorf("%s %q: %v", tc.tool, tc.content, got)
		}
	}
}
