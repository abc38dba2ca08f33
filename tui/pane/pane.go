// Package pane is the contract every pane of the workspace screen keeps,
// after soft-serve's common.Component: the root sizes, themes, focuses and
// draws each pane the same way, and asks each for the keys it answers, so
// the help screen is built from the panes themselves. What a pane shows
// still arrives through its own intent methods (Apply, Add, SetStatus…):
// the contract is how the screen treats a pane, not what the pane is.
package pane

import (
	"charm.land/bubbles/v2/key"

	"github.com/infer-workspace/infer/tui/theme"
)

// Pane is one box of the workspace screen.
type Pane interface {
	// SetTheme switches styles; cached renderings are redrawn lazily.
	SetTheme(th *theme.Theme)
	// SetSize gives the pane its box, border included. The editor, whose
	// height follows its text, takes height as the most lines it may use.
	SetSize(width, height int)
	// SetFocused says whether keys go to the pane, which shows it.
	SetFocused(focused bool)
	// View draws the pane as an exact block of its size.
	View() string
	// Help lists the keys the pane answers while it has the focus, for
	// the help screen: the same bindings its key handling matches.
	Help() []key.Binding
}
