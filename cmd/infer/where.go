package main

import (
	"context"
	"os"

	"github.com/infer-workspace/infer/session/config"
)

// where is the home and the working directory a command runs with. main
// leaves it empty: the process's own (config.Home, os.Getwd). Tests give
// their temporary folders through the context run is given (inDirs), so
// that they need neither t.Setenv nor t.Chdir and may run in parallel.
type where struct{ home, wd string }

type whereKey struct{}

// homeDir is infer's home for a command run with ctx.
func homeDir(ctx context.Context) (string, error) {
	if at, _ := ctx.Value(whereKey{}).(where); at.home != "" {
		return at.home, nil
	}
	return config.Home()
}

// workDir is the working directory for a command run with ctx.
func workDir(ctx context.Context) (string, error) {
	if at, _ := ctx.Value(whereKey{}).(where); at.wd != "" {
		return at.wd, nil
	}
	return os.Getwd()
}

// dirs is homeDir and workDir together, for the commands that need both.
func dirs(ctx context.Context) (home, wd string, err error) {
	if home, err = homeDir(ctx); err != nil {
		return "", "", err
	}
	if wd, err = workDir(ctx); err != nil {
		return "", "", err
	}
	return home, wd, nil
}
