package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/tui"
	"github.com/infer-workspace/infer/tui/dialog"
)

// Exit codes of `infer trust` beyond the common ones, so a script can tell
// the answers of --show apart without parsing text.
const (
	// exitNotTrusted: the folder is not trusted, or its file changed
	// since it was.
	exitNotTrusted = 3
	// exitNoProjectConfig: the folder has no .infer/config.yaml.
	exitNoProjectConfig = 4
)

func newTrustCmd() *cobra.Command {
	var revoke, show bool
	cmd := &cobra.Command{
		Use:   "trust [--revoke | --show] [FOLDER]",
		Short: "Trust a project's .infer/config.yaml, so all its settings apply",
		Long: `A project's .infer/config.yaml comes with the repository, so until you trust
the folder infer applies only its harmless settings: storage,
agent.effort, agent.temperature, agent.max_steps, agent.stream_idle_timeout,
and for providers built in or defined in your own config.yaml their models,
effort and temperature, and model when it names one of them; and what only
narrows (more tools.bash.deny and sandbox.deny_read entries,
sandbox.network: false, sandbox.mode: auto).

Settings that could send your API keys elsewhere or let more run without
asking wait for trust: any provider's base_url, api_key_env, api_key, kind
and discover, providers your config.yaml does not define, agent.mode,
agent.judge_model, agent.system_prompt, tools.bash.allow, tool timeouts,
and the rest of the sandbox section.

infer trust shows what the file would change and trusts the folder with
the file exactly as it is now: any later change, even to a comment, makes
it untrusted again. FOLDER (default: the current directory) is resolved to
its project the way infer does at start: the nearest folder above it with
.git. The terminal workspace asks the same question when it opens an
untrusted project; infer serve and infer headless say what they ignored.
Trust is kept in trusted.json in infer's home, never in the project.

Exit codes: 0 done (with --show: the folder is trusted), 1 error,
2 usage error, 3 with --show: not trusted, or the file changed since,
4 the folder has no .infer/config.yaml.`,
		Example: `  infer trust                 # trust the current project after reading what it sets
  infer trust --show ~/src/x  # is it trusted, and what waits for trust?
  infer trust --revoke        # ignore the widening settings again`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if revoke && show {
				return usageError{errors.New("--revoke and --show do not go together: give one")}
			}
			home, wd, err := dirs(cmd.Context())
			if err != nil {
				return err
			}
			folder := "."
			if len(args) == 1 {
				folder = args[0]
			}
			root, err := trustRoot(wd, folder)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch {
			case revoke:
				return revokeTrust(out, home, root)
			case show:
				return showTrust(out, home, root)
			}
			return trustFolder(out, home, root)
		},
	}
	cmd.Flags().BoolVar(&revoke, "revoke", false, "forget the folder, so its widening settings are ignored again")
	cmd.Flags().BoolVar(&show, "show", false, "say whether the folder is trusted and what its file sets that needs trust; change nothing")
	return cmd
}

// trustRoot resolves a folder, relative to the working directory wd, to
// the project infer would open there.
func trustRoot(wd, folder string) (string, error) {
	shown := folder
	if !filepath.IsAbs(folder) {
		folder = filepath.Join(wd, folder)
	}
	fi, err := os.Stat(folder)
	if err != nil {
		return "", fmt.Errorf("folder %s: %w", termSafeLine(shown), unwrapPath(err))
	}
	if !fi.IsDir() {
		return "", usageError{fmt.Errorf("%s is not a folder", termSafeLine(shown))}
	}
	return config.ProjectRoot(folder)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// projectFile names a project's config.yaml for messages.
func projectFile(root string) string {
	return termSafeLine(config.DisplayPath(config.ProjectConfigPath(root)))
}

func noProjectConfig(root string) error {
	return exitError{exitNoProjectConfig, fmt.Errorf("%s has no %s: there is nothing to trust", termSafeLine(config.DisplayPath(root)), filepath.Join(config.ProjectConfigDir, config.ConfigFile))}
}

// trustFolder shows what the file sets that needs trust, then records the
// hash of exactly those bytes: a file changed meanwhile stays untrusted.
func trustFolder(out io.Writer, home, root string) error {
	l, err := config.Load(home, root)
	if err != nil {
		return fmt.Errorf("%w\nfix the file first: infer trusts only a file it can read", err)
	}
	if l.Trust.State == config.NoProjectConfig {
		return noProjectConfig(root)
	}
	if err := config.TrustSHA256(home, l.Trust.Folder, l.Trust.SHA256); err != nil {
		return err
	}
	file := projectFile(root)
	if len(l.NeedsTrust) == 0 {
		fmt.Fprintf(out, "Trusted %s: it sets nothing that needed trust, and applies in full as before.\n", termSafeLine(config.DisplayPath(root)))
		return nil
	}
	fmt.Fprintf(out, "Trusted %s. From the next start, %s also applies:\n", termSafeLine(config.DisplayPath(root)), file)
	printSettings(out, l.NeedsTrust)
	fmt.Fprintln(out, "Any change to the file makes it untrusted again; `infer trust --revoke` undoes this.")
	return nil
}

func revokeTrust(out io.Writer, home, root string) error {
	was, err := config.RevokeTrust(home, root)
	if err != nil {
		return err
	}
	if !was {
		fmt.Fprintf(out, "%s was not trusted; nothing changed.\n", termSafeLine(config.DisplayPath(root)))
		return nil
	}
	fmt.Fprintf(out, "No longer trusted: %s. From the next start its widening settings are ignored again.\n", termSafeLine(config.DisplayPath(root)))
	return nil
}

func showTrust(out io.Writer, home, root string) error {
	l, err := config.Load(home, root)
	if err != nil {
		return err
	}
	st := l.Trust
	if st.State == config.NoProjectConfig {
		return noProjectConfig(root)
	}
	fmt.Fprintf(out, "folder  %s\nfile    %s\n", termSafeLine(st.Folder), projectFile(root))
	state := st.State.String()
	if !st.TrustedAt.IsZero() {
		state += " (trusted " + st.TrustedAt.Local().Format(time.DateTime) + ")"
	}
	fmt.Fprintf(out, "state   %s\n", state)
	switch {
	case len(l.NeedsTrust) == 0:
		fmt.Fprintln(out, "It sets nothing that needs trust: everything in it applies either way.")
	case st.State == config.Trusted:
		fmt.Fprintln(out, "Applied because the folder is trusted:")
		printSettings(out, l.NeedsTrust)
	default:
		fmt.Fprintln(out, "Ignored until you trust the folder:")
		printSettings(out, l.NeedsTrust)
	}
	if st.State != config.Trusted {
		why := "is not trusted"
		if st.State == config.TrustChanged {
			why = "changed since it was trusted"
		}
		return exitError{exitNotTrusted, fmt.Errorf("%s %s; read it, then run `infer trust` in %s to apply it", projectFile(root), why, termSafeLine(config.DisplayPath(root)))}
	}
	return nil
}

// printSettings lists settings one a line. Their values are already
// quoted with control characters escaped and secrets hidden.
func printSettings(out io.Writer, settings []config.Setting) {
	for _, s := range settings {
		fmt.Fprintf(out, "  %s: %s\n", s.Key, s.Value)
	}
}

// askTrust is tui.AskTrust; tests replace it to answer without a terminal.
var askTrust = tui.AskTrust

// askTrustAtStart asks the person, before the terminal workspace is built,
// whether to trust the current project when its .infer/config.yaml is
// untrusted and sets what needs trust. Trusting records the hash of the
// bytes shown, and the workspace is then built with the whole file; not
// now builds it without those settings, and openApp's warnings say so in
// the chat. It reports quit when the person pressed ctrl+c instead.
// Problems reading the configuration are left to openApp, which reports
// them the usual way.
func askTrustAtStart(ctx context.Context, log *slog.Logger) (quit bool, err error) {
	p, err := currentProject(ctx)
	if err != nil {
		return false, nil
	}
	l, err := config.Load(p.home, p.root)
	if err != nil || l.Trust.State == config.Trusted || len(l.NeedsTrust) == 0 {
		return false, nil
	}
	prompt := dialog.TrustPrompt{
		Folder:    config.DisplayPath(l.Trust.Folder),
		File:      config.DisplayPath(l.Trust.File),
		Changed:   l.Trust.State == config.TrustChanged,
		TrustedAt: l.Trust.TrustedAt,
	}
	for _, s := range l.NeedsTrust {
		prompt.Settings = append(prompt.Settings, dialog.TrustSetting{Key: s.Key, Value: s.Value})
	}
	choice, err := askTrust(ctx, prompt, tui.Options{})
	if err != nil {
		return true, fmt.Errorf("asking whether to trust %s: %w", prompt.Folder, err)
	}
	switch choice {
	case tui.TrustYes:
		if err := config.TrustSHA256(p.home, l.Trust.Folder, l.Trust.SHA256); err != nil {
			return true, err
		}
		log.Info("project folder trusted", "folder", l.Trust.Folder, "applies", l.Ignored())
	case tui.TrustQuit:
		return true, nil
	default:
		log.Warn("project folder not trusted: its settings are ignored for this run", "folder", l.Trust.Folder, "ignored", l.Ignored())
	}
	return false, nil
}
