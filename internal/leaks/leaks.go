// Package leaks holds the goroutine-leak checks' allowances: goroutines a
// linked library starts once for the life of the process, which are no
// leak of ours. Tests pass Options to goleak.
package leaks

import "go.uber.org/goleak"

// Options are goleak's allowances for every test binary that links the
// model catalog: Google's genai SDK (the Gemini adapter) links
// OpenCensus, whose stats worker starts in a package init and runs for
// the life of the process.
func Options(more ...goleak.Option) []goleak.Option {
	return append([]goleak.Option{goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start")}, more...)
}
