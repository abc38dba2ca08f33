package main

import "context"

// inDirs makes the commands run with ctx use home and wd ("" keeps the
// process's own), so a test needs neither t.Setenv nor t.Chdir.
func inDirs(ctx context.Context, home, wd string) context.Context {
	return context.WithValue(ctx, whereKey{}, where{home: home, wd: wd})
}
