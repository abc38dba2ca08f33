package dialog

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/internal/termtext"
	"github.com/infer-workspace/infer/tui/frame"
	"github.com/infer-workspace/infer/tui/theme"
)

// TrustArmDelay is how long the trust dialog ignores a confirming enter
// after it opens: keys typed ahead while infer starts (a first message, an
// enter) must not trust a folder the person has not seen.
const TrustArmDelay = 400 * time.Millisecond

// TrustSetting is one setting the trust dialog lists.
type TrustSetting struct {
	// Key is the dotted key, e.g. "providers.openai.base_url".
	Key string
	// Value is already quoted with controls escaped and secrets hidden
	// (config.Setting.Value); the dialog still makes it one safe line.
	Value string
}

// TrustPrompt is what the trust dialog asks about.
type TrustPrompt struct {
	// Folder is the project root; File its .infer/config.yaml, both as
	// shown to the person.
	Folder, File string
	// Changed: the person trusted the folder before, and the file
	// changed since.
	Changed bool
	// TrustedAt is when they did (Changed only).
	TrustedAt time.Time
	// Settings are the file's settings that wait for trust.
	Settings []TrustSetting
}

// Trust asks whether to trust a project folder whose .infer/config.yaml
// sets what could send the person's keys elsewhere or let more run
// without asking. It answers TrustFolder or Close (not now); "Not now" is
// selected at first, and trusting takes a deliberate move to the button
// and enter, never a single letter.
type Trust struct {
	th       *theme.Theme
	p        TrustPrompt
	trust    bool // the Trust button is selected
	scroll   int
	now      func() time.Time
	openedAt time.Time
}

// NewTrust opens the dialog; now is the clock (nil means time.Now).
func NewTrust(th *theme.Theme, p TrustPrompt, now func() time.Time) *Trust {
	if now == nil {
		now = time.Now
	}
	return &Trust{th: th, p: p, now: now, openedAt: now()}
}

// SetTheme switches styles.
func (d *Trust) SetTheme(th *theme.Theme) { d.th = th }

// HandlePaste ignores pastes: nothing here takes text.
func (d *Trust) HandlePaste(string) {}

// HandleKey answers a key press.
func (d *Trust) HandleKey(k tea.KeyPressMsg) Action {
	switch k.String() {
	case "esc", "n":
		return Action{Kind: Close}
	case "left", "h", "shift+tab":
		d.trust = false
	case "right", "l", "tab":
		d.trust = true
	case "up", "k":
		d.scroll = max(d.scroll-1, 0)
	case "down", "j":
		d.scroll++
	case "pgup":
		d.scroll = max(d.scroll-10, 0)
	case "pgdown":
		d.scroll += 10
	case "enter", "space":
		if !d.trust {
			return Action{Kind: Close}
		}
		if d.now().Sub(d.openedAt) < TrustArmDelay {
			return Action{} // typed ahead: the person cannot have read it yet
		}
		return Action{Kind: TrustFolder, ID: d.p.Folder}
	}
	return Action{}
}

// View draws the dialog; the list of settings scrolls when it does not
// fit.
func (d *Trust) View(maxW, maxH int) string {
	th := d.th
	w := min(100, maxW)
	inner := max(w-4, 10) // borders and padding

	file := termtext.Line(d.p.File)
	var head []string
	if d.p.Changed {
		when := ""
		if !d.p.TrustedAt.IsZero() {
			when = " on " + d.p.TrustedAt.Local().Format(time.DateOnly)
		}
		head = wrap(fmt.Sprintf("%s changed since you trusted this folder%s. It now sets what could send your API keys elsewhere or let more run without asking:", file, when), inner)
	} else {
		head = wrap(file+" comes with this project and sets what could send your API keys elsewhere or let more run without asking:", inner)
	}
	head = append(head, "")

	keyW := 0
	for _, s := range d.p.Settings {
		keyW = max(keyW, ansi.StringWidth(s.Key))
	}
	keyW = min(keyW, inner/2)
	var list []string
	for _, s := range d.p.Settings {
		valW := max(inner-keyW-4, 8)
		vals := wrap(termtext.Line(s.Value), valW)
		for i, v := range vals {
			key := ""
			if i == 0 {
				key = termtext.Line(s.Key)
			}
			list = append(list, "  "+th.Bold.Render(frame.Pad(key, keyW))+"  "+v)
		}
	}

	tail := []string{""}
	tail = append(tail, wrap("Until you trust it, infer ignores these (the rest of the file applies). Trust only folders whose files you have read; any change to the file asks again.", inner)...)
	tail = append(tail, "", d.buttons())

	// The box takes 2 rows of border; the list gets what is left.
	room := max(maxH-2-len(head)-len(tail), 1)
	d.scroll = min(d.scroll, max(len(list)-room, 0))
	shown := list
	if len(list) > room {
		end := min(d.scroll+room, len(list))
		shown = append([]string(nil), list[d.scroll:end]...)
		// The marks take the place of a line, which counts as hidden.
		if d.scroll > 0 {
			shown[0] = th.Faint.Render(fmt.Sprintf("  ↑ %d more", d.scroll+1))
		}
		if end < len(list) && len(shown) > 1 {
			shown[len(shown)-1] = th.Faint.Render(fmt.Sprintf("  ↓ %d more", len(list)-end+1))
		}
	}
	body := append(append(append([]string(nil), head...), shown...), tail...)
	footer := "←→ choose · enter confirm · esc not now"
	if len(list) > room {
		footer = "←→ choose · enter confirm · ↑↓ scroll · esc not now"
	}
	return box(th, "Trust this folder?", body, footer, w, maxW, maxH)
}

// buttons draws the two choices; the selected one has "›" and brackets,
// so the choice does not rely on colour.
func (d *Trust) buttons() string {
	th := d.th
	button := func(label string, on bool) string {
		if on {
			return th.Accent.Render("›") + " " + th.Selected.Render("[ "+label+" ]")
		}
		return "    " + label + "  "
	}
	return "  " + button("Not now", !d.trust) + "    " + button("Trust", d.trust)
}

// wrap breaks s into lines of at most w cells, at spaces where it can.
func wrap(s string, w int) []string {
	return strings.Split(ansi.Wrap(s, max(w, 1), ""), "\n")
}
