// Package syncbuf is a text buffer that several goroutines may write while
// another reads it: the log sink of tests that watch what a server or a
// client logs as it runs.
package syncbuf

import (
	"strings"
	"sync"
)

// Buffer collects what is written to it. The zero value is ready.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

// Write appends p; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
