package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/infer-workspace/infer/session/store"
)

func newConversationsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "conversations",
		Aliases: []string{"conv"},
		Short:   "List, show, export, rename, pin and delete this project's conversations",
		Long: `conversations works on the conversations stored for the current project
(the git top-level of the working directory). Ids may be shortened to any
unique prefix of at least four characters.`,
	}
	cmd.AddCommand(newConvListCmd(), newConvShowCmd(), newConvExportCmd(), newConvRenameCmd(), newConvPinCmd(), newConvDeleteCmd())
	return cmd
}

func withStore(fn func(cmd *cobra.Command, st *store.Store, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		p, err := currentProject(cmd.Context())
		if err != nil {
			return err
		}
		st, err := p.store()
		if err != nil {
			return err
		}
		return fn(cmd, st, args)
	}
}

// withConversation is withStore for commands whose first argument names a
// conversation (a full id or a unique prefix).
func withConversation(fn func(cmd *cobra.Command, st *store.Store, id string, args []string) error) func(*cobra.Command, []string) error {
	return withStore(func(cmd *cobra.Command, st *store.Store, args []string) error {
		id, err := resolveConversation(st, args[0])
		if err != nil {
			return err
		}
		return fn(cmd, st, id, args[1:])
	})
}

func newConvListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List conversations, pinned first, then newest first",
		Args:  usageArgs(cobra.NoArgs),
		RunE: withStore(func(cmd *cobra.Command, st *store.Store, _ []string) error {
			list, err := st.List()
			if err != nil {
				return err
			}
			slices.SortStableFunc(list, func(a, b store.Meta) int {
				if a.Pinned != b.Pinned {
					if a.Pinned {
						return -1
					}
					return 1
				}
				return 0
			})
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			if len(list) == 0 {
				fmt.Fprintln(out, "No conversations in this project yet. Start one with `infer` or `infer headless \"…\"`.")
				return nil
			}
			var tw table
			tw.add("ID", "PIN", "UPDATED", "MSGS", "TITLE")
			now := time.Now()
			for _, m := range list {
				pin := ""
				if m.Pinned {
					pin = "📌"
				}
				// The title is stored data and one table cell: escape its
				// control characters, newlines and tabs included.
				tw.add(m.ID[:8], pin, ago(m.UpdatedAt, now), strconv.Itoa(m.MessageCount), termSafeLine(m.Title))
			}
			return tw.write(out)
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	return cmd
}

func newConvShowCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Print a conversation as Markdown",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: withConversation(func(cmd *cobra.Command, st *store.Store, id string, args []string) error {
			c, err := st.Load(id)
			if err != nil {
				return err
			}
			// show is for reading in a terminal, so the stored text is
			// escaped; `export` keeps the Markdown byte for byte.
			_, err = io.WriteString(cmd.OutOrStdout(), termSafeText(string(store.ExportMarkdown(c))))
			return err
		}),
	}
}

func newConvExportCmd() *cobra.Command {
	var format, output string
	cmd := &cobra.Command{
		Use:   "export ID",
		Short: "Export a conversation as Markdown or JSON",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: withConversation(func(cmd *cobra.Command, st *store.Store, id string, args []string) error {
			c, err := st.Load(id)
			if err != nil {
				return err
			}
			var data []byte
			switch strings.ToLower(format) {
			case "markdown", "md":
				data = store.ExportMarkdown(c)
			case "json":
				if data, err = store.ExportJSON(c); err != nil {
					return err
				}
			default:
				return usageError{fmt.Errorf("unknown --format %q: use markdown or json", format)}
			}
			if output == "" || output == "-" {
				_, err = cmd.OutOrStdout().Write(data)
				return err
			}
			if err := os.WriteFile(output, data, 0o600); err != nil {
				return fmt.Errorf("writing the export: %w", err)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "infer: exported %q to %s\n", c.Meta.Title, output)
			return nil
		}),
	}
	cmd.Flags().StringVarP(&format, "format", "f", "markdown", "markdown or json")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this file instead of stdout")
	return cmd
}

func newConvRenameCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "rename ID TITLE...",
		Short: "Give a conversation your own title",
		Args:  usageArgs(cobra.MinimumNArgs(2)),
		RunE: withConversation(func(cmd *cobra.Command, st *store.Store, id string, args []string) error {
			title := strings.TrimSpace(strings.Join(args, " "))
			if title == "" {
				return usageError{errors.New("the new title is empty")}
			}
			if err := st.Rename(id, title); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Renamed %s to %q.\n", id[:8], title)
			return nil
		}),
	}
}

func newConvPinCmd() *cobra.Command {
	var off bool
	cmd := &cobra.Command{
		Use:   "pin ID",
		Short: "Pin a conversation to the top of lists (--off to unpin)",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: withConversation(func(cmd *cobra.Command, st *store.Store, id string, args []string) error {
			if err := st.SetPinned(id, !off); err != nil {
				return err
			}
			verb := "Pinned"
			if off {
				verb = "Unpinned"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s.\n", verb, id[:8])
			return nil
		}),
	}
	cmd.Flags().BoolVar(&off, "off", false, "unpin instead")
	return cmd
}

func newConvDeleteCmd() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete ID",
		Short: "Delete a conversation (asks first unless --yes)",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: withConversation(func(cmd *cobra.Command, st *store.Store, id string, args []string) error {
			c, err := st.Load(id)
			if err != nil {
				return err
			}
			if !yes {
				fmt.Fprintf(cmd.ErrOrStderr(), "Delete %q (%d messages)? This cannot be undone. [y/N] ", c.Meta.Title, c.Meta.MessageCount)
				if !confirmed(cmd.InOrStdin()) {
					return errors.New("not deleted")
				}
			}
			if err := st.Delete(id); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Deleted %s.\n", id[:8])
			return nil
		}),
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

func confirmed(r io.Reader) bool {
	line, _ := bufio.NewReader(r).ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}
