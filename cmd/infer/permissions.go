package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
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
			p, err := currentProject()
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
		Args: usageArgs(func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return errors.New("give grant ids or --all, not both or neither")
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := currentProject()
			if err != nil {
				return err
			}
			gs, err := p.grants()
			if err != nil {
				return err
			}
			if all {
				list, err := gs.List()
				if err != nil {
					return err
				}
				for _, g := range list {
					args = append(args, g.ID)
				}
			}
			for _, id := range args {
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
