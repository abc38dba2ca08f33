package tui

import (
	"context"
	"errors"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/tui/dialog"
	"github.com/infer-workspace/infer/tui/theme"
)

// TrustChoice is the person's answer to AskTrust.
type TrustChoice int

// Answers to AskTrust.
const (
	// TrustNotNow keeps ignoring the settings for this run; infer asks
	// again at the next start.
	TrustNotNow TrustChoice = iota
	// TrustYes trusts the folder with the file as shown.
	TrustYes
	// TrustQuit: the person pressed ctrl+c, or ctx ended; infer should
	// not start.
	TrustQuit
)

// AskTrust asks, on a screen of its own, whether to trust the project
// folder whose .infer/config.yaml sets what p lists, and returns the
// answer. It runs before the workspace is built because the answer
// decides the configuration the workspace is built from: asked inside the
// workspace, trusting would need a restart to route the providers and
// rebuild the tool policy. It never answers TrustYes by itself: only an
// explicit choice of Trust does (see dialog.Trust).
func AskTrust(ctx context.Context, p dialog.TrustPrompt, opts Options) (TrustChoice, error) {
	if os.Getenv("NO_COLOR") != "" {
		opts.NoColor = true
	}
	return askTrust(ctx, p, opts)
}

// askTrust is AskTrust with extra program options (tests run without a
// terminal).
func askTrust(ctx context.Context, p dialog.TrustPrompt, opts Options, extra ...tea.ProgramOption) (TrustChoice, error) {
	m := newTrustModel(p, opts)
	popts := append([]tea.ProgramOption{tea.WithContext(ctx)}, extra...)
	if opts.NoColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.ASCII))
	}
	_, err := tea.NewProgram(m, popts...).Run()
	if err != nil {
		if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
			return TrustQuit, nil // cancelled by the caller: not an error
		}
		return TrustQuit, err
	}
	return m.choice, nil
}

// trustModel shows the trust dialog alone, centred on a blank screen.
type trustModel struct {
	opts          Options
	th            *theme.Theme
	dlg           *dialog.Trust
	width, height int
	choice        TrustChoice
}

func newTrustModel(p dialog.TrustPrompt, opts Options) *trustModel {
	th := theme.New(opts.Background != "light", opts.NoColor)
	return &trustModel{opts: opts, th: th, dlg: dialog.NewTrust(th, p, opts.Now), width: 80, height: 24}
}

// Init asks the terminal for its background unless it is forced.
func (m *trustModel) Init() tea.Cmd {
	if m.opts.Background != "" {
		return nil
	}
	return tea.RequestBackgroundColor
}

// Update answers keys through the dialog.
func (m *trustModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 1), max(msg.Height, 1)
	case tea.BackgroundColorMsg:
		if m.opts.Background == "" {
			m.th = theme.New(msg.IsDark(), m.opts.NoColor)
			m.dlg.SetTheme(m.th)
		}
	case tea.KeyPressMsg:
		if msg.String() == "ctrl+c" {
			m.choice = TrustQuit
			return m, tea.Quit
		}
		switch m.dlg.HandleKey(msg).Kind {
		case dialog.Close:
			m.choice = TrustNotNow
			return m, tea.Quit
		case dialog.TrustFolder:
			m.choice = TrustYes
			return m, tea.Quit
		}
	}
	return m, nil
}

// View draws the dialog in the middle of the screen.
func (m *trustModel) View() tea.View {
	w, h := m.width, m.height
	blank := strings.TrimSuffix(strings.Repeat(strings.Repeat(" ", w)+"\n", h), "\n")
	out := layered(blank, w, h, centered(m.dlg.View(max(w-4, 10), max(h-2, 3)), w, h))
	if m.opts.NoColor {
		out = ansi.Strip(out)
	}
	v := tea.NewView(out)
	v.AltScreen = true
	v.WindowTitle = "infer · trust this folder?"
	return v
}
