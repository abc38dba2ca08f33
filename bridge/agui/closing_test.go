package agui

import (
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/events"
)

// kinds lists the AG-UI types of evs.
func kinds(evs []events.Event) string {
	var out []string
	for _, e := range evs {
		out = append(out, string(e.Type()))
	}
	return strings.Join(out, " ")
}

// A run that ends on a tool result gets a closing text before its
// RUN_FINISHED; a run that ends on text gets none.
func TestRunsEndingOnAToolResultGetAClosingText(t *testing.T) {
	var r runCloser
	run := []events.Event{
		events.NewRunStartedEvent("c", "r1"),
		events.NewToolCallStartEvent("call_1", "Bash"),
		events.NewToolCallEndEvent("call_1"),
		events.NewToolCallResultEvent("m1", "call_1", "hello\nExit code: 3"),
	}
	for _, e := range run {
		if got := r.before(e); got != nil {
			t.Fatalf("%s got %s before it", e.Type(), kinds(got))
		}
	}
	closing := r.before(events.NewRunFinishedEvent("c", "r1"))
	if kinds(closing) != "TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END" {
		t.Fatalf("closing %s", kinds(closing))
	}
	if got := closing[1].(*events.TextMessageContentEvent).Delta; got != "```\nhello\nExit code: 3\n```" {
		t.Fatalf("closing text %q", got)
	}

	r.before(events.NewRunStartedEvent("c", "r2"))
	r.before(events.NewToolCallResultEvent("m2", "call_2", "x"))
	r.before(events.NewTextMessageStartEvent("t", events.WithRole("assistant")))
	r.before(events.NewTextMessageEndEvent("t"))
	if got := r.before(events.NewRunFinishedEvent("c", "r2")); got != nil {
		t.Fatalf("a run ending on text got %s", kinds(got))
	}
}

func TestClosingTextIsCutAndFenced(t *testing.T) {
	long := strings.Repeat("line\n", 100)
	if got := closingText(long); strings.Count(got, "line") != closingTextLines || !strings.HasSuffix(got, "(cut; the whole output is in infer)") {
		t.Fatalf("%d lines kept: %q", strings.Count(got, "line"), got[len(got)-60:])
	}
	if got := closingText("a ``` b"); !strings.HasPrefix(got, "````\n") || !strings.HasSuffix(got, "\n````") {
		t.Fatalf("fence %q", got)
	}
	if got := closingText(strings.Repeat("é", closingTextBytes)); !strings.HasSuffix(got, "(cut; the whole output is in infer)") || strings.ContainsRune(got, '\uFFFD') {
		t.Fatalf("a cut inside a character: %q", got[len(got)-60:])
	}
}
