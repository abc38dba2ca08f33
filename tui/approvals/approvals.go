// Package approvals is the pane for tool calls waiting for the person: the
// oldest request in detail, as its tool shows it (tools.Show: a unified
// diff for a change to a file, a command so that nothing in it hides, the
// URL or selector of a browser action), where it came from and why it
// asks, and the others listed under it.
//
// The pane answers keys with an Action value; the root turns it into a
// workspace call. A request that becomes the head answers no key for
// Guard: a keystroke meant for the editor cannot approve it by accident,
// and the root passes such keys on to the editor.
package approvals

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/internal/termtext"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/tui/chat"
	"github.com/infer-workspace/infer/tui/diff"
	"github.com/infer-workspace/infer/tui/frame"
	"github.com/infer-workspace/infer/tui/theme"
	"github.com/infer-workspace/infer/tui/toolfmt"
)

// Guard is how long a request that just came to the front answers no key.
const Guard = 400 * time.Millisecond

// KeyMap is the pane's keys. The help screen is drawn from the same
// bindings the pane matches, so the two cannot disagree.
type KeyMap struct {
	// Allow approves the request once; a command still runs in the
	// sandbox.
	Allow key.Binding
	// Always approves it and saves the narrowest grant (digits pick
	// another of the offered grants). With no grant offered it does
	// nothing but say so: it never stands in for Allow.
	Always key.Binding
	// Outside runs a command once outside the sandbox, with the person's
	// full permissions, when the request offers it: never the default,
	// never saved.
	Outside key.Binding
	// Reject opens the reason line; enter there rejects, esc goes back.
	Reject key.Binding
	// Up and Down scroll a long request a line; only arrows, since j and
	// k are letters someone typing a message may press.
	Up, Down key.Binding
	// PageUp and PageDown scroll it by half the pane.
	PageUp, PageDown key.Binding
	// Home and End jump to its start and its end.
	Home, End key.Binding
	// Confirm and Cancel end the reason line.
	Confirm, Cancel key.Binding
}

// Keys are the approvals pane's keys.
var Keys = KeyMap{
	Allow:    key.NewBinding(key.WithKeys("y", "enter"), key.WithHelp("y / enter", "allow once (a command runs in the sandbox, where there is one)")),
	Always:   key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "always allow, when offered (saves a permission; commands run in the sandbox)")),
	Outside:  key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "run a command OUTSIDE the sandbox, once, with your full permissions (when offered)")),
	Reject:   key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "reject, with an optional reason")),
	Up:       key.NewBinding(key.WithKeys("up"), key.WithHelp("↑ ↓ pgdn end", "scroll a long request (allow waits for its end)")),
	Down:     key.NewBinding(key.WithKeys("down")),
	PageUp:   key.NewBinding(key.WithKeys("pgup")),
	PageDown: key.NewBinding(key.WithKeys("pgdown")),
	Home:     key.NewBinding(key.WithKeys("home")),
	End:      key.NewBinding(key.WithKeys("end")),
	Confirm:  key.NewBinding(key.WithKeys("enter")),
	Cancel:   key.NewBinding(key.WithKeys("esc")),
}

// Help lists the pane's keys for the help screen, in order.
func (m *Model) Help() []key.Binding {
	return []key.Binding{Keys.Allow, Keys.Always, Keys.Outside, Keys.Reject, Keys.Up}
}

// ActionKind says what a key did.
type ActionKind int

// Actions.
const (
	// None: the key was used inside the pane, or ignored.
	None ActionKind = iota
	// Answer: decide request ID with Decision.
	Answer
	// Unhandled: the key means nothing here; the root may use it.
	Unhandled
)

// Action is the pane's answer to a key.
type Action struct {
	Kind     ActionKind
	ID       string
	Decision tools.Decision
}

// FileRequest asks the root to read the file a Write would replace.
type FileRequest struct {
	ID, Path string
}

// fileState is the current content of a Write's target.
type fileState struct {
	loaded  bool
	exists  bool
	content string
	err     string
}

type entry struct {
	a    session.Approval
	file fileState
}

// Model is the approvals pane.
type Model struct {
	th  *theme.Theme
	now func() time.Time

	w, h    int
	focused bool

	list    []entry
	headID  string
	armedAt time.Time
	scroll  int
	// seenTo is how many rows of the head's details have been on screen
	// (the last one shown, plus one). Allowing waits until all have: a
	// command can push its payload below the box's edge.
	seenTo    int
	rejecting bool
	reason    textinput.Model
	// hint explains why the last key did nothing ("a" with no "always"
	// offered); the next key or request clears it.
	hint string
}

// Hints for keys the head request does not offer.
const (
	noAlwaysHint  = "no 'always' for this request: y allows it once"
	noOutsideHint = "this request has no 'outside the sandbox' choice"
)

// New returns an empty pane.
func New(th *theme.Theme, now func() time.Time) *Model {
	ti := textinput.New()
	ti.Prompt = "reason: "
	ti.Placeholder = "optional, enter to reject"
	ti.SetVirtualCursor(true)
	return &Model{th: th, now: now, reason: ti}
}

// SetTheme switches styles.
func (m *Model) SetTheme(th *theme.Theme) { m.th = th }

// SetSize sets the outer size, border included.
func (m *Model) SetSize(w, h int) {
	m.w, m.h = w, h
	m.reason.SetWidth(max(w-4-len(m.reason.Prompt), 4))
}

// SetFocused marks the pane as the one receiving keys.
func (m *Model) SetFocused(f bool) { m.focused = f }

// Len is the number of pending requests.
func (m *Model) Len() int { return len(m.list) }

// CallIDs lists the tool calls waiting for an answer, so the chat can
// say which of its running rows wait for the person.
func (m *Model) CallIDs() []string {
	ids := make([]string, len(m.list))
	for i, e := range m.list {
		ids[i] = e.a.Call.ID
	}
	return ids
}

// Capturing reports whether the reason input takes every key (esc cancels
// it instead of interrupting the turn).
func (m *Model) Capturing() bool { return m.rejecting }

// Add shows a new request. It returns a file to read when the request is
// a Write, so the diff can compare with what is there now.
func (m *Model) Add(a session.Approval) *FileRequest {
	for _, e := range m.list {
		if e.a.ID == a.ID {
			return nil
		}
	}
	m.list = append(m.list, entry{a: a})
	m.headChanged()
	if p := contentPath(a.Call); p != "" {
		return &FileRequest{ID: a.ID, Path: p}
	}
	return nil
}

// contentPath is the file whose whole content the call would replace, as
// its tool shows it, or "": the box compares the two.
func contentPath(c tools.Call) string {
	for _, p := range tools.Show(c.Name, c.Args).Detail {
		if p.Kind == tools.PartContent {
			return p.Path
		}
	}
	return ""
}

// Resolve removes a request answered anywhere.
func (m *Model) Resolve(id string) {
	for i, e := range m.list {
		if e.a.ID == id {
			m.list = append(m.list[:i:i], m.list[i+1:]...)
			m.headChanged()
			return
		}
	}
}

// Replace sets the whole list (after a resync) and returns the files to
// read.
func (m *Model) Replace(all []session.Approval) []FileRequest {
	old := map[string]fileState{}
	for _, e := range m.list {
		old[e.a.ID] = e.file
	}
	m.list = nil
	var reqs []FileRequest
	for _, a := range all {
		f, seen := old[a.ID]
		m.list = append(m.list, entry{a: a, file: f})
		if p := contentPath(a.Call); !seen && p != "" {
			reqs = append(reqs, FileRequest{ID: a.ID, Path: p})
		}
	}
	m.headChanged()
	return reqs
}

// SetFile records the current content of a Write's target.
func (m *Model) SetFile(id string, exists bool, content string, err error) {
	for i := range m.list {
		if m.list[i].a.ID == id {
			f := fileState{loaded: true, exists: exists, content: content}
			if err != nil {
				f.err = err.Error()
			}
			m.list[i].file = f
		}
	}
}

// headChanged re-arms the guard when a different request comes first.
func (m *Model) headChanged() {
	id := ""
	if len(m.list) > 0 {
		id = m.list[0].a.ID
	}
	if id != m.headID {
		m.headID = id
		m.armedAt = m.now().Add(Guard)
		m.scroll = 0
		m.seenTo = 0
		m.rejecting = false
		m.reason.Reset()
		m.reason.Blur()
		m.hint = ""
	}
}

// Rearm guards the oldest request afresh, as when it came to the front:
// the root calls it when it gives the pane the focus while the person may
// still be typing.
func (m *Model) Rearm() {
	if len(m.list) > 0 {
		m.armedAt = m.now().Add(Guard)
	}
}

// ArmedIn is how long until the head accepts keys (zero when it does).
func (m *Model) ArmedIn() time.Duration {
	if len(m.list) == 0 {
		return 0
	}
	return max(m.armedAt.Sub(m.now()), 0)
}

// Head returns the oldest request.
func (m *Model) Head() (session.Approval, bool) {
	if len(m.list) == 0 {
		return session.Approval{}, false
	}
	return m.list[0].a, true
}

// HandleKey answers a key press.
func (m *Model) HandleKey(k tea.KeyPressMsg) Action {
	if len(m.list) == 0 {
		return Action{Kind: Unhandled}
	}
	head := m.list[0].a
	m.hint = ""
	if m.rejecting {
		switch {
		case key.Matches(k, Keys.Confirm):
			reason := strings.TrimSpace(m.reason.Value())
			m.rejecting = false
			m.reason.Reset()
			m.reason.Blur()
			m.Resolve(head.ID)
			return Action{Kind: Answer, ID: head.ID, Decision: tools.Decision{Kind: tools.Deny, Reason: reason}}
		case key.Matches(k, Keys.Cancel):
			m.rejecting = false
			m.reason.Reset()
			m.reason.Blur()
			return Action{}
		}
		m.reason, _ = m.reason.Update(k)
		return Action{}
	}
	switch {
	case key.Matches(k, Keys.Up):
		m.ScrollBy(-1)
		return Action{}
	case key.Matches(k, Keys.Down):
		m.ScrollBy(1)
		return Action{}
	case key.Matches(k, Keys.PageUp):
		m.ScrollBy(-max(m.h/2, 1))
		return Action{}
	case key.Matches(k, Keys.PageDown):
		m.ScrollBy(max(m.h/2, 1))
		return Action{}
	case key.Matches(k, Keys.Home):
		m.ScrollBy(-m.scroll)
		return Action{}
	case key.Matches(k, Keys.End):
		m.ScrollBy(len(m.detail(m.inner())))
		return Action{}
	case key.Matches(k, Keys.Allow, Keys.Always, Keys.Outside, Keys.Reject):
	default:
		if optionKey(k.String(), len(head.Options)) < 0 {
			return Action{Kind: Unhandled}
		}
	}
	if m.ArmedIn() > 0 {
		// Too soon after it appeared: the key was meant for the editor.
		return Action{Kind: Unhandled}
	}
	switch {
	case key.Matches(k, Keys.Allow):
		if m.Unseen() > 0 {
			return Action{}
		}
		m.Resolve(head.ID)
		return Action{Kind: Answer, ID: head.ID, Decision: tools.Decision{Kind: tools.AllowOnce}}
	case key.Matches(k, Keys.Reject):
		m.rejecting = true
		m.reason.Focus()
		return Action{}
	case key.Matches(k, Keys.Always) && len(head.Options) == 0:
		// Nothing can be saved; acting once instead would make "a" a
		// second allow key on a box that offered none.
		m.hint = noAlwaysHint
		return Action{}
	case key.Matches(k, Keys.Outside) && !head.Outside:
		m.hint = noOutsideHint
		return Action{}
	}
	if m.Unseen() > 0 {
		// Allowing what has not been on screen is allowing it blind;
		// the footer says how much is left and how to get there.
		return Action{}
	}
	if key.Matches(k, Keys.Outside) {
		m.Resolve(head.ID)
		return Action{Kind: Answer, ID: head.ID, Decision: tools.Decision{Kind: tools.AllowOutside}}
	}
	// Always saves the narrowest grant; a digit picks one of several.
	opt := 0
	if !key.Matches(k, Keys.Always) {
		opt = optionKey(k.String(), len(head.Options))
	}
	m.Resolve(head.ID)
	return Action{Kind: Answer, ID: head.ID, Decision: tools.Decision{Kind: tools.AllowAlways, Option: opt}}
}

// optionKey maps "1".."9" to an option index, or -1.
func optionKey(key string, n int) int {
	if len(key) == 1 && key[0] >= '1' && key[0] <= '9' && int(key[0]-'1') < n {
		return int(key[0] - '1')
	}
	return -1
}

// HandlePaste adds pasted text to the reason line while it is open.
func (m *Model) HandlePaste(text string) {
	if m.rejecting {
		m.reason.SetValue(m.reason.Value() + strings.Join(strings.Fields(text), " "))
		m.reason.CursorEnd()
	}
}

// ScrollBy scrolls the request's details, no further than their end.
func (m *Model) ScrollBy(n int) {
	m.scroll = max(m.scroll+n, 0)
	if len(m.list) > 0 {
		m.place()
	}
}

// Unseen is how many rows of the oldest request's details have not yet
// been on screen; allowing it waits until none are left. Rejecting never
// waits.
func (m *Model) Unseen() int {
	if len(m.list) == 0 {
		return 0
	}
	l := m.place()
	return max(len(l.detail)-m.seenTo, 0)
}

// inner is the width inside the border and padding.
func (m *Model) inner() int { return max(m.w-4, 1) }

// place clamps the scroll to the details and records how far they have
// been shown, at the layout View draws.
func (m *Model) place() paneLayout {
	// Laid out without the note asking to scroll, everything may fit;
	// only when it does not, and the end has not been shown before, is
	// the note there, taking rows.
	l := m.layout(0)
	if m.seenTo < len(l.detail) && m.scroll+l.detailH < len(l.detail) {
		l = m.layout(len(l.detail) - m.seenTo)
	}
	m.scroll = min(m.scroll, max(len(l.detail)-l.detailH, 0))
	m.seenTo = max(m.seenTo, min(m.scroll+l.detailH, len(l.detail)))
	if left := len(l.detail) - m.seenTo; left != l.left {
		l = m.layout(left) // the note's count changed
	}
	return l
}

// paneLayout is the pane's body, cut to its height.
type paneLayout struct {
	head, detail, others, foot []string
	detailH                    int
	// left is the count of rows not yet shown that the footer's note
	// gives (none when zero).
	left int
}

// layout fits the head request into the pane: its header, as many rows
// of its details as fit, the others waiting, and the keys, with the note
// that left rows have not been on screen yet when left is above zero.
func (m *Model) layout(left int) paneLayout {
	inner := m.inner()
	bodyH := max(m.h-2, 0)
	l := paneLayout{head: m.header(inner), detail: m.detail(inner), left: max(left, 0)}
	l.foot = m.footer(inner, l.left)
	if len(m.list) > 1 {
		l.others = append(l.others, m.th.Faint.Render("Also waiting:"))
		for i, e := range m.list[1:] {
			if i == 3 {
				l.others = append(l.others, m.th.Faint.Render("  … "+strconv.Itoa(len(m.list)-4)+" more"))
				break
			}
			s := "  " + termtext.Line(e.a.Call.Name+" "+toolfmt.Short(e.a.Call.Name, e.a.Call.Args))
			l.others = append(l.others, m.th.Faint.Render(ansi.Truncate(s, inner, "…")))
		}
	}
	l.detailH = bodyH - len(l.head) - len(l.foot) - len(l.others)
	if l.detailH < 1 {
		// Tiny window: drop the list of others, then the header's extras.
		l.others = nil
		l.detailH = bodyH - len(l.head) - len(l.foot)
		if l.detailH < 1 && len(l.head) > 1 {
			l.head = l.head[:1]
			l.detailH = bodyH - len(l.head) - len(l.foot)
		}
	}
	l.detailH = max(l.detailH, 0)
	return l
}

// DesiredLines is how many body lines the pane would like, so the layout
// can give a short request a short box.
func (m *Model) DesiredLines() int {
	if len(m.list) == 0 {
		return 0
	}
	w := max(m.w-4, 20)
	// The box it asks for shows every row, so the note asking to scroll
	// would not be needed.
	n := len(m.header(w)) + len(m.detail(w)) + len(m.footer(w, 0)) + 1
	if len(m.list) > 1 {
		n += 1 + min(len(m.list)-1, 3)
	}
	return n
}

// View draws the pane at its size, border included.
func (m *Model) View() string {
	title := "Approvals"
	if n := len(m.list); n > 0 {
		title += " · " + strconv.Itoa(n) + " waiting"
	}
	if len(m.list) == 0 {
		return frame.Box(m.th, title, m.focused, m.w, m.h, frame.Indent([]string{m.th.Faint.Render("No tool calls waiting for you.")}), "")
	}
	l := m.place()
	maxScroll := max(len(l.detail)-l.detailH, 0)
	shown := l.detail[m.scroll:min(len(l.detail), m.scroll+l.detailH)]
	body := append([]string{}, l.head...)
	body = append(body, shown...)
	for len(body) < len(l.head)+l.detailH {
		body = append(body, "")
	}
	body = append(body, l.others...)
	body = append(body, l.foot...)
	footer := ""
	if maxScroll > 0 {
		footer = "↑↓ scroll " + strconv.Itoa(m.scroll) + "/" + strconv.Itoa(maxScroll)
	}
	return frame.Box(m.th, title, m.focused, m.w, m.h, frame.Indent(body), footer)
}

// Everything a request holds came from the model, a browser panel or a
// policy quoting them, so each text goes through termtext where it is
// drawn: the person must see the whole command, including what a terminal
// would have hidden or reordered, before they allow it.

func (m *Model) header(w int) []string {
	a := m.list[0].a
	th := m.th
	lines := []string{th.Warn.Render("⚠ ") + th.Bold.Render(termtext.Line(a.Call.Name)) + th.Faint.Render(" · from the "+a.Call.Origin.Label())}
	if hidesText(a.Call) {
		// Said in words: an escape in a long command is easy to miss.
		lines = append(lines, th.Warn.Render(ansi.Truncate(hiddenNote, w, "…")))
	}
	if why := strings.TrimSpace(a.Why); why != "" {
		for _, l := range chat.Wrap("Why: "+termtext.Text(why), w) {
			lines = append(lines, th.Faint.Render(l))
		}
	}
	if sb := strings.TrimSpace(a.Sandbox); sb != "" {
		// Where the command will run if allowed, as the pipeline words
		// it for this terminal: one plain line.
		for _, l := range chat.Wrap(termtext.Text(sb), w) {
			lines = append(lines, th.Warn.Render(l))
		}
	}
	if jr := strings.TrimSpace(a.JudgeReason); jr != "" {
		for _, l := range chat.Wrap("Judge: "+termtext.Text(jr), w) {
			lines = append(lines, th.Warn.Render(l))
		}
	}
	return lines
}

// hiddenNote tells the person that the request holds characters a
// terminal would act on instead of showing, and how they are shown.
const hiddenNote = `⚠ has control or bidi characters, shown as escapes (\x1b, \r, \u202e…)`

// hidesText reports whether termtext escapes anything in the call: its
// name, or any string in its decoded arguments (the raw JSON holds the
// characters as JSON escapes, so it cannot tell).
func hidesText(c tools.Call) bool {
	if termtext.Text(c.Name) != c.Name {
		return true
	}
	var v any
	if json.Unmarshal([]byte(c.Args), &v) != nil {
		return termtext.Text(c.Args) != c.Args
	}
	return hidesIn(v)
}

func hidesIn(v any) bool {
	switch v := v.(type) {
	case string:
		return termtext.Text(v) != v
	case map[string]any:
		for k, x := range v {
			if termtext.Text(k) != k || hidesIn(x) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if hidesIn(x) {
				return true
			}
		}
	}
	return false
}

// footer is the keys, and a note when left rows of the details have not
// been on screen.
func (m *Model) footer(w, left int) []string {
	th := m.th
	if m.rejecting {
		return []string{th.Warn.Render("Reject · esc to cancel"), m.reason.View()}
	}
	opts := m.list[0].a.Options
	var lines []string
	switch len(opts) {
	case 0:
	case 1:
		lines = append(lines, chat.Wrap(th.Key.Render(Keys.Always.Keys()[0])+" "+termtext.Line(opts[0].Label), w)...)
	default:
		lines = append(lines, th.Faint.Render("always allow: a or a number"))
		for i, o := range opts {
			if i == 9 {
				break
			}
			lines = append(lines, chat.Wrap(th.Key.Render(strconv.Itoa(i+1))+" "+termtext.Line(o.Label), w)...)
		}
	}
	// The "always" choices are listed above with their keys; when there
	// are none, nothing can be saved and "a" does nothing but say so.
	keys := th.Key.Render(Keys.Allow.Keys()[0]) + " allow once · "
	if m.list[0].a.Outside {
		keys += th.Key.Render(Keys.Outside.Keys()[0]) + " run outside the sandbox, once · "
	}
	keys += th.Key.Render(Keys.Reject.Keys()[0]) + " reject"
	if left > 0 {
		// Allow waits for the end (see Unseen); say so where the keys
		// are, with what is left, so a key that does nothing is
		// explained.
		rows := strconv.Itoa(left) + " more lines"
		if left == 1 {
			rows = "1 more line"
		}
		lines = append(lines, chat.Wrap(th.Warn.Render("⚠ "+rows+" below: scroll to allow"), w)...)
		keys = th.Key.Render("↓ pgdn end") + " scroll · " + th.Key.Render(Keys.Reject.Keys()[0]) + " reject"
	}
	if !m.focused {
		keys = th.Faint.Render("tab here to answer · ") + keys
	}
	lines = append(lines, chat.Wrap(keys, w)...)
	if m.hint != "" {
		lines = append(lines, chat.Wrap(th.Warn.Render(m.hint), w)...)
	}
	if m.ArmedIn() > 0 {
		// Said, not just shown: keys pressed now are dropped.
		lines = append([]string{th.Faint.Render("⧗ just arrived: keys wait a moment…")}, lines...)
	}
	return lines
}

// detail draws the head request's arguments as its tool shows them
// (tools.Show).
func (m *Model) detail(w int) []string {
	e := m.list[0]
	th := m.th
	var out []string
	field := func(label, value string) {
		for i, l := range chat.Wrap(termtext.Text(value), max(w-len(label), 8)) {
			if i == 0 {
				out = append(out, th.Faint.Render(label)+l)
			} else {
				out = append(out, strings.Repeat(" ", len(label))+l)
			}
		}
	}
	for _, p := range tools.Show(e.a.Call.Name, e.a.Call.Args).Detail {
		switch p.Kind {
		case tools.PartField:
			field(p.Label, p.Text)
		case tools.PartNote:
			if p.Warn {
				out = append(out, th.Warn.Render(ansi.Truncate(termtext.Line(p.Text), w, "…")))
			} else {
				out = append(out, th.Faint.Render(termtext.Line(p.Text)))
			}
		case tools.PartCommand:
			out = append(out, m.commandLines(p.Text, w)...)
		case tools.PartChange:
			out = append(out, m.diffLines(diff.SplitLines(p.Old), diff.SplitLines(p.Text), w)...)
		case tools.PartContent:
			out = append(out, m.contentLines(e.file, p.Text, w)...)
		default:
			for _, l := range strings.Split(p.Text, "\n") {
				out = append(out, chat.Wrap(termtext.Text(l), w)...)
			}
		}
	}
	return out
}

// commandLines shows a command after "$ " so that nothing in it can hide
// (see commandRows).
func (m *Model) commandLines(cmd string, w int) []string {
	const label = "$ "
	var out []string
	for i, l := range commandRows(cmd) {
		for j, r := range chat.Wrap(l.text, max(w-len(label), 8)) {
			if l.note {
				r = m.th.Warn.Render(r)
			}
			if i == 0 && j == 0 {
				out = append(out, m.th.Faint.Render(label)+r)
			} else {
				out = append(out, strings.Repeat(" ", len(label))+r)
			}
		}
	}
	return out
}

// contentLines compares a file's new content with what it holds now, as
// far as that is known yet.
func (m *Model) contentLines(f fileState, text string, w int) []string {
	th := m.th
	content := diff.SplitLines(text)
	var out []string
	switch {
	case !f.loaded:
		out = append(out, th.Faint.Render("reading the current file…"))
		out = append(out, m.diffLines(nil, content, w)...)
	case f.err != "":
		out = append(out, th.Warn.Render(ansi.Truncate("cannot read the current file: "+termtext.Line(f.err), w, "…")))
		out = append(out, m.diffLines(nil, content, w)...)
	case !f.exists:
		out = append(out, th.Faint.Render("new file"))
		out = append(out, m.diffLines(nil, content, w)...)
	default:
		d := m.diffLines(diff.SplitLines(f.content), content, w)
		if len(d) == 0 {
			d = []string{th.Faint.Render("no change: the file already has this content")}
		}
		out = append(out, d...)
	}
	return out
}

// diffLines renders a unified diff; the +/- column carries the meaning,
// colour only helps. The lines are the file's and the model's, made safe
// one by one (a line never holds a newline).
func (m *Model) diffLines(a, b []string, w int) []string {
	th := m.th
	var out []string
	for _, l := range diff.Unified(a, b, 3) {
		l = strings.ReplaceAll(termtext.Text(l), "\t", "    ")
		line := ansi.Truncate(l, w, "…")
		switch {
		case strings.HasPrefix(l, "@@"):
			out = append(out, th.DiffHunk.Render(line))
		case strings.HasPrefix(l, "+"):
			out = append(out, th.DiffAdd.Render(line))
		case strings.HasPrefix(l, "-"):
			out = append(out, th.DiffDel.Render(line))
		default:
			out = append(out, line)
		}
	}
	return out
}

// commandRow is one row of a command as the approval box shows it: a
// line of the command, or a note standing for what would not show.
type commandRow struct {
	text string
	note bool
}

// minBlankRun and minSpaceRun are the shortest runs of blank lines and of
// spaces that are drawn as a note with their count instead.
const (
	minBlankRun = 2
	minSpaceRun = 8
)

// commandRows lays out a command so that nothing in it can hide: every
// line is shown with its control characters and tabs escaped (termtext
// Line: \x1b, \r, \t), a run of blank lines (or lines of only spaces)
// becomes one note with its count, and a long run of spaces inside a
// line becomes a note too. Without this, `echo hi` followed by sixty
// newlines and a curl showed as `echo hi` and an empty box.
func commandRows(cmd string) []commandRow {
	var rows []commandRow
	blank := 0
	flush := func() {
		switch {
		case blank >= minBlankRun:
			rows = append(rows, commandRow{text: "⟨" + strconv.Itoa(blank) + " blank lines⟩", note: true})
		case blank > 0:
			rows = append(rows, commandRow{})
		}
		blank = 0
	}
	// One newline at the end only ends the last line.
	for _, line := range strings.Split(strings.TrimSuffix(cmd, "\n"), "\n") {
		if strings.Trim(line, " ") == "" {
			blank++
			continue
		}
		flush()
		rows = append(rows, commandRow{text: spaceRuns(termtext.Line(line))})
	}
	flush()
	return rows
}

// spaceRuns replaces each run of at least minSpaceRun spaces with a note
// of its length, so spaces cannot push the rest of a line out of sight
// or make it look like a separate, harmless row.
func spaceRuns(s string) string {
	if !strings.Contains(s, strings.Repeat(" ", minSpaceRun)) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != ' ' {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && s[j] == ' ' {
			j++
		}
		if n := j - i; n >= minSpaceRun {
			b.WriteString(" ⟨" + strconv.Itoa(n) + " spaces⟩ ")
		} else {
			b.WriteString(s[i:j])
		}
		i = j
	}
	return b.String()
}
