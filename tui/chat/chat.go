// Package chat is the conversation pane: messages rendered as Markdown,
// reasoning collapsed behind one line, tool calls as rows that spin while
// running and then show ✓ or ✗ with their duration and a one-line result.
// Outcomes and durations are the ones the workspace reports; the pane never
// guesses them from the result text.
//
// The pane shows a conversation's transcript: Load renders a snapshot's,
// and Apply folds each live change into it, updating the item it names in
// place. Rendering is lazy and cached per item: only items that are
// on screen are rendered, finished items are rendered once per width, and
// a streaming message re-renders only its unfinished last block. Scrolling
// is anchored to an item and a line inside it, so composing a frame walks
// only the visible items and its cost does not grow with the conversation.
package chat

import (
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/infer-workspace/infer/internal/termtext"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/transcript"
	"github.com/infer-workspace/infer/tui/frame"
	"github.com/infer-workspace/infer/tui/theme"
	"github.com/infer-workspace/infer/tui/toolfmt"
)

// anchor is the first visible line: item index and line within it.
type anchor struct{ item, line int }

// Model is the chat pane. It is a plain struct the root model drives.
type Model struct {
	th *theme.Theme
	md *markdown

	w, h    int
	focused bool
	title   string
	// hint is an extra line for the empty conversation, e.g. what the
	// offline model understands.
	hint string

	items []*item
	// byID is the latest item with each id: the transcript's items, and
	// the calls made from outside the conversation.
	byID     map[string]*item
	awaiting map[string]bool // calls waiting for the person's approval
	queue    *item           // the queued messages, drawn after the last item

	follow bool
	top    anchor
	unseen int // items added while scrolled up
	sel    int // selected item, -1 for none
	frame  int // spinner frame
	epoch  int // bumped when the theme changes, invalidating caches
}

// KeyMap is the chat's keys while it has the focus; the root matches
// them and the help screen lists them.
type KeyMap struct {
	// Up and Down select the previous or next tool call or reasoning.
	Up, Down key.Binding
	// Toggle expands or collapses the selection.
	Toggle key.Binding
}

// Keys are the chat's keys.
var Keys = KeyMap{
	Up:     key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑ / ↓  k / j", "select a tool call or reasoning")),
	Down:   key.NewBinding(key.WithKeys("down", "j")),
	Toggle: key.NewBinding(key.WithKeys("enter", "space"), key.WithHelp("enter / space", "expand or collapse the selection")),
}

// Help lists the chat's keys for the help screen.
func (m *Model) Help() []key.Binding { return []key.Binding{Keys.Up, Keys.Toggle} }

// New returns an empty chat pane, rendering Markdown in th's Glamour
// style.
func New(th *theme.Theme) *Model {
	m := &Model{th: th, md: newMarkdown(th.GlamourStyle()), follow: true, sel: -1}
	m.reset()
	return m
}

func (m *Model) reset() {
	m.items = nil
	m.byID = map[string]*item{}
	m.queue = &item{kind: kQueue}
	m.follow, m.top, m.unseen, m.sel = true, anchor{}, 0, -1
}

// SetTheme switches styles and the Markdown renderer to th's; every item
// re-renders lazily.
func (m *Model) SetTheme(th *theme.Theme) {
	m.th, m.md = th, newMarkdown(th.GlamourStyle())
	m.epoch++
}

// MarkdownStyle names the Glamour style the chat renders Markdown in.
func (m *Model) MarkdownStyle() string { return m.md.Style() }

// SetSize sets the pane's outer size, border included.
func (m *Model) SetSize(w, h int) { m.w, m.h = w, h }

// SetFocused marks the pane as the one receiving keys.
func (m *Model) SetFocused(f bool) { m.focused = f }

// SetTitle sets the conversation title shown in the border.
func (m *Model) SetTitle(t string) { m.title = t }

// Len is the number of items, for tests and diagnostics.
func (m *Model) Len() int { return len(m.items) }

// Following reports whether the view sticks to the bottom.
func (m *Model) Following() bool { return m.follow }

// contentSize is the area inside the border, less a cell on either side:
// the gutter (the selection mark) on the left, and on the right the
// padding that keeps text off the border, as in every pane.
func (m *Model) contentSize() (w, h int) { return max(m.w-4, 1), max(m.h-2, 0) }

// Load replaces the conversation with a transcript (a snapshot's), through
// the same path Apply takes for each item. A call still open is shown
// running only when it belongs to the transcript's open run: one that
// ended without a result (a stored conversation's) has none to wait for.
func (m *Model) Load(title string, tr transcript.Transcript) {
	m.reset()
	m.title = title
	for _, src := range tr.Items {
		m.put(src)
	}
	running := tr.Run != ""
	for i := len(m.items) - 1; i >= 0; i-- {
		it := m.items[i]
		if it.kind == kUser {
			running = false // what came before is no part of the open run
		}
		if it.kind == kTool && it.state == toolRunning && !running {
			it.state = toolNoResult
			it.version++
		}
	}
	for id := range m.awaiting {
		m.markAwaiting(id, true)
	}
}

// Apply folds one transcript change into the conversation, following the
// transcript's reducer: an item that starts is added, a delta grows it, a
// done item replaces it whole (or is added, when it never started), and a
// run's end closes what it left open and says how it ended, unless it
// finished. It only updates state; rendering waits for the next frame.
func (m *Model) Apply(c transcript.Change) {
	switch c.Op {
	case transcript.ItemStarted:
		if it := m.byID[c.Item.ID]; it != nil && it.open() {
			// A snapshot read just after the change was published holds
			// the item already; a later answer reusing an id starts anew.
			m.set(it, c.Item)
			return
		}
		m.put(c.Item)
	case transcript.DeltaAppended:
		it := m.byID[c.Item.ID]
		if it == nil || (it.kind == kTool && it.origin != "") {
			return // the reducer refuses a delta to an item that never started
		}
		if it.kind == kTool {
			it.args = append(it.args, c.Delta...)
			it.version++
		} else {
			it.appendText(c.Delta)
		}
	case transcript.ItemDone:
		src := c.Item
		src.Done = true
		if it := m.byID[src.ID]; it != nil && !(it.kind == kTool && it.origin != "") {
			m.set(it, src)
		} else {
			m.put(src)
		}
	case transcript.RunEnded:
		m.endRun(c.Status != transcript.Finished)
		switch c.Status {
		case transcript.Interrupted:
			m.add(&item{kind: kText, buf: []byte(interruptedLine)})
		case transcript.Failed:
			m.add(&item{kind: kText, buf: []byte("⚠ " + c.Err)})
		}
	}
}

// interruptedLine is what closes a run the person stopped; a run that
// failed closes with its error, after a ⚠.
const interruptedLine = "⏹ Interrupted."

// put adds src as a new item. A finished answer segment that says
// nothing is left out: it would add nothing but a gap.
func (m *Model) put(src transcript.Item) {
	if src.Done && src.Kind == transcript.Text && strings.TrimSpace(src.Text) == "" {
		return
	}
	it := new(item)
	m.set(it, src)
	if src.ID != "" {
		m.byID[src.ID] = it
	}
	m.add(it)
	if it.kind == kTool {
		m.markAwaiting(src.ID, m.awaiting[src.ID])
	}
}

// set copies what the view shows of src into it.
func (m *Model) set(it *item, src transcript.Item) {
	switch src.Kind {
	case transcript.User:
		it.kind, it.origin = kUser, src.Origin
		it.setText(src.Text)
	case transcript.Notice:
		it.kind, it.warn = kNotice, src.Level == transcript.Warn
		it.setText(src.Text)
	case transcript.Text, transcript.Reasoning:
		it.kind = kText
		if src.Kind == transcript.Reasoning {
			it.kind = kReasoning
		}
		it.streaming = !src.Done
		it.setText(src.Text)
	case transcript.Tool:
		k := src.Call
		it.kind, it.name, it.args = kTool, k.Name, append(it.args[:0], k.Args...)
		it.result, it.hasResult, it.dur = "", false, 0
		switch {
		case !src.Done:
			it.state = toolRunning
		case k.Unreported:
			it.state = toolUnreported // an old conversation without outcomes
		default:
			it.state, it.dur = stateOf(k.OK), k.Duration
		}
		if src.Done {
			it.result, it.hasResult = k.Result, true
			it.awaiting = false
		}
	}
	it.version++
}

func stateOf(ok bool) toolState {
	if ok {
		return toolOK
	}
	return toolFailed
}

// add appends an item, deciding its spacing once: tool rows sit directly
// under the text that announced them and under each other.
func (m *Model) add(it *item) {
	if n := len(m.items); n > 0 {
		prev := m.items[n-1].kind
		it.gap = !(it.kind == kTool && (prev == kTool || prev == kText))
	}
	m.items = append(m.items, it)
	if !m.follow {
		m.unseen++
	}
}

// AddNotice shows a line that is no part of the conversation's
// transcript: a notice only shown, or one of the TUI's own.
func (m *Model) AddNotice(text string, warn bool) {
	m.add(&item{kind: kNotice, buf: []byte(text), warn: warn})
}

// SetQueue shows the messages waiting for the running turn.
func (m *Model) SetQueue(q []string) {
	var b strings.Builder
	for i, s := range q {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("⧗ queued: ")
		b.WriteString(toolfmt.OneLine(s))
	}
	m.queue = &item{kind: kQueue, buf: []byte(b.String()), gap: len(q) > 0}
}

// Outside shows a call made from outside the conversation (an MCP
// client's) as a tool row labelled with who made it: running when it
// starts, with its outcome when it ends. It is not the running turn's, so
// the turn's end leaves it alone.
func (m *Model) Outside(c session.OutsideCall) {
	it := m.byID[c.ID]
	if it == nil || it.origin == "" {
		if c.Done {
			return // started before this conversation was shown
		}
		it = &item{kind: kTool, name: c.Name, args: []byte(c.Args), origin: c.Origin, state: toolRunning}
		m.byID[c.ID] = it
		m.add(it)
		m.markAwaiting(c.ID, m.awaiting[c.ID])
		return
	}
	if !c.Done {
		return
	}
	it.state, it.dur = stateOf(c.OK), c.Duration
	it.result, it.hasResult = c.Result, true
	it.awaiting = false
	it.version++
}

func (m *Model) finish(it *item) {
	if it == nil || !it.streaming {
		return
	}
	it.streaming = false
	it.version++
}

// endRun closes whatever the run left open. Only the tail of the list can
// still be open, so the walk stops at the previous turn's user message.
func (m *Model) endRun(cancelled bool) {
	for i := len(m.items) - 1; i >= 0; i-- {
		it := m.items[i]
		if it.kind == kUser {
			break
		}
		if it.kind == kTool && it.origin != "" {
			continue // an outside call ends on its own
		}
		if it.streaming {
			m.finish(it)
		}
		if it.kind == kTool && it.state == toolRunning {
			if cancelled {
				it.state = toolCancelled
			} else {
				it.state = toolNoResult
			}
			it.version++
		}
	}
}

// Interrupted marks calls still running as stopped.
func (m *Model) Interrupted() { m.endRun(true) }

// SetAwaiting marks the tool calls whose approval is pending (all others
// are unmarked), so their rows say they wait for the person rather than
// run.
func (m *Model) SetAwaiting(callIDs []string) {
	next := make(map[string]bool, len(callIDs))
	for _, id := range callIDs {
		next[id] = true
	}
	for id := range m.awaiting {
		if !next[id] {
			m.markAwaiting(id, false)
		}
	}
	for id := range next {
		m.markAwaiting(id, true)
	}
	m.awaiting = next
}

func (m *Model) markAwaiting(id string, on bool) {
	if it := m.byID[id]; it != nil && it.kind == kTool && it.awaiting != on {
		it.awaiting = on
		it.version++
	}
}

// Running reports whether a tool call spins, so the root keeps ticking.
func (m *Model) Running() bool {
	for i := len(m.items) - 1; i >= 0 && i >= len(m.items)-64; i-- {
		if it := m.items[i]; it.kind == kTool && it.state == toolRunning {
			return true
		}
	}
	return false
}

// Tick advances the spinner.
func (m *Model) Tick() { m.frame++ }

// SetFrame fixes the spinner frame (golden tests).
func (m *Model) SetFrame(f int) { m.frame = f }

// block returns item i rendered, where i == len(items) is the queue.
func (m *Model) block(i int, width int) *item {
	var it *item
	if i == len(m.items) {
		it = m.queue
	} else {
		it = m.items[i]
	}
	renderer{m: m, width: width}.render(it)
	return it
}

func (m *Model) blocks() int { return len(m.items) + 1 }

// ScrollBy moves the view by n lines (negative is up).
func (m *Model) ScrollBy(n int) {
	cw, ch := m.contentSize()
	if n == 0 || ch == 0 {
		return
	}
	if n < 0 {
		if m.follow {
			m.top = m.followTop(cw, ch)
			m.follow = false
		}
		a := m.top
		a.line += n
		for a.line < 0 && a.item > 0 {
			a.item--
			a.line += m.block(a.item, cw).height()
		}
		if a.line < 0 {
			a.line = 0
		}
		m.top = a
		m.checkBottom(cw, ch)
		return
	}
	if m.follow {
		return
	}
	a := m.top
	a.line += n
	for a.item < m.blocks() && a.line >= m.block(a.item, cw).height() {
		a.line -= m.block(a.item, cw).height()
		a.item++
	}
	m.top = a
	m.checkBottom(cw, ch)
}

// PageUp scrolls up by the view height less one line, for context.
func (m *Model) PageUp() { _, h := m.contentSize(); m.ScrollBy(-max(h-1, 1)) }

// PageDown scrolls down by the view height less one line.
func (m *Model) PageDown() { _, h := m.contentSize(); m.ScrollBy(max(h-1, 1)) }

// HalfPageUp scrolls up by half the view.
func (m *Model) HalfPageUp() { _, h := m.contentSize(); m.ScrollBy(-max(h/2, 1)) }

// HalfPageDown scrolls down by half the view.
func (m *Model) HalfPageDown() { _, h := m.contentSize(); m.ScrollBy(max(h/2, 1)) }

// Top scrolls to the first message.
func (m *Model) Top() {
	cw, ch := m.contentSize()
	m.follow, m.top = false, anchor{}
	m.checkBottom(cw, ch)
}

// Bottom scrolls to the end and follows new output again.
func (m *Model) Bottom() { m.follow, m.unseen = true, 0 }

// followTop finds the first visible line when following the bottom.
func (m *Model) followTop(cw, ch int) anchor {
	need := ch
	for i := m.blocks() - 1; i >= 0; i-- {
		h := m.block(i, cw).height()
		if h >= need {
			return anchor{i, h - need}
		}
		need -= h
	}
	return anchor{}
}

// checkBottom switches back to following when the anchored view already
// shows the end.
func (m *Model) checkBottom(cw, ch int) {
	if m.follow {
		return
	}
	rest := -m.top.line
	for i := m.top.item; i < m.blocks(); i++ {
		rest += m.block(i, cw).height()
		if rest > ch {
			return
		}
	}
	if rest <= ch {
		m.follow, m.unseen = true, 0
	}
}

// SelectPrev and SelectNext move the selection among expandable items
// (reasoning and finished tool calls) and scroll it into view.
func (m *Model) SelectPrev() { m.selectStep(-1) }

// SelectNext moves the selection down.
func (m *Model) SelectNext() { m.selectStep(1) }

func (m *Model) selectStep(dir int) {
	i := m.sel
	if i < 0 || i >= len(m.items) {
		i = len(m.items)
		if dir > 0 {
			i = -1
		}
	}
	for i += dir; i >= 0 && i < len(m.items); i += dir {
		if m.items[i].expandable() {
			m.sel = i
			m.reveal(i)
			return
		}
	}
}

// Selected reports whether an item is selected.
func (m *Model) Selected() bool { return m.sel >= 0 && m.sel < len(m.items) }

// ClearSelection drops the selection.
func (m *Model) ClearSelection() { m.sel = -1 }

// ToggleSelected expands or collapses the selected item.
func (m *Model) ToggleSelected() bool {
	if !m.Selected() {
		return false
	}
	it := m.items[m.sel]
	it.expanded = !it.expanded
	it.version++
	m.reveal(m.sel)
	return true
}

// reveal scrolls so that item i starts in view.
func (m *Model) reveal(i int) {
	cw, ch := m.contentSize()
	first, last := m.visibleRange(cw, ch)
	if i > first && i < last {
		return
	}
	m.follow = false
	m.top = anchor{item: i}
	m.checkBottom(cw, ch)
}

// visibleRange returns the first and last item indices on screen.
func (m *Model) visibleRange(cw, ch int) (int, int) {
	a := m.top
	if m.follow {
		a = m.followTop(cw, ch)
	}
	used := -a.line
	last := a.item
	for i := a.item; i < m.blocks(); i++ {
		last = i
		used += m.block(i, cw).height()
		if used >= ch {
			break
		}
	}
	return a.item, last
}

// View draws the pane at its size, border included.
func (m *Model) View() string {
	cw, ch := m.contentSize()
	lines := make([]string, 0, ch)
	blank := strings.Repeat(" ", cw)
	get := func(it *item, j int) string {
		if l := it.line(j); l != "" {
			return l
		}
		return blank // gap lines are the only unpadded ones
	}
	if m.follow {
		// Collect backwards from the end, then flip.
		for i := m.blocks() - 1; i >= 0 && len(lines) < ch; i-- {
			it := m.block(i, cw)
			g := m.gutter(i)
			for j := it.height() - 1; j >= 0 && len(lines) < ch; j-- {
				lines = append(lines, g+get(it, j)+" ")
			}
		}
		for l, r := 0, len(lines)-1; l < r; l, r = l+1, r-1 {
			lines[l], lines[r] = lines[r], lines[l]
		}
	} else {
		start := m.top.line
		for i := m.top.item; i < m.blocks() && len(lines) < ch; i++ {
			it := m.block(i, cw)
			g := m.gutter(i)
			for j := start; j < it.height() && len(lines) < ch; j++ {
				lines = append(lines, g+get(it, j)+" ")
			}
			start = 0
		}
	}
	title := "Chat"
	if m.title != "" {
		title += " · " + termtext.Line(m.title) // often the model's words
	}
	if len(m.items) == 0 && len(m.queue.buf) == 0 {
		return frame.Box(m.th, title, m.focused, m.w, m.h, emptyHint(m.th, m.hint, m.w), m.footer())
	}
	return frame.BoxExact(m.th, title, m.focused, m.w, m.h, lines, m.footer())
}

func (m *Model) gutter(i int) string {
	if m.focused && i == m.sel {
		return m.th.Accent.Render("▌")
	}
	return " "
}

func (m *Model) footer() string {
	var parts []string
	if !m.follow {
		s := "scrolled up · end: latest"
		if m.unseen > 0 {
			s = "↓ " + strconv.Itoa(m.unseen) + " new · end: latest"
		}
		parts = append(parts, s)
	}
	if m.focused {
		parts = append(parts, "↑↓ select · enter expand")
	}
	return strings.Join(parts, " · ")
}

// emptyHint is what an empty conversation shows in a box w cells wide,
// wrapped between a cell of padding on either side: cut at the border, the
// demo's hint lost its example at 120 columns.
func emptyHint(th *theme.Theme, extra string, w int) []string {
	text := "No messages yet. Type below and press enter.\n/ lists commands and skills · ? shows every key."
	if extra != "" {
		text += "\n\n" + extra
	}
	lines := []string{""}
	for _, l := range Wrap(text, w-4) {
		lines = append(lines, th.Faint.Render(" "+l))
	}
	return lines
}

// SetEmptyHint sets an extra line shown while the conversation is empty.
func (m *Model) SetEmptyHint(s string) { m.hint = s }

// Frame is the spinner frame, so other spinners can turn in step.
func (m *Model) Frame() int { return m.frame }
