// Package tui is infer's terminal workspace: a Bubble Tea program that
// shows the active conversation, the approval requests, the browser and a
// message editor, and turns keys into workspace calls.
//
// It holds no business logic. Everything it shows comes from the
// workspace's state and event stream, in session's own types (see
// Workspace), and every intent becomes a workspace call made in a tea.Cmd.
// See AGENTS.md in this directory for the architecture.
package tui

import (
	"context"
	"errors"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
)

// Options configure the TUI.
type Options struct {
	// Port and Token are the pairing details /pair shows; the token is
	// masked on screen and copied with OSC 52 on request.
	Port  int
	Token string
	// CurrentToken, when set, is asked for the token instead: infer
	// follows a rotation of the token while it runs.
	CurrentToken func() string
	// Grants backs /permissions; nil hides the saved grants.
	Grants Grants
	// Root is the project root, against which a Write's relative path is
	// read for its diff; "" means the working directory.
	Root string
	// Now is the clock (the approval guard); nil means
	// time.Now.
	Now func() time.Time
	// NoColor draws without any colour or style escapes. Run also turns it
	// on when the NO_COLOR environment variable is set.
	NoColor bool
	// Background forces "dark" or "light"; "" asks the terminal.
	Background string
	// BrowserOff says why the browser bridge is not running and what to
	// do about it (e.g. run `infer init`); "" when it runs. The browser
	// pane shows it instead of the pairing hint.
	BrowserOff string
	// Unconfined says, in a few words, that commands are not confined
	// ("no sandbox", "sandbox off"); the status bar keeps it in sight as
	// a warning. "" when the sandbox is in force.
	Unconfined string
	// MCP shows the MCP servers in the status bar and /mcp; nil hides
	// them.
	MCP MCP
	// Notices are warnings for the person from before the TUI started,
	// such as configuration problems, shown at the top of the chat:
	// nothing may write to the terminal while the TUI owns it.
	Notices []string
}

// Run shows the TUI until the person quits or ctx ends. It owns the
// subscription it opens and closes it before returning.
func Run(ctx context.Context, ws Workspace, opts Options) error {
	if os.Getenv("NO_COLOR") != "" {
		opts.NoColor = true
	}
	return run(ctx, ws, opts)
}

// run is Run with extra program options (tests run without a terminal).
func run(ctx context.Context, ws Workspace, opts Options, extra ...tea.ProgramOption) error {
	m := New(ws, opts)
	defer m.Close()
	popts := append([]tea.ProgramOption{tea.WithContext(ctx)}, extra...)
	if opts.NoColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.ASCII))
	}
	_, err := tea.NewProgram(m, popts...).Run()
	if err != nil && errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil // cancelled by the caller: a normal way to stop
	}
	return err
}
