package dialog

import (
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/internal/termtext"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools/grants"
	"github.com/infer-workspace/infer/tui/frame"
	"github.com/infer-workspace/infer/tui/theme"
)

// Picker is a list to choose one entry from: models, modes, efforts,
// skills. Like every list dialog it filters as the person types.
type Picker struct {
	th    *theme.Theme
	title string
	kind  ActionKind
	c     chooser
	hint  string
}

// NewPicker lists rows with current preselected; enter answers kind with
// the row's ID. choose names what enter does in the footer ("choose" when
// empty).
func NewPicker(th *theme.Theme, title string, rows []Row, current string, kind ActionKind, choose string) *Picker {
	if choose == "" {
		choose = "choose"
	}
	return &Picker{
		th: th, title: title, kind: kind,
		c:    newChooser(rows, current),
		hint: hint(keyUp, with(keyChoose, choose), keyClose),
	}
}

// SetTheme switches styles.
func (p *Picker) SetTheme(th *theme.Theme) { p.th = th }

// HandlePaste adds pasted text to the search.
func (p *Picker) HandlePaste(text string) { p.c.paste(text) }

// HandleKey answers a key press.
func (p *Picker) HandleKey(k tea.KeyPressMsg) Action {
	switch p.c.handleKey(k) {
	case chosenClose:
		return Action{Kind: Close}
	case chosenRow:
		r, _ := p.c.selected()
		return Action{Kind: p.kind, ID: r.ID, Text: r.ID}
	}
	return Action{}
}

// View draws the picker.
func (p *Picker) View(maxW, maxH int) string {
	w := min(72, maxW)
	body := []string{p.c.searchLine(w), ""}
	body = append(body, p.c.lines(p.th, w, max(maxH-2-len(body), 1))...)
	return box(p.th, p.title, body, p.hint, w, maxW, maxH)
}

// Resume is the /resume picker: conversations with pinned ones first,
// searchable by title, with rename, pin and delete.
type Resume struct {
	th       *theme.Theme
	c        chooser
	metas    map[string]store.Meta
	renaming string // id being renamed
	rename   textinput.Model
	confirm  string // id awaiting a second ctrl+x
	err      string
	active   string
}

// The /resume picker's own keys, on ctrl so that letters stay typing.
var (
	keyRename = key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "rename"))
	keyPin    = key.NewBinding(key.WithKeys("ctrl+t"), key.WithHelp("ctrl+t", "pin"))
	keyDelete = key.NewBinding(key.WithKeys("ctrl+x"), key.WithHelp("ctrl+x", "delete"))
)

// NewResume lists conversations; active is the one open now.
func NewResume(th *theme.Theme, metas []store.Meta, active string) *Resume {
	r := &Resume{th: th, c: newChooser(nil, ""), active: active}
	r.SetConversations(metas)
	return r
}

// SetConversations refreshes the list, keeping the selection.
func (r *Resume) SetConversations(metas []store.Meta) {
	r.metas = map[string]store.Meta{}
	var pinned, rest []Row
	for _, m := range metas {
		r.metas[m.ID] = m
		title := m.Title
		if strings.TrimSpace(title) == "" {
			title = "(untitled)"
		}
		row := Row{ID: m.ID, Title: title, Detail: detail(m)}
		if m.ID == r.active {
			row.Mark = "●"
		}
		if m.Pinned {
			if row.Mark == "" {
				row.Mark = "★"
			}
			pinned = append(pinned, row)
		} else {
			rest = append(rest, row)
		}
	}
	r.c.set(append(pinned, rest...))
}

func detail(m store.Meta) string {
	n := strconv.Itoa(m.MessageCount) + " messages"
	if m.MessageCount == 1 {
		n = "1 message"
	}
	var parts []string
	if m.Pinned {
		parts = append(parts, "pinned")
	}
	parts = append(parts, n)
	if !m.UpdatedAt.IsZero() {
		parts = append(parts, m.UpdatedAt.Format(time.DateOnly+" 15:04"))
	}
	return strings.Join(parts, " · ")
}

// SetError shows a failed operation under the list.
func (r *Resume) SetError(err error) {
	r.err = ""
	if err != nil {
		r.err = err.Error()
	}
}

// SetTheme switches styles.
func (r *Resume) SetTheme(th *theme.Theme) { r.th = th }

// HandlePaste adds pasted text to the field in use.
func (r *Resume) HandlePaste(text string) {
	text = strings.TrimSpace(strings.ReplaceAll(text, "\n", " "))
	if r.renaming != "" {
		r.rename.SetValue(r.rename.Value() + text)
		r.rename.CursorEnd()
		return
	}
	r.c.paste(text)
}

// HandleKey answers a key press.
func (r *Resume) HandleKey(k tea.KeyPressMsg) Action {
	if r.renaming != "" {
		switch {
		case key.Matches(k, keyClose):
			r.renaming = ""
			return Action{}
		case key.Matches(k, keyChoose):
			id, title := r.renaming, strings.TrimSpace(r.rename.Value())
			r.renaming = ""
			if title == "" {
				return Action{}
			}
			return Action{Kind: Rename, ID: id, Text: title}
		}
		r.rename, _ = r.rename.Update(k)
		return Action{}
	}
	confirm := r.confirm
	r.confirm = ""
	switch {
	case key.Matches(k, keyRename):
		if row, ok := r.c.selected(); ok {
			r.renaming = row.ID
			r.rename = textinput.New()
			r.rename.Prompt = "new title: "
			r.rename.SetVirtualCursor(true)
			// The field starts with the title as the list shows it, hidden
			// characters as escapes: left raw, the field would drop the
			// controls without a word and draw the bidi ones. What the
			// person sees is what saving stores.
			r.rename.SetValue(termtext.Line(r.metas[row.ID].Title))
			r.rename.CursorEnd()
			r.rename.Focus()
		}
		return Action{}
	case key.Matches(k, keyPin):
		if row, ok := r.c.selected(); ok {
			return Action{Kind: Pin, ID: row.ID, Flag: !r.metas[row.ID].Pinned}
		}
		return Action{}
	case key.Matches(k, keyDelete):
		if row, ok := r.c.selected(); ok {
			if confirm == row.ID {
				return Action{Kind: Delete, ID: row.ID}
			}
			r.confirm = row.ID
		}
		return Action{}
	}
	switch r.c.handleKey(k) {
	case chosenClose:
		return Action{Kind: Close}
	case chosenRow:
		row, _ := r.c.selected()
		return Action{Kind: Open, ID: row.ID}
	}
	return Action{}
}

// View draws the picker.
func (r *Resume) View(maxW, maxH int) string {
	th := r.th
	w := min(96, maxW)
	var top []string
	if r.renaming != "" {
		r.rename.SetWidth(max(w-16, 4))
		top = append(top, r.rename.View())
	} else {
		top = append(top, r.c.searchLine(w))
	}
	top = append(top, "")
	var bottom []string
	if r.confirm != "" {
		bottom = append(bottom, th.Warn.Render("Delete “"+termtext.Line(r.metas[r.confirm].Title)+"”? ctrl+x again to delete, any other key keeps it."))
	}
	if r.err != "" {
		bottom = append(bottom, th.Err.Render("⚠ "+termtext.Line(r.err)))
	}
	listH := max(maxH-2-len(top)-len(bottom), 1)
	body := append(top, r.c.lines(th, w, listH)...)
	body = append(body, bottom...)
	hint := hint(with(keyChoose, "open"), keyRename, keyPin, keyDelete, keyClose)
	if r.renaming != "" {
		hint = "enter save · esc cancel"
	}
	return box(th, "Resume a conversation · ★ pinned · ● open now", body, hint, w, maxW, maxH)
}

// Permissions lists saved grants and revokes them; it filters as the
// person types, like every list dialog.
type Permissions struct {
	th      *theme.Theme
	c       chooser
	err     string
	confirm string
	loaded  bool
}

// keyRevoke revokes the selected grant when pressed twice. Not "r": in a
// list that filters as you type, a letter is part of the search.
var keyRevoke = key.NewBinding(key.WithKeys("ctrl+x", "delete"), key.WithHelp("ctrl+x", "revoke"))

// NewPermissions opens the list; SetGrants fills it.
func NewPermissions(th *theme.Theme) *Permissions {
	return &Permissions{th: th, c: newChooser(nil, "")}
}

// SetGrants shows the grants, or why they could not be read.
func (p *Permissions) SetGrants(gs []grants.Grant, err error) {
	p.loaded = true
	p.err = ""
	if err != nil {
		p.err = err.Error()
	}
	rows := make([]Row, 0, len(gs))
	for _, g := range gs {
		d := ""
		if !g.CreatedAt.IsZero() {
			d = "since " + g.CreatedAt.Format(time.DateOnly)
		}
		rows = append(rows, Row{ID: g.ID, Title: g.String(), Detail: d})
	}
	p.c.set(rows)
}

// SetTheme switches styles.
func (p *Permissions) SetTheme(th *theme.Theme) { p.th = th }

// HandlePaste adds pasted text to the search.
func (p *Permissions) HandlePaste(text string) { p.c.paste(text) }

// HandleKey answers a key press.
func (p *Permissions) HandleKey(k tea.KeyPressMsg) Action {
	confirm := p.confirm
	p.confirm = ""
	if key.Matches(k, keyRevoke) {
		if row, ok := p.c.selected(); ok {
			if confirm == row.ID {
				return Action{Kind: Revoke, ID: row.ID}
			}
			p.confirm = row.ID
		}
		return Action{}
	}
	if p.c.handleKey(k) == chosenClose {
		return Action{Kind: Close}
	}
	return Action{}
}

// View draws the list.
func (p *Permissions) View(maxW, maxH int) string {
	th := p.th
	w := min(80, maxW)
	body := []string{th.Faint.Render("Calls these grants cover run without asking."), ""}
	switch {
	case !p.loaded:
		body = append(body, th.Faint.Render("loading…"))
	case len(p.c.rows) == 0 && p.err == "":
		body = append(body, th.Faint.Render("No saved permissions. Answer a request with “a” to add one."))
	default:
		body = append(body, p.c.searchLine(w), "")
		body = append(body, p.c.lines(th, w, max(maxH-8, 1))...)
	}
	if p.confirm != "" {
		body = append(body, "", th.Warn.Render("Press ctrl+x again to revoke; any other key keeps it."))
	}
	if p.err != "" {
		body = append(body, "", th.Err.Render("⚠ "+termtext.Line(p.err)))
	}
	return box(th, "Permissions", body, hint(keyUp, keyRevoke, keyClose), w, maxW, maxH)
}

// Pair shows how to pair the extension.
type Pair struct {
	th        *theme.Theme
	port      int
	token     string
	connected string // the connection line
	copied    bool
}

// NewPair shows port and a masked token; status describes the connection.
func NewPair(th *theme.Theme, port int, token, status string) *Pair {
	return &Pair{th: th, port: port, token: token, connected: status}
}

// SetTheme switches styles.
func (p *Pair) SetTheme(th *theme.Theme) { p.th = th }

// HandlePaste ignores pastes.
func (p *Pair) HandlePaste(string) {}

// HandleKey answers a key press.
func (p *Pair) HandleKey(k tea.KeyPressMsg) Action {
	switch k.String() {
	case "c", "y":
		if p.token == "" {
			return Action{}
		}
		p.copied = true
		return Action{Kind: Copy, Text: p.token}
	case "esc", "q", "enter":
		return Action{Kind: Close}
	}
	return Action{}
}

// Mask hides all but the last four characters of a secret.
func Mask(s string) string {
	if len(s) <= 4 {
		return strings.Repeat("•", len(s))
	}
	return strings.Repeat("•", min(len(s)-4, 12)) + s[len(s)-4:]
}

// View draws the card.
func (p *Pair) View(maxW, maxH int) string {
	th := p.th
	port := "unknown (see infer pair)"
	if p.port > 0 {
		port = strconv.Itoa(p.port)
	}
	token := "not configured: run infer init"
	if p.token != "" {
		token = Mask(p.token)
	}
	body := []string{
		"Pair the browser extension with this workspace:",
		"",
		"  port   " + th.Bold.Render(port),
		"  token  " + th.Bold.Render(token),
		"  state  " + termtext.Line(p.connected), // quotes the extension's version
		"",
		"In the extension's options, enter the port and paste the token.",
	}
	if p.copied {
		// OSC 52 has no answer: the terminal (or tmux) may drop it, so
		// the card says what was done, not what may have happened.
		body = append(body, "", th.OK.Render("✓ token sent to the terminal's clipboard (OSC 52)"),
			"  Paste empty? `infer pair --show-token` prints it.")
	}
	return box(th, "Pair the extension", body, "c copy token · esc close", 64, maxW, maxH)
}

// Help lists every key: the groups of a help.KeyMap's full help, each
// under its title, drawn by the bubbles help renderer so the screen says
// exactly what the bindings hold.
type Help struct {
	th     *theme.Theme
	titles []string
	keys   help.KeyMap
	scroll int
}

// NewHelp shows km's full help; titles name its groups in order.
func NewHelp(th *theme.Theme, titles []string, km help.KeyMap) *Help {
	return &Help{th: th, titles: titles, keys: km}
}

// SetTheme switches styles.
func (h *Help) SetTheme(th *theme.Theme) { h.th = th }

// HandlePaste ignores pastes.
func (h *Help) HandlePaste(string) {}

// HandleKey answers a key press.
func (h *Help) HandleKey(k tea.KeyPressMsg) Action {
	switch k.String() {
	case "esc", "q", "?", "f1", "enter":
		return Action{Kind: Close}
	case "up", "k":
		h.scroll = max(h.scroll-1, 0)
	case "down", "j":
		h.scroll++
	case "pgup":
		h.scroll = max(h.scroll-10, 0)
	case "pgdown":
		h.scroll += 10
	}
	return Action{}
}

// lines draws the groups: a title, then one row per binding with the keys
// in a column.
func (h *Help) lines() []string {
	th := h.th
	r := help.New()
	r.Styles.FullKey = th.Key.PaddingRight(1)
	r.Styles.FullDesc = lipgloss.NewStyle()
	groups := h.keys.FullHelp()
	// One key column for every group: the keys' help is padded to the
	// widest before each group is drawn.
	keyW := 0
	for _, g := range groups {
		for _, b := range g {
			keyW = max(keyW, ansi.StringWidth(b.Help().Key))
		}
	}
	var lines []string
	for i, group := range groups {
		if i > 0 {
			lines = append(lines, "")
		}
		if i < len(h.titles) {
			lines = append(lines, th.Title.Render(h.titles[i]))
		}
		padded := make([]key.Binding, len(group))
		for j, b := range group {
			padded[j] = b
			padded[j].SetHelp(frame.Pad(b.Help().Key, keyW), b.Help().Desc)
		}
		for _, l := range frame.Lines(r.FullHelpView([][]key.Binding{padded})) {
			// The renderer pads the columns' rows to one width; the box
			// measures what is written, so the padding goes.
			lines = append(lines, "  "+strings.TrimRight(l, " "))
		}
	}
	return lines
}

// View draws the help screen; it scrolls when the window is short.
func (h *Help) View(maxW, maxH int) string {
	lines := h.lines()
	visible := max(maxH-2, 1)
	h.scroll = min(h.scroll, max(len(lines)-visible, 0))
	shown := lines[h.scroll:]
	footer := "esc close"
	if len(lines) > visible {
		footer = "↑↓ scroll · esc close"
	}
	return box(h.th, "Keys", shown, footer, 76, maxW, min(maxH, len(lines)+2))
}
