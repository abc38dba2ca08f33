// Package selfcontained holds a check that the repository needs nothing
// beside it. The team once kept the architecture notes, the protocol
// contract and the real extension's recordings in a folder next to the
// checkout, and docs and tests pointed there; on a fresh clone those
// pointers led nowhere and the conformance tests skipped without a word.
// The check is the package's test; there is no code to import.
package selfcontained
