package agent

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/transcript"
)

// byteStep streams n one-byte deltas of text: a long answer in the
// smallest pieces a provider sends.
func byteStep(n int) func(context.Context, func(llm.Delta)) (llm.Completion, error) {
	return func(ctx context.Context, emit func(llm.Delta)) (llm.Completion, error) {
		var b strings.Builder
		for range n {
			emit(llm.Delta{Kind: llm.TextDelta, Text: "x"})
			b.WriteByte('x')
		}
		return llm.Completion{Text: b.String()}, nil
	}
}

// streamTurn runs one turn whose answer is n one-byte deltas, handing its
// changes to report, and returns the text it recorded.
func streamTurn(tb testing.TB, n int, report func(transcript.Change)) string {
	p := &scriptedProvider{steps: []func(context.Context, func(llm.Delta)) (llm.Completion, error){byteStep(n)}}
	var done string
	h := Hooks{
		Report: func(c transcript.Change) {
			if c.Op == transcript.ItemDone {
				done = c.Item.Text
			}
			report(c)
		},
		Record:     func(llm.Message) error { return nil },
		RecordTool: func(llm.Message, bool) error { return nil },
		Exec:       noExec,
	}
	if out := Run(context.Background(), Config{Provider: p}, userHistory("go on"), h); out.Status != Finished {
		tb.Fatalf("status = %v (%v)", out.Status, out.Err)
	}
	return done
}

// The turn keeps what streamed of a segment to report it done; a delta
// must cost its own length there too, not the segment's so far.
func TestAStreamedDeltaCostsTheTurnItsOwnLength(t *testing.T) {
	const n = 1 << 14
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	done := streamTurn(t, n, func(transcript.Change) {})
	runtime.ReadMemStats(&after)
	// Copying the segment on every delta allocates about n*n/2 bytes
	// (128 MiB here) for each copy kept; appending, a multiple of n.
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(1024*n); got > limit {
		t.Errorf("%d one-byte deltas allocated %d bytes, over %d", n, got, limit)
	}
	if done != strings.Repeat("x", n) {
		t.Errorf("the done segment holds %d bytes, want %d", len(done), n)
	}
}

// BenchmarkStreamedDelta runs one turn of n one-byte deltas per iteration
// and reports the time per delta, which must not grow with n.
func BenchmarkStreamedDelta(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("deltas=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				streamTurn(b, n, func(transcript.Change) {})
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/delta")
		})
	}
}
