// Package theme holds the TUI's styles for a dark or light background, or
// none at all when NO_COLOR is set. Every pane takes a *Theme instead of
// building styles itself, so a background change is one swap.
//
// Styles only decorate: every state they show (focus, success, failure,
// selection) is also spelled by a symbol or a word, so nothing depends on
// colour alone.
package theme

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// Theme is one set of styles.
type Theme struct {
	Dark    bool
	NoColor bool

	Text        lipgloss.Style
	Faint       lipgloss.Style
	Bold        lipgloss.Style
	Accent      lipgloss.Style
	OK          lipgloss.Style
	Err         lipgloss.Style
	Warn        lipgloss.Style
	User        lipgloss.Style // the bar beside the person's messages
	Selected    lipgloss.Style // the selected row of a list
	Border      lipgloss.Style
	FocusBorder lipgloss.Style
	Title       lipgloss.Style
	Key         lipgloss.Style // a key in help text
	Status      lipgloss.Style // the status bar
	Reasoning   lipgloss.Style
	DiffAdd     lipgloss.Style
	DiffDel     lipgloss.Style
	DiffHunk    lipgloss.Style
}

// New returns the theme for a background; noColor yields plain styles.
func New(dark, noColor bool) *Theme {
	t := &Theme{Dark: dark, NoColor: noColor}
	plain := lipgloss.NewStyle()
	if noColor {
		for _, s := range []*lipgloss.Style{&t.Text, &t.Faint, &t.Bold, &t.Accent, &t.OK, &t.Err, &t.Warn,
			&t.User, &t.Selected, &t.Border, &t.FocusBorder, &t.Title, &t.Key, &t.Status,
			&t.Reasoning, &t.DiffAdd, &t.DiffDel, &t.DiffHunk} {
			*s = plain
		}
		return t
	}
	pick := func(darkHex, lightHex string) color.Color {
		if dark {
			return lipgloss.Color(darkHex)
		}
		return lipgloss.Color(lightHex)
	}
	t.Text = plain
	t.Faint = plain.Foreground(pick("#8a8a8a", "#6c6c6c"))
	t.Bold = plain.Bold(true)
	t.Accent = plain.Foreground(pick("#7aa2f7", "#2952a3")).Bold(true)
	t.OK = plain.Foreground(pick("#73d67a", "#1d7a2a"))
	t.Err = plain.Foreground(pick("#f7768e", "#b3261e"))
	t.Warn = plain.Foreground(pick("#e0af68", "#8a5a00"))
	t.User = plain.Foreground(pick("#bb9af7", "#6a3cb3"))
	t.Selected = plain.Reverse(true)
	t.Border = plain.Foreground(pick("#565f89", "#a0a0b0"))
	t.FocusBorder = plain.Foreground(pick("#7aa2f7", "#2952a3"))
	t.Title = plain.Bold(true)
	t.Key = plain.Foreground(pick("#e0af68", "#8a5a00")).Bold(true)
	t.Status = plain.Foreground(pick("#c0caf5", "#303040"))
	t.Reasoning = plain.Foreground(pick("#8a8a8a", "#6c6c6c")).Italic(true)
	t.DiffAdd = plain.Foreground(pick("#73d67a", "#1d7a2a"))
	t.DiffDel = plain.Foreground(pick("#f7768e", "#b3261e"))
	t.DiffHunk = plain.Foreground(pick("#7dcfff", "#00668a"))
	return t
}

// GlamourStyle names the Glamour standard style for this theme.
func (t *Theme) GlamourStyle() string {
	switch {
	case t.NoColor:
		return "notty"
	case t.Dark:
		return "dark"
	default:
		return "light"
	}
}
