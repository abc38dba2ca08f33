package workspace

import (
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/tools/grants"
)

// FromSession adapts a session workspace to the TUI; every intent is made
// on behalf of the terminal.
func FromSession(ws *session.Workspace) Workspace {
	return &sessionWS{ws: ws}
}

type sessionWS struct {
	ws *session.Workspace
}

func (s *sessionWS) Subscribe() Subscription { return &sessionSub{s.ws.Subscribe()} }

func (s *sessionWS) Send(text string) error { return s.ws.Send(text, tools.OriginTerminal) }
func (s *sessionWS) Interrupt()             { s.ws.Interrupt() }
func (s *sessionWS) NewSession() Snapshot {
	return snapshot(s.ws.NewSession(tools.OriginTerminal))
}
func (s *sessionWS) Resume(id string) (Snapshot, error) {
	snap, err := s.ws.Resume(id, tools.OriginTerminal)
	return snapshot(snap), err
}
func (s *sessionWS) Snapshot() Snapshot                   { return snapshot(s.ws.Snapshot()) }
func (s *sessionWS) Conversations() ([]store.Meta, error) { return s.ws.Conversations() }

func (s *sessionWS) RenameConversation(id, title string) error {
	return s.ws.RenameConversation(id, title)
}

func (s *sessionWS) PinConversation(id string, pinned bool) error {
	return s.ws.PinConversation(id, pinned)
}

func (s *sessionWS) DeleteConversation(id string) error {
	return s.ws.DeleteConversation(id, tools.OriginTerminal)
}

func (s *sessionWS) History() []string { return s.ws.History() }

func (s *sessionWS) Skills() []Skill {
	sk := s.ws.Skills()
	out := make([]Skill, len(sk))
	for i, k := range sk {
		out[i] = Skill{Name: k.Name, Description: k.Description, Scope: string(k.Scope)}
	}
	return out
}

func (s *sessionWS) Mode() string { return string(s.ws.Mode()) }

func (s *sessionWS) Modes() []string {
	ms := tools.Modes()
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m)
	}
	return out
}

func (s *sessionWS) SetMode(name string) (string, bool) {
	m, ok := s.ws.SetMode(name)
	return string(m), ok
}

func (s *sessionWS) CycleMode() string            { return string(s.ws.CycleMode()) }
func (s *sessionWS) Model() string                { return s.ws.Model() }
func (s *sessionWS) Models() []string             { return s.ws.Models() }
func (s *sessionWS) SelectModel(id string) error  { return s.ws.SelectModel(id) }
func (s *sessionWS) Effort() string               { return string(s.ws.Effort()) }
func (s *sessionWS) SetEffort(level string) error { return s.ws.SetEffort(level) }
func (s *sessionWS) Temperature() *float64        { return s.ws.Temperature() }
func (s *sessionWS) SetTemperature(t *float64) error {
	return s.ws.SetTemperature(t)
}
func (s *sessionWS) Queue() []string { return s.ws.Queue() }
func (s *sessionWS) Busy() bool      { return s.ws.Busy() }

func (s *sessionWS) BrowserStatus() browser.Status { return s.ws.BrowserStatus() }

func (s *sessionWS) BrowserView() BrowserView {
	v := s.ws.BrowserView()
	out := BrowserView{Tabs: v.Tabs}
	if p := v.Page; p != nil {
		out.Page = &Page{URL: p.URL, Title: p.Title}
	}
	if sh := v.Screenshot; sh != nil {
		out.Screenshot = &Screenshot{Image: sh.Image, MIME: sh.MIME, URL: sh.URL, At: sh.At}
	}
	return out
}

func (s *sessionWS) PendingApprovals() []Approval {
	as := s.ws.PendingApprovals()
	out := make([]Approval, len(as))
	for i := range as {
		out[i] = approval(&as[i])
	}
	return out
}

func (s *sessionWS) Answer(id string, d Decision) bool {
	kind := tools.Deny
	switch d.Kind {
	case AllowOnce:
		kind = tools.AllowOnce
	case AllowAlways:
		kind = tools.AllowAlways
	}
	return s.ws.Answer(id, tools.Decision{Kind: kind, Reason: d.Reason, Option: d.Option}, tools.OriginTerminal)
}

// sessionSub converts events as they are drained.
type sessionSub struct{ sub *session.Subscription }

func (s *sessionSub) Ready() <-chan struct{} { return s.sub.Ready() }
func (s *sessionSub) Close()                 { s.sub.Close() }

func (s *sessionSub) Drain() []Event {
	in := s.sub.Drain()
	if len(in) == 0 {
		return nil
	}
	out := make([]Event, 0, len(in))
	for _, e := range in {
		k, ok := kinds[e.Kind]
		if !ok {
			continue // a kind this TUI does not know yet
		}
		ev := Event{
			Kind: k, Conversation: e.Conversation, Chat: e.Chat, Text: e.Text, Origin: Origin(e.Origin),
			Queue: e.Queue, Mode: string(e.Mode), Model: e.Model, Busy: e.Busy, Browser: e.Browser, Command: e.Command,
			Tabs:  e.Tabs,
			Usage: Usage{Input: e.Usage.InputTokens, Output: e.Usage.OutputTokens, Reasoning: e.Usage.ReasoningTokens},
		}
		if t := e.Tool; t != nil {
			ev.Tool = &ToolDone{CallID: t.CallID, Name: t.Name, OK: t.OK, Duration: t.Duration, Artifacts: t.Artifacts}
		}
		if p := e.Page; p != nil {
			ev.Page = &Page{URL: p.URL, Title: p.Title}
		}
		if sh := e.Screenshot; sh != nil {
			ev.Screenshot = &Screenshot{Image: sh.Image, MIME: sh.MIME, URL: sh.URL, At: sh.At}
		}
		if e.Snapshot != nil {
			snap := snapshot(*e.Snapshot)
			ev.Snapshot = &snap
		}
		if e.Approval != nil {
			a := approval(e.Approval)
			ev.Approval = &a
		}
		out = append(out, ev)
	}
	return out
}

// kinds maps session event kinds by name, not by numeric coincidence.
var kinds = map[session.Kind]Kind{
	session.KindChat:             KindChat,
	session.KindUserMessage:      KindUserMessage,
	session.KindQueue:            KindQueue,
	session.KindConversation:     KindConversation,
	session.KindBusy:             KindBusy,
	session.KindInterrupted:      KindInterrupted,
	session.KindApprovalOpened:   KindApprovalOpened,
	session.KindApprovalResolved: KindApprovalResolved,
	session.KindMode:             KindMode,
	session.KindModel:            KindModel,
	session.KindTitle:            KindTitle,
	session.KindBrowserStatus:    KindBrowserStatus,
	session.KindBrowserCommand:   KindBrowserCommand,
	session.KindNotice:           KindNotice,
	session.KindResync:           KindResync,
	session.KindToolDone:         KindToolDone,
	session.KindBrowserTabs:      KindBrowserTabs,
	session.KindBrowserPage:      KindBrowserPage,
	session.KindScreenshot:       KindScreenshot,
	session.KindUsage:            KindUsage,
}

func snapshot(s session.Snapshot) Snapshot {
	return Snapshot{ID: s.ID, Title: s.Title, Messages: s.Messages, ToolResults: s.ToolResults, Notices: s.Notices}
}

func approval(a *session.Approval) Approval {
	out := Approval{
		ID:          a.ID,
		Call:        Call{ID: a.Call.ID, Name: a.Call.Name, Args: a.Call.Args, Origin: Origin(a.Call.Origin)},
		Why:         a.Why,
		JudgeReason: a.JudgeReason,
		Sandbox:     a.Sandbox,
		Opened:      a.Opened,
		By:          Origin(a.By),
		Decision:    Decision{Reason: a.Decision.Reason, Option: a.Decision.Option},
	}
	switch a.Decision.Kind {
	case tools.AllowOnce:
		out.Decision.Kind = AllowOnce
	case tools.AllowAlways:
		out.Decision.Kind = AllowAlways
	}
	for _, o := range a.Options {
		out.Options = append(out.Options, o.Label)
	}
	return out
}

// FromGrants adapts a project's grants file to /permissions.
func FromGrants(st *grants.Store) Grants { return grantsAdapter{st} }

type grantsAdapter struct{ st *grants.Store }

func (g grantsAdapter) List() ([]Grant, error) {
	gs, err := g.st.List()
	out := make([]Grant, len(gs))
	for i, x := range gs {
		out[i] = Grant{ID: x.ID, Description: x.String(), Created: x.CreatedAt}
	}
	return out, err
}

func (g grantsAdapter) Revoke(id string) error { return g.st.Revoke(id) }
