package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks a mistake on the command line, which exits 2 and shows
// the usage, unlike a runtime failure.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usageArgs makes a positional-argument check report a usage error.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// newRootCmd builds the whole command tree.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "infer",
		Short: "A terminal workspace where you and an AI agent work in your real browser",
		Long: `infer is a terminal workspace where you and an AI agent work together: chat,
tool calls you approve, and your own browser, driven through the infer
extension, which connects to infer on a local port.

Run "infer init" once to create ~/.infer (or $INFER_HOME) and a pairing token.`,
		Args:          rootArgs,
		SilenceUsage:  true, // runtime errors are not usage mistakes
		SilenceErrors: true, // run prints errors in one format
		Version:       versionString(),
	}
	setupTUI(root) // RunE: `infer` alone opens the terminal workspace
	root.SuggestionsMinimumDistance = 2
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	addCommands(root)
	return root
}

// addCommands registers the subcommands; a new one is one line here.
func addCommands(root *cobra.Command) {
	root.AddCommand(
		newInitCmd(),
		newPairCmd(),
		newVersionCmd(),
		newServeCmd(),
		newHeadlessCmd(),
		newConversationsCmd(),
		newPermissionsCmd(),
		newTrustCmd(),
		newDoctorCmd(),
		newMCPCmd(),
	)
}

// rootArgs rejects unknown subcommands. Cobra's own check only applies
// when the root has no Args, and the root needs its own RunE.
func rootArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return unknownCommand(cmd, args[0])
}

// guardGroups gives every command group under cmd (a command with
// subcommands and no Run of its own, such as `infer conversations`) the
// root's behaviour. Cobra runs such a group's help for any arguments and
// exits 0, so `infer conversations lst` looked like success to a script.
// Guarded, a group alone still prints its help, as `infer` alone does
// when it has no terminal, and any other word is a usage error (exit 2).
func guardGroups(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		guardGroups(c)
	}
	if !cmd.HasSubCommands() || cmd.Runnable() {
		return
	}
	cmd.Args = rootArgs
	// Only the root's distance is set; without it "lst" suggests nothing.
	cmd.SuggestionsMinimumDistance = cmd.Root().SuggestionsMinimumDistance
	cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
}

// unknownCommand is the usage error for a word that names no subcommand
// of cmd: it names the word, and the closest subcommand if one is near,
// else every subcommand, so the fix is on the same line.
func unknownCommand(cmd *cobra.Command, word string) error {
	msg := fmt.Sprintf("unknown command %q for %q", word, cmd.CommandPath())
	if s := cmd.SuggestionsFor(word); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	} else {
		var names []string
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		msg += "; use one of: " + strings.Join(names, ", ")
	}
	return usageError{errors.New(msg)}
}

// run executes the command line and returns the exit code. Errors are
// printed as "infer: message", one line each; usage is shown only for
// command-line mistakes. The commands read stdin (nil: os.Stdin) and take
// their home and working directory from ctx (see where), so that tests run
// them side by side without swapping the process's.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	// Cobra adds its completion group only when it executes, writing to
	// the output set by then; adding it here, after SetOut, lets
	// guardGroups reach it too.
	root.InitDefaultCompletionCmd()
	guardGroups(root)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	for _, line := range strings.Split(strings.TrimRight(err.Error(), "\n"), "\n") {
		fmt.Fprintf(stderr, "infer: %s\n", line)
	}
	var coded exitError
	if errors.As(err, &coded) {
		return coded.ExitCode()
	}
	var ue usageError
	if errors.As(err, &ue) {
		if cmd == nil {
			cmd = root
		}
		fmt.Fprintf(stderr, "\n%s", cmd.UsageString())
		return exitUsage
	}
	return exitFailure
}
