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
	return snapshot(s.ws.NewSession())
}
func (s *sessionWS) Resume(id string) (Snapshot, error) {
	snap, err := s.ws.Resume(id)
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
	return s.ws.DeleteConversation(id)
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
	m, ok := s.ws.SetMode(name, tools.OriginTerminal)
	return string(m), ok
}

func (s *sessionWS) CycleMode() string             { return string(s.ws.CycleMode()) }
func (s *sessionWS) Model() string                 { return s.ws.Model() }
func (s *sessionWS) Models() []string              { return s.ws.Models() }
func (s *sessionWS) SelectModel(id string) error   { return s.ws.SelectModel(id) }
func (s *sessionWS) Rejections(id string) []string { return s.ws.Rejections(id) }
func (s *sessionWS) Effort() string                { return string(s.ws.Effort()) }
func (s *sessionWS) SetEffort(level string) error  { return s.ws.SetEffort(level) }
func (s *sessionWS) Temperature() *float64         { return s.ws.Temperature() }
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
		out = appendEvent(out, e)
	}
	return out
}

// appendEvent appends the TUI's events for one session event; facts the
// TUI does not show add none.
func appendEvent(out []Event, e session.Event) []Event {
	switch e := e.(type) {
	case session.Chat:
		return append(out, Event{Kind: KindChat, Conversation: e.Conversation, Chat: e.Event})
	case session.UserMessage:
		return append(out, Event{Kind: KindUserMessage, Conversation: e.Conversation, Text: e.Text, Origin: e.Origin})
	case session.QueueChanged:
		return append(out, Event{Kind: KindQueue, Queue: e.Queue})
	case session.ConversationChanged:
		if e.Same {
			return out // the stream already showed it
		}
		snap := snapshot(e.Snapshot)
		return append(out, Event{Kind: KindConversation, Conversation: snap.ID, Snapshot: &snap})
	case session.BusyChanged:
		if e.Interrupted {
			out = append(out, Event{Kind: KindInterrupted})
		}
		return append(out, Event{Kind: KindBusy, Busy: e.Busy})
	case session.ApprovalOpened:
		a := approval(&e.Approval)
		return append(out, Event{Kind: KindApprovalOpened, Approval: &a})
	case session.ApprovalResolved:
		a := approval(&e.Approval)
		return append(out, Event{Kind: KindApprovalResolved, Approval: &a})
	case session.SettingsChanged:
		switch e.Changed {
		case session.SettingMode:
			return append(out, Event{Kind: KindMode, Mode: string(e.Settings.Mode)})
		case session.SettingModel, session.SettingModels:
			return append(out, Event{Kind: KindModel, Model: e.Settings.Model})
		}
	case session.TitleChanged:
		return append(out, Event{Kind: KindTitle, Conversation: e.Conversation, Text: e.Title})
	case session.BrowserStatusChanged:
		return append(out, Event{Kind: KindBrowserStatus, Browser: e.Status})
	case session.BrowserCommandDone:
		return append(out, Event{Kind: KindBrowserCommand, Command: e.Record})
	case session.NoticePosted:
		return append(out, Event{Kind: KindNotice, Conversation: e.Conversation, Text: e.Text, Warn: e.Level == session.Warn, Origin: e.Origin})
	case session.Resync:
		return append(out, Event{Kind: KindResync})
	case session.ToolFinished:
		return append(out, Event{Kind: KindToolDone, Conversation: e.Conversation,
			Tool: &ToolDone{CallID: e.CallID, Name: e.Name, OK: e.OK, Duration: e.Duration, Artifacts: e.Artifacts}})
	case session.TabsChanged:
		return append(out, Event{Kind: KindBrowserTabs, Tabs: e.Tabs})
	case session.PageChanged:
		return append(out, Event{Kind: KindBrowserPage, Page: &Page{URL: e.Page.URL, Title: e.Page.Title}})
	case session.ScreenshotTaken:
		sh := e.Screenshot
		return append(out, Event{Kind: KindScreenshot, Screenshot: &Screenshot{Image: sh.Image, MIME: sh.MIME, URL: sh.URL, At: sh.At}})
	case session.UsageReported:
		u := e.Usage
		return append(out, Event{Kind: KindUsage, Conversation: e.Conversation, Usage: Usage{Input: u.InputTokens, Output: u.OutputTokens, Reasoning: u.ReasoningTokens}})
	}
	return out
}

func snapshot(s session.Snapshot) Snapshot {
	return Snapshot{ID: s.ID, Title: s.Title, Messages: s.Messages, ToolResults: s.ToolResults, Notices: s.Notices}
}

func approval(a *session.Approval) Approval {
	out := Approval{
		ID:          a.ID,
		Call:        Call{ID: a.Call.ID, Name: a.Call.Name, Args: a.Call.Args, Origin: a.Call.Origin},
		Why:         a.Why,
		JudgeReason: a.JudgeReason,
		Sandbox:     a.Sandbox,
		Opened:      a.Opened,
		By:          a.By,
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
