package assets

import "embed"

// Scenarios are infer-sim's shipped scenarios (sim/scenario's YAML format),
// under the "scenarios/" prefix: the main flows between a panel and infer,
// which the simulator's tests run against an in-process infer and
// `infer-sim run` runs against a live one.
//
//go:embed scenarios
var Scenarios embed.FS
