package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/infer-workspace/infer/session/config"
	"github.com/spf13/cobra"
)

type initOptions struct {
	port   int
	rotate bool
}

func newInitCmd() *cobra.Command {
	var opts initOptions
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create infer's home, the extension pairing token and a commented config.yaml",
		Long: `Create infer's home (~/.infer, or $INFER_HOME) with browser_use.yaml, which
holds the port and the token the browser extension uses to connect, and a
commented config.yaml. Files that already exist are left alone, so running
it again is safe. The token is printed in full only when it is created or
rotated; "infer pair --show-token" prints it again.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("port") && (opts.port < 1 || opts.port > 65535) {
				return usageError{fmt.Errorf("--port %d: use a number from 1 to 65535", opts.port)}
			}
			return runInit(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), opts, cmd.Flags().Changed("port"))
		},
	}
	cmd.Flags().IntVar(&opts.port, "port", config.DefaultPort, "loopback port for the extension, used when browser_use.yaml is created")
	cmd.Flags().BoolVar(&opts.rotate, "rotate-token", false, "replace the pairing token, keeping every other setting (the extension must then be re-paired)")
	return cmd
}

func runInit(ctx context.Context, out, errOut io.Writer, opts initOptions, portGiven bool) error {
	home, err := homeDir(ctx)
	if err != nil {
		return err
	}
	// A home another user owns or can write in is refused before the
	// token is written there for them to read.
	if err := config.CheckHome(home); err != nil {
		return err
	}
	_, statErr := os.Stat(home)
	if err := config.EnsureDir(home); err != nil {
		return err
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		fmt.Fprintf(out, "Created %s\n", config.DisplayPath(home))
	}

	path := config.BrowserUsePath(home)
	shown := config.DisplayPath(path)
	b, warnings, err := config.LoadBrowserUse(path)
	fresh := false // whether the person must be shown the token now
	switch {
	case errors.Is(err, fs.ErrNotExist):
		b = config.NewBrowserUse(opts.port)
		if err := config.CreateBrowserUse(path, b); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%s appeared while this command ran (another `infer init`?); run `infer pair` to see its settings", shown)
			}
			return err
		}
		fmt.Fprintf(out, "Created %s (port %d, readable only by you)\n", shown, b.Extension.Port)
		fresh = true
	case opts.rotate:
		// Rotation also repairs a missing or too-short token, so it runs even
		// when the current file does not validate; RotateToken re-checks the
		// result and leaves the file alone if anything else is wrong.
		b, err = config.RotateToken(path, config.NewToken())
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "Replaced the pairing token in %s; every other setting is unchanged.\n", shown)
		fmt.Fprintln(errOut, "warning: the extension must be re-paired: paste the new token below into its options page")
		fmt.Fprintln(out, "A running infer switches to the new token within a second or two, and drops connections made with the old one.")
		fresh = true
		warnings = nil // the rewrite is 0600, so a permission warning is stale
	case err != nil:
		return err
	default:
		fmt.Fprintf(out, "%s exists and is valid; left unchanged.\n", shown)
		if portGiven && opts.port != b.Extension.Port {
			fmt.Fprintf(errOut, "warning: --port applies only when browser_use.yaml is created; it keeps port %d (edit extension.port in %s to change it)\n", b.Extension.Port, shown)
		}
	}
	for _, w := range warnings {
		fmt.Fprintf(errOut, "warning: %s\n", w)
	}

	cfgPath := config.ConfigPath(home)
	switch err := config.WriteDefaultConfig(cfgPath); {
	case err == nil:
		fmt.Fprintf(out, "Created %s (commented; every key shows its default)\n", config.DisplayPath(cfgPath))
	case errors.Is(err, fs.ErrExist):
		if _, err := config.LoadConfigFile(cfgPath); err != nil {
			fmt.Fprintf(out, "%s exists; left unchanged, but it has problems:\n", config.DisplayPath(cfgPath))
			fmt.Fprintf(errOut, "warning: %s\n", err)
		} else {
			fmt.Fprintf(out, "%s exists and is valid; left unchanged.\n", config.DisplayPath(cfgPath))
		}
	default:
		return err
	}

	printPairingSteps(out, b, shown, fresh)
	return nil
}

// The extension infer pairs with. Its Chrome Web Store listing is still
// under review, so the release zip, loaded unpacked, is the way to get it;
// the README's pairing section says the same.
const (
	extensionName     = "opentask"
	extensionHome     = "https://github.com/inference-gateway/opentask"
	extensionReleases = extensionHome + "/releases"
)

// printPairingSteps tells the person how to connect the extension. The
// full token appears only when it was just created or rotated: it is a
// secret, and terminals keep scrollback.
func printPairingSteps(out io.Writer, b config.BrowserUse, shown string, fresh bool) {
	fmt.Fprintln(out)
	if !b.Enabled {
		fmt.Fprintf(out, "Browser use is off (enabled: false in %s). Set enabled: true to pair the extension.\n", shown)
		return
	}
	fmt.Fprintln(out, "To pair the browser extension:")
	fmt.Fprintf(out, "  1. Install the %s browser extension (%s) and open its options page.\n", extensionName, extensionHome)
	fmt.Fprintln(out, "     It has no store listing yet: download browser-extension.zip from")
	fmt.Fprintf(out, "     %s, unzip it, open chrome://extensions, turn on\n", extensionReleases)
	fmt.Fprintln(out, "     Developer mode, click Load unpacked and choose the zip's dist/ folder.")
	if fresh {
		fmt.Fprintf(out, "  2. Set the port to %d and the token to:\n\n", b.Extension.Port)
		fmt.Fprintf(out, "         %s\n\n", b.Extension.Token)
		fmt.Fprintln(out, "     It is shown in full only now; `infer pair --show-token` prints it again.")
	} else {
		fmt.Fprintf(out, "  2. Set the port to %d and the token to the one in %s (%s);\n", b.Extension.Port, shown, config.MaskToken(b.Extension.Token))
		fmt.Fprintln(out, "     `infer pair --show-token` prints it in full.")
	}
	fmt.Fprintln(out, "  3. Start infer in your project: `infer`, or `infer serve` without the terminal UI.")
	fmt.Fprintln(out, "  4. Click Connect in the extension. `infer pair` shows whether it is connected.")
}
