package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/infer-workspace/infer/bridge/wire"
)

// ErrQuit is what Panel.Exec returns for the quit command.
var ErrQuit = errors.New("quit")

// PanelHelp lists the panel commands, for --panel's help command and the
// scenario documentation.
const PanelHelp = `Panel commands (a line that is not a command is sent as a message):
  say <text>            send a message (as typing in the panel)
  list                  list the stored conversations
  resume <id|n|latest>  show a stored conversation (n: its number in the last list)
  new                   start a new conversation (the New chat button)
  interrupt             stop the running turn
  approve [id]          approve a tool call (default: the latest pending one)
  reject [id]           reject a tool call (default: the latest pending one)
  history               show the shared input history
  skills                list the skills
  models                list the models
  model <id>            switch the model
  mode <mode>           switch the mode: standard, plan, auto, auto-with-judge
  tool <name> [json]    run one of infer's tools, e.g. tool Bash {"command":"ls"}
  help                  show this help
  quit                  leave`

// Panel is the extension's side panel driven by typed commands, the way a
// person uses it: infer-sim --panel reads them from stdin, and scenarios
// run them as steps. It sends what the client's profile lets its panel
// send and refuses the rest with a *RefusedError. Answers that arrive
// later (chat events, approvals, tool results) are for a Renderer to show.
type Panel struct {
	c *Client
	// Timeout bounds waiting for an answer (default 15s).
	Timeout time.Duration

	mu    sync.Mutex
	convs []wire.ConversationInfo // the last list, for "resume <n>"
}

// NewPanel returns a panel on c.
func NewPanel(c *Client) *Panel {
	return &Panel{c: c, Timeout: 15 * time.Second}
}

// Exec runs one command line and returns what to show for it ("" when the
// answer arrives as frames for the renderer). Unknown commands and bad
// arguments are errors that say what to type instead.
func (p *Panel) Exec(ctx context.Context, line string) (string, error) {
	line = strings.TrimSpace(line)
	if line == "" {
		return "", nil
	}
	cmd, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	ctx, cancel := context.WithTimeout(ctx, p.Timeout)
	defer cancel()
	switch strings.ToLower(cmd) {
	case "say":
		if arg == "" {
			return "", errors.New("say what? e.g. say open demo.infer.localhost")
		}
		return "", p.c.SendUserMessage(ctx, arg)
	case "list":
		return p.list(ctx)
	case "resume":
		return p.resume(ctx, arg)
	case "new":
		if chat := p.c.Profile().NewChat; chat != "" {
			return "", p.c.SendUserMessage(ctx, chat)
		}
		_, err := p.c.NewSession(ctx)
		return "", err
	case "interrupt":
		return "", p.c.Interrupt(ctx)
	case "approve", "reject":
		return p.answer(ctx, strings.ToLower(cmd), arg)
	case "history":
		h, err := p.c.ListHistory(ctx)
		if err != nil {
			return "", err
		}
		if len(h.History) == 0 {
			return "history is empty", nil
		}
		var b strings.Builder
		for i, e := range h.History {
			fmt.Fprintf(&b, "%3d  %s\n", i+1, strings.ReplaceAll(e, "\n", "⏎"))
		}
		return strings.TrimRight(b.String(), "\n"), nil
	case "skills":
		s, err := p.c.ListSkills(ctx)
		if err != nil {
			return "", err
		}
		if len(s.Skills) == 0 {
			return "no skills", nil
		}
		var b strings.Builder
		for _, sk := range s.Skills {
			fmt.Fprintf(&b, "/%s (%s) %s\n", sk.Name, sk.Scope, sk.Description)
		}
		return strings.TrimRight(b.String(), "\n"), nil
	case "models":
		m, err := p.c.ListModels(ctx)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, id := range m.Models {
			mark := "  "
			if id == m.Current {
				mark = "* "
			}
			b.WriteString(mark + id + "\n")
		}
		return strings.TrimRight(b.String(), "\n"), nil
	case "model":
		if arg == "" {
			return "", errors.New("model needs an id, e.g. model offline/demo (models lists them)")
		}
		m, err := p.c.SelectModel(ctx, arg)
		if err != nil {
			return "", err
		}
		if m.Current != arg {
			return "", fmt.Errorf("infer kept %s: it did not switch to %q (models lists the ids it accepts)", m.Current, arg)
		}
		return "model: " + m.Current, nil
	case "mode":
		if arg == "" {
			return "", errors.New("mode needs a mode: standard, plan, auto or auto-with-judge")
		}
		m, err := p.c.SetMode(ctx, arg)
		if err != nil {
			return "", err
		}
		if m.Mode != arg {
			return "", fmt.Errorf("infer kept mode %s: %q is not a mode it knows", m.Mode, arg)
		}
		return "mode: " + m.Mode, nil
	case "tool":
		return p.tool(ctx, arg)
	case "help", "?":
		return PanelHelp, nil
	case "quit", "exit":
		return "", ErrQuit
	}
	return "", p.c.SendUserMessage(ctx, line)
}

func (p *Panel) list(ctx context.Context) (string, error) {
	list, err := p.c.ListConversations(ctx)
	if err != nil {
		return "", err
	}
	p.mu.Lock()
	p.convs = list.Conversations
	p.mu.Unlock()
	if len(list.Conversations) == 0 {
		return "no stored conversations", nil
	}
	var b strings.Builder
	for i, c := range list.Conversations {
		fmt.Fprintf(&b, "%2d. %s · %d messages · %s · %s\n", i+1, c.Title, c.MessageCount, c.UpdatedAt, c.ID)
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

func (p *Panel) resume(ctx context.Context, arg string) (string, error) {
	id := arg
	switch n, err := strconv.Atoi(arg); {
	case arg == "" || arg == "latest":
		list, err := p.c.ListConversations(ctx)
		if err != nil {
			return "", err
		}
		if len(list.Conversations) == 0 {
			return "", errors.New("there is no stored conversation to resume")
		}
		id = list.Conversations[0].ID
	case err == nil:
		p.mu.Lock()
		convs := p.convs
		p.mu.Unlock()
		if n < 1 || n > len(convs) {
			return "", fmt.Errorf("no conversation number %d: run list first and pick one of its numbers", n)
		}
		id = convs[n-1].ID
	}
	snap, err := p.c.Resume(ctx, id)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return "", fmt.Errorf("infer sent no snapshot for %s: it ignores unknown ids (list shows the stored ones)", id)
		}
		return "", err
	}
	return fmt.Sprintf("resumed %s (%d messages)", id, len(snap.Messages)), nil
}

// answer approves or rejects the given request, or the latest pending one.
func (p *Panel) answer(ctx context.Context, action, id string) (string, error) {
	if id == "" || id == "latest" {
		pending := p.c.PendingApprovals()
		if len(pending) == 0 {
			return "", fmt.Errorf("no approval is pending, so there is nothing to %s", action)
		}
		id = pending[len(pending)-1].RequestID
	}
	var err error
	if action == "approve" {
		err = p.c.Approve(ctx, id)
	} else {
		err = p.c.Reject(ctx, id)
	}
	if err != nil {
		return "", err
	}
	return action + "d " + id, nil
}

// tool sends a tool_request; its tool_result (and any approval request
// before it) arrive as frames.
func (p *Panel) tool(ctx context.Context, arg string) (string, error) {
	name, args, _ := strings.Cut(arg, " ")
	args = strings.TrimSpace(args)
	if name == "" {
		return "", errors.New(`tool needs a tool name and its JSON arguments, e.g. tool Bash {"command":"ls"}`)
	}
	if args != "" && !json.Valid([]byte(args)) {
		return "", fmt.Errorf("the arguments %s are not valid JSON: write them as an object, e.g. {\"command\":\"ls\"}", args)
	}
	id := uuid.NewString()
	if err := p.c.Send(ctx, wire.ToolRequest{ID: id, ToolName: name, ToolArgs: args}); err != nil {
		return "", err
	}
	return "tool_request " + id + " sent", nil
}

// settleWait is how long a switch waits for a second answer when the first
// one says the switch did not happen.
const settleWait = time.Second

// settled sends out and returns infer's answer of type T. infer also sends
// mode and models frames on its own (right after the hello, after model
// discovery), and one of those can arrive first; so when the first answer
// is not what ok wants, a second one is awaited briefly before the first
// is believed.
func settled[T wire.Frame](ctx context.Context, c *Client, out wire.Frame, ok func(T) bool) (T, error) {
	sub := c.Subscribe()
	defer sub.Close()
	var zero T
	if err := c.Send(ctx, out); err != nil {
		return zero, err
	}
	first, err := WaitFor[T](ctx, sub, nil)
	if err != nil {
		return zero, fmt.Errorf("%s: no answer: %w", out.FrameType(), err)
	}
	if ok(first) {
		return first, nil
	}
	wctx, cancel := context.WithTimeout(ctx, settleWait)
	defer cancel()
	if second, err := WaitFor[T](wctx, sub, nil); err == nil {
		return second, nil
	}
	return first, nil
}
