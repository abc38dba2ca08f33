package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time (go build -ldflags "-X main.version=v1.2.3");
// without it the module version from the build info is used.
var version string

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print infer's version",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionString())
			return err
		},
	}
}

// versionString describes this build: version, commit when the build
// recorded one, and the Go toolchain and platform, which is what a bug
// report needs.
func versionString() string {
	v := version
	var commit string
	modified := false
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "dev"
	}
	details := ""
	if commit != "" {
		if len(commit) > 12 {
			commit = commit[:12]
		}
		if modified {
			commit += "+dirty"
		}
		details = "commit " + commit + ", "
	}
	return fmt.Sprintf("infer %s (%s%s, %s/%s)", v, details, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
