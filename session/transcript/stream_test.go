package transcript

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// allocated returns how many bytes f allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// streamed applies n one-byte deltas to a text item and a tool call's
// arguments, as a long answer arrives.
func streamed(t testing.TB, tr *Transcript, id string, kind Kind, n int) {
	if err := tr.Apply(Change{Op: ItemStarted, Item: Item{ID: id, Kind: kind}}); err != nil {
		t.Fatal(err)
	}
	for range n {
		if err := tr.Apply(Change{Op: DeltaAppended, Item: Item{ID: id}, Delta: "x"}); err != nil {
			t.Fatal(err)
		}
	}
}

// An answer of megabytes arrives in tiny deltas: each must cost its own
// length, not the text's so far, or streaming one answer is quadratic.
func TestADeltaCostsItsOwnLengthNotTheItems(t *testing.T) {
	const n = 1 << 14
	for _, kind := range []Kind{Text, Reasoning, Tool} {
		var tr Transcript
		tr.Apply(Change{Op: ItemStarted, Item: Item{ID: "u", Kind: User, Text: "go on"}})
		got := allocated(func() { streamed(t, &tr, "s", kind, n) })
		// Copying the text on every delta allocates about n*n/2 bytes
		// (128 MiB here); appending in place, a small multiple of n.
		if limit := uint64(64 * n); got > limit {
			t.Errorf("%v: %d one-byte deltas allocated %d bytes, over %d", kind, n, got, limit)
		}
		it, _ := tr.Item("s")
		text := it.Text
		if kind == Tool {
			text = it.Call.Args
		}
		if text != strings.Repeat("x", n) {
			t.Errorf("%v: the item holds %d bytes, want %d", kind, len(text), n)
		}
	}
}

// Every copy of a transcript reads the text streamed so far, and copies
// applied to apart from each other never see each other's deltas.
func TestCopiesOfAStreamingItemStayApart(t *testing.T) {
	var tr Transcript
	tr.Apply(Change{Op: ItemStarted, Item: Item{ID: "t", Kind: Text, Text: "He"}})
	tr.Apply(Change{Op: DeltaAppended, Item: Item{ID: "t"}, Delta: "llo"})
	snap := tr.Clone()
	settled := tr.Settled()
	value := tr // a plain copy shares the items, as before
	if it, _ := snap.Item("t"); it.Text != "Hello" {
		t.Fatalf("a copy taken mid-stream reads %q", it.Text)
	}
	tr.Apply(Change{Op: DeltaAppended, Item: Item{ID: "t"}, Delta: ", world"})
	snap.Apply(Change{Op: DeltaAppended, Item: Item{ID: "t"}, Delta: " there"})
	tr.Apply(Change{Op: DeltaAppended, Item: Item{ID: "t"}, Delta: "!"})
	snap.Apply(Change{Op: DeltaAppended, Item: Item{ID: "t"}, Delta: "?"})
	if it, _ := tr.Item("t"); it.Text != "Hello, world!" {
		t.Errorf("the transcript reads %q", it.Text)
	}
	if it, _ := snap.Item("t"); it.Text != "Hello there?" {
		t.Errorf("its copy reads %q", it.Text)
	}
	if it, _ := value.Item("t"); it.Text != "Hello, world!" {
		t.Errorf("a plain copy reads %q", it.Text)
	}
	if len(settled.Items) != 0 {
		t.Errorf("a streaming segment settled: %+v", settled.Items)
	}

	// A field set by hand is what the next delta grows.
	tr.Items[0].Text = "Bye"
	tr.Apply(Change{Op: DeltaAppended, Item: Item{ID: "t"}, Delta: "!"})
	if it, _ := tr.Item("t"); it.Text != "Bye!" {
		t.Errorf("after an edit by hand the transcript reads %q", it.Text)
	}

	// Deltas moving between items each grow the right one.
	tr.Apply(Change{Op: ItemStarted, Item: Item{ID: "c", Kind: Tool, Call: Call{Name: "Bash", Args: `{"a`}}})
	tr.Apply(Change{Op: DeltaAppended, Item: Item{ID: "t"}, Delta: "!"})
	tr.Apply(Change{Op: DeltaAppended, Item: Item{ID: "c"}, Delta: `":1}`})
	tr.Apply(Change{Op: ItemDone, Item: Item{ID: "t", Kind: Text, Text: "Bye!!"}})
	tr.Apply(Change{Op: DeltaAppended, Item: Item{ID: "c"}, Delta: " "})
	if it, _ := tr.Item("t"); it.Text != "Bye!!" || !it.Done {
		t.Errorf("the done segment is %+v", it)
	}
	if it, _ := tr.Item("c"); it.Call.Args != `{"a":1} ` {
		t.Errorf("the call's arguments are %q", it.Call.Args)
	}
}

// BenchmarkApplyDelta applies one answer of n one-byte deltas per
// iteration and reports the time per delta, which must not grow with n.
func BenchmarkApplyDelta(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("deltas=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var tr Transcript
				streamed(b, &tr, "s", Text, n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/delta")
		})
	}
}

// A copy taken mid-stream (a snapshot for a panel that reconnects) is
// read on another goroutine while the transcript goes on growing: the
// copy's text is bytes the growing never writes again.
func TestACopyTakenMidStreamReadsWhileTheStreamGoesOn(t *testing.T) {
	var tr Transcript
	streamed(t, &tr, "s", Text, 100)
	snap := tr.Clone()
	done := make(chan string)
	go func() {
		it, _ := snap.Item("s")
		done <- strings.Clone(it.Text)
	}()
	for range 10_000 {
		tr.Apply(Change{Op: DeltaAppended, Item: Item{ID: "s"}, Delta: "y"})
	}
	if got := <-done; got != strings.Repeat("x", 100) {
		t.Fatalf("the copy read %d bytes, %q…", len(got), got[:min(len(got), 8)])
	}
	if it, _ := tr.Item("s"); it.Text != strings.Repeat("x", 100)+strings.Repeat("y", 10_000) {
		t.Fatalf("the transcript holds %d bytes", len(it.Text))
	}
}
