package session

import (
	"runtime"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
)

// A long answer streams word by word through the agent, the workspace's
// transcript and its subscribers; each word must cost alike however much
// came before it, or an answer of megabytes streams in quadratic time.
func TestStreamingALongAnswerCostsEachWordAlike(t *testing.T) {
	const words = 1 << 14
	f := newFixture(t, "")
	sub := f.w.Subscribe()
	defer sub.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f.w.Send("stream 16384", tools.OriginTerminal)
	evs := collect(t, sub, idle)
	runtime.ReadMemStats(&after)
	// Copying the answer on every word allocates about words²/2 times a
	// word's length for each copy kept (over a GiB here); appending, a
	// constant per word.
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(8<<10*words); got > limit {
		t.Errorf("streaming %d words allocated %d bytes, over %d", words, got, limit)
	}
	streamed := chatText(evs)
	if n := strings.Count(streamed, " "); n != words {
		t.Fatalf("subscribers saw %d words of %d", n, words)
	}
	var held string
	for _, it := range f.w.Snapshot().Transcript.Items {
		if it.Kind == transcript.Text {
			held += it.Text
		}
	}
	if held != streamed {
		t.Fatalf("the workspace holds %d bytes of the answer, its subscribers saw %d", len(held), len(streamed))
	}
}
