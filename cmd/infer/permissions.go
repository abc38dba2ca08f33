package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/infer-workspace/infer/session/tools/grants"
)

func newPermissionsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "permissions",
		Aliases: []string{"perms"},
		Short:   "Review and revoke the \"always allow\" grants of this project",
		Long: `Grants are saved when you answer an approval with "always allow": a whole
tool, a Bash command prefix, or a browser action on one site. They apply to
the current project only; revoking one makes the next such call ask again.`,
	}
	cmd.AddCommand(newPermListCmd(), newPermRevokeCmd())
	return cmd
}

func newPermListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the saved grants",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := currentProject(cmd.Context())
			if err != nil {
				return err
			}
			gs, err := p.grants()
			if err != nil {
				return err
			}
			list, err := gs.List()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if list == nil {
					list = []grants.Grant{} // a list, empty, for scripts that iterate it
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			if len(list) == 0 {
				fmt.Fprintln(out, "No saved grants: every call that needs approval asks.")
				return nil
			}
			var tw table
			tw.add("ID", "KIND", "ALLOWS", "SAVED")
			now := time.Now()
			for _, g := range list {
				tw.add(g.ID, string(g.Kind), g.String(), ago(g.CreatedAt, now))
			}
			return tw.write(out)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the grants as JSON")
	return cmd
}

func newPermRevokeCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "revoke ID... | --all",
		Short: "Revoke grants by id (see `infer permissions list`)",
		Long: `revoke deletes the named grants, so the next such call asks again. An id
may be shortened to any unique prefix of at least four characters, as
conversation ids may. Every id is checked before any grant is revoked.`,
		Args: usageArgs(func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return errors.New("give grant ids or --all, not both or neither")
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := currentProject(cmd.Context())
			if err != nil {
				return err
			}
			gs, err := p.grants()
			if err != nil {
				return err
			}
			list, err := gs.List()
			if err != nil {
				return err
			}
			var ids []string
			if all {
				for _, g := range list {
					ids = append(ids, g.ID)
				}
			}
			for _, arg := range args {
				id, err := resolveGrant(list, arg)
				if err != nil {
					return err
				}
				if !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
			for _, id := range ids {
				if err := gs.Revoke(id); err != nil {
					return fmt.Errorf("revoking %s: %w", id, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Revoked %s.\n", id)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "revoke every grant of this project")
	return cmd
}

// resolveGrant finds the grant that arg names: its full id, or a prefix of
// at least four characters that no other grant shares. An ambiguous prefix
// is a usage error that lists the candidates, so the person can pick one
// without running list again.
func resolveGrant(list []grants.Grant, arg string) (string, error) {
	arg = strings.TrimSpace(arg)
	var match []grants.Grant
	for _, g := range list {
		if g.ID == arg {
			return g.ID, nil
		}
		if len(arg) >= 4 && strings.HasPrefix(g.ID, arg) {
			match = append(match, g)
		}
	}
	switch {
	case len(match) == 1:
		return match[0].ID, nil
	case len(match) > 1:
		lines := make([]string, len(match))
		for i, g := range match {
			lines[i] = fmt.Sprintf("  %s  %s", g.ID, termSafeLine(g.String()))
		}
		return "", usageError{fmt.Errorf("grant id %q matches %d grants; give more of the id:\n%s", arg, len(match), strings.Join(lines, "\n"))}
	case len(arg) < 4:
		return "", usageError{fmt.Errorf("grant id %q is too short: give at least 4 characters of it (see `infer permissions list`)", arg)}
	}
	return "", fmt.Errorf("%w with an id starting %q in this project (run `infer permissions list` to see the ids)", grants.ErrUnknown, arg)
}
