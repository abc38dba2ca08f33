package store

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
)

// toolCall is the assistant message that asks for call id.
func toolCall(id string) Message {
	return Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: id, Type: "function", Function: FunctionCall{Name: "BrowserRead", Arguments: "{}"}}}}
}

func toolAnswer(id string) Message {
	return Message{Role: RoleTool, ToolCallID: id, Content: "page text for " + id}
}

// describedSize is the transcript size the summary file of id describes.
func describedSize(t testing.TB, s *Store, id string) int64 {
	t.Helper()
	m, ok := s.loadMeta(id)
	if !ok {
		t.Fatalf("no readable summary file for %s", id)
	}
	return m.Size
}

// listed returns the listed summary of id.
func listed(t testing.TB, s *Store, id string) Meta {
	t.Helper()
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range list {
		if m.ID == id {
			return m
		}
	}
	t.Fatalf("%s is not listed: %+v", id, list)
	return Meta{}
}

func TestAppendToolResultWritesMessageAndOutcomeAtOnce(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir)
	id := mustCreate(t, s)
	mustAppend(t, s, id, user("read it"), toolCall("call_1"))
	lines := checkLines(t, s.Path(id))
	if err := s.AppendToolResult(id, toolAnswer("call_1"), false); err != nil {
		t.Fatal(err)
	}
	if n := checkLines(t, s.Path(id)); n != lines+2 {
		t.Fatalf("%d lines after a tool result, want %d", n, lines+2)
	}
	fresh, _ := openTest(t, dir)
	c := mustLoad(t, fresh, id)
	if len(c.Messages) != 3 || !reflect.DeepEqual(c.Messages[2], toolAnswer("call_1")) {
		t.Fatalf("messages %+v", c.Messages)
	}
	if ok, known := c.ToolResults["call_1"]; !known || ok {
		t.Fatalf("tool results %v", c.ToolResults)
	}
	if c.Meta.MessageCount != 3 || listed(t, fresh, id) != c.Meta {
		t.Fatalf("summary %+v, listed %+v", c.Meta, listed(t, fresh, id))
	}

	mem := OpenMemory()
	mid, _ := mem.Create()
	if err := mem.AppendToolResult(mid.ID, toolAnswer("call_2"), true); err != nil {
		t.Fatal(err)
	}
	if c, _ := mem.Load(mid.ID); len(c.Messages) != 1 || !c.ToolResults["call_2"] {
		t.Fatalf("memory store: %+v", c)
	}

	for _, bad := range []Message{{Role: RoleUser, ToolCallID: "call_3"}, {Role: RoleTool, Content: "no call id"}} {
		if err := s.AppendToolResult(id, bad, true); err == nil || !strings.Contains(err.Error(), "saving conversation "+id) {
			t.Fatalf("AppendToolResult(%+v) = %v", bad, err)
		}
	}
	if n := checkLines(t, s.Path(id)); n != lines+2 {
		t.Fatalf("a refused tool result was written: %d lines", n)
	}
}

func TestSummaryLagsDuringToolCallsButNeverShowsIt(t *testing.T) {
	dir := t.TempDir()
	s, w := openTest(t, dir)
	id := mustCreate(t, s)
	mustAppend(t, s, id, user("read the page, again and again"))
	if describedSize(t, s, id) != fileSize(t, s.Path(id)) {
		t.Fatal("a person's message left the summary behind")
	}
	const calls = 5
	for i := range calls {
		callID := fmt.Sprintf("call_%d", i)
		mustAppend(t, s, id, toolCall(callID))
		if err := s.AppendToolResult(id, toolAnswer(callID), true); err != nil {
			t.Fatal(err)
		}
	}
	if describedSize(t, s, id) >= fileSize(t, s.Path(id)) {
		t.Fatal("the summary was rewritten during the tool calls")
	}
	want := mustLoad(t, s, id).Meta
	if want.MessageCount != 1+2*calls {
		t.Fatalf("loaded %+v", want)
	}

	// Another store (another process) lists the conversation right, by
	// folding in what the summary file lacks, and brings the file up to
	// date.
	other, otherWarnings := openTest(t, dir)
	if got := listed(t, other, id); got != want {
		t.Fatalf("listed %+v, want %+v", got, want)
	}
	if describedSize(t, s, id) != fileSize(t, s.Path(id)) {
		t.Fatal("List did not bring the summary up to date")
	}
	// The first store's next appends go on from what it remembers; a
	// final answer brings the summary file up to date.
	mustAppend(t, s, id, toolCall("call_x"))
	if err := s.AppendToolResult(id, toolAnswer("call_x"), true); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, id, Message{Role: RoleAssistant, Content: "Read it six times."})
	want = mustLoad(t, other, id).Meta
	if m, ok := s.readMeta(id, fileSize(t, s.Path(id))); !ok || m != want {
		t.Fatalf("summary after the final answer %+v (up to date %v), want %+v", m, ok, want)
	}
	if got := listed(t, s, id); got != want {
		t.Fatalf("listed %+v, want %+v", got, want)
	}
	if w.joined() != "" || otherWarnings.joined() != "" {
		t.Fatalf("warnings: %q %q", w.joined(), otherWarnings.joined())
	}
}

func TestSummaryCatchesUpWithinBounds(t *testing.T) {
	s, _ := openTest(t, t.TempDir())
	id := mustCreate(t, s)
	mustAppend(t, s, id, user("go"))
	for i := range summaryEvery {
		if describedSize(t, s, id) == fileSize(t, s.Path(id)) && i > 0 {
			t.Fatalf("summary written after %d tool appends", i)
		}
		mustAppend(t, s, id, toolCall(fmt.Sprint(i)))
	}
	if describedSize(t, s, id) != fileSize(t, s.Path(id)) {
		t.Fatalf("summary still behind after %d appends", summaryEvery)
	}

	// A large tool output brings it up to date by its size alone.
	mustAppend(t, s, id, toolCall("big"))
	if err := s.AppendToolResult(id, Message{Role: RoleTool, ToolCallID: "big", Content: strings.Repeat("x", summarySlack)}, true); err != nil {
		t.Fatal(err)
	}
	if describedSize(t, s, id) != fileSize(t, s.Path(id)) {
		t.Fatal("summary behind by more than summarySlack bytes")
	}
}

func TestFoldTailAgreesWithARebuildOrDeclines(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir)
	id := mustCreate(t, s)
	mustAppend(t, s, id, user("first"))
	meta, ok := s.loadMeta(id)
	if !ok || meta.Tail == 0 {
		t.Fatalf("summary %+v, %v: no fingerprint", meta, ok)
	}
	mustAppend(t, s, id, toolCall("a"))
	if err := s.AppendToolResult(id, toolAnswer("a"), true); err != nil {
		t.Fatal(err)
	}
	if err := s.SetPinned(id, true); err != nil {
		t.Fatal(err)
	}
	original, err := os.ReadFile(s.Path(id))
	if err != nil {
		t.Fatal(err)
	}
	fold := func(data []byte, m metaFile) (Meta, bool) {
		t.Helper()
		if err := os.WriteFile(s.Path(id), data, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(s.Path(id))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		st, end, ok := foldTail(f, m, int64(len(data)))
		if !ok {
			return Meta{}, false
		}
		if string(end) != string(data[len(data)-len(end):]) {
			t.Fatalf("the bytes returned do not end the transcript")
		}
		return st.meta, true
	}
	if got, ok := fold(original, meta); !ok || got != mustLoad(t, s, id).Meta {
		t.Fatalf("fold = %+v, %v; want %+v", got, ok, mustLoad(t, s, id).Meta)
	}

	// The bytes the fingerprint covers were edited: not the same prefix.
	edited := strings.Replace(string(original), `"first"`, `"frist"`, 1)
	if _, ok := fold([]byte(edited), meta); ok {
		t.Fatal("folded onto an edited prefix")
	}
	// A line inserted before the summarised size shifts it.
	lines := strings.SplitAfter(string(original), "\n")
	inserted := lines[0] + `{"kind":"message","at":"2026-08-16T12:00:00Z","message":{"role":"user","content":"inserted"}}` + "\n" + strings.Join(lines[1:], "")
	if _, ok := fold([]byte(inserted), meta); ok {
		t.Fatal("folded onto a shifted prefix")
	}
	// An unreadable record after it is left to a rebuild, which reports it.
	if _, ok := fold(append(append([]byte(nil), original...), "garbage\n"...), meta); ok {
		t.Fatal("folded over an unreadable line")
	}
	// A summary without a fingerprint, or describing more than there is.
	noTail := meta
	noTail.Tail = 0
	if _, ok := fold(original, noTail); ok {
		t.Fatal("folded without a fingerprint")
	}
	longer := meta
	longer.Size = int64(len(original)) + 10
	if _, ok := fold(original, longer); ok {
		t.Fatal("folded a summary of a longer transcript")
	}
}

func TestHandEditedTranscriptIsRebuiltWhenTheSummaryIsBehind(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir)
	id := mustCreate(t, s)
	// Held, as a writer holds it: its open call is running, not orphaned
	// (see TestListCountsTheResultsARepairAdds).
	mustHold(t, s, id)
	mustAppend(t, s, id, user("first question"))
	mustAppend(t, s, id, toolCall("a"))
	// Someone inserts a message right after the first line with an editor.
	data, err := os.ReadFile(s.Path(id))
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(string(data), "\n")
	edited := first + "\n" + `{"kind":"message","at":"2026-08-16T12:00:00Z","message":{"role":"user","content":"added by hand"}}` + "\n" + rest
	if err := os.WriteFile(s.Path(id), []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	other, _ := openTest(t, dir)
	want := mustLoad(t, other, id).Meta
	if want.MessageCount != 3 || want.Title != "added by hand" {
		t.Fatalf("loaded %+v", want)
	}
	if got := listed(t, other, id); got != want {
		t.Fatalf("listed %+v, want %+v", got, want)
	}
	// The first store sees another file than the one it wrote last.
	if err := s.AppendToolResult(id, toolAnswer("a"), true); err != nil {
		t.Fatal(err)
	}
	if got, want := listed(t, s, id), mustLoad(t, other, id).Meta; got != want || got.MessageCount != 4 {
		t.Fatalf("listed %+v, want %+v", got, want)
	}
}

// TestSummariesAgreeWithTranscripts drives two stores on one directory
// (two processes) through random changes, hand edits and damaged summary
// files, and checks after each step that what List and Load report agree
// with a summary rebuilt from the transcript alone.
func TestSummariesAgreeWithTranscripts(t *testing.T) {
	dir := t.TempDir()
	a, _ := openTest(t, dir)
	b, _ := openTest(t, dir)
	stores := []*Store{a, b}
	var ids []string
	for range 3 {
		ids = append(ids, mustCreate(t, a))
		mustHold(t, a, ids[len(ids)-1])
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rebuilt := func(id string) Meta {
		t.Helper()
		f, err := os.Open(a.Path(id))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		data, err := readAll(f, fi.Size())
		if err != nil {
			t.Fatal(err)
		}
		st := &state{}
		a.decode(id, data, st, fi.ModTime())
		return st.meta
	}
	for step := range 600 {
		s := stores[rng.IntN(2)]
		id := ids[rng.IntN(len(ids))]
		call := fmt.Sprintf("call_%d", step)
		var err error
		var what string
		switch op := rng.IntN(12); op {
		case 0:
			what, err = "user message", s.Append(id, user(fmt.Sprintf("message %d", step)))
		case 1, 2, 3:
			what, err = "tool call", s.Append(id, toolCall(call))
		case 4, 5, 6:
			what, err = "tool result", s.AppendToolResult(id, toolAnswer(call), rng.IntN(2) == 0)
		case 7:
			what, err = "answer", s.Append(id, Message{Role: RoleAssistant, Content: fmt.Sprintf("answer %d", step)})
		case 8:
			pin := rng.IntN(2) == 0
			what, err = "pin", s.SetPinned(id, pin)
			if err == nil && rebuilt(id).Pinned != pin {
				t.Fatalf("step %d: SetPinned(%v) did not take: the store decided on a stale summary", step, pin)
			}
		case 9:
			title := fmt.Sprintf("title %d", step%4)
			what, err = "title", s.SetGeneratedTitle(id, title)
			if err == nil && rebuilt(id).Title != title {
				t.Fatalf("step %d: SetGeneratedTitle(%q) did not take: the store decided on a stale summary", step, title)
			}
		case 10:
			what = "appended by hand"
			appendRaw(t, s.Path(id), fmt.Sprintf(`{"kind":"message","at":"2030-01-01T00:00:%02dZ","message":{"role":"user","content":"by hand %d"}}`+"\n", step%60, step))
		case 11:
			what = "summary damaged"
			switch rng.IntN(3) {
			case 0:
				os.Remove(s.metaPath(id))
			case 1:
				os.WriteFile(s.metaPath(id), []byte("{not json"), 0o600)
			case 2:
				if m, ok := s.loadMeta(id); ok {
					m.MessageCount += 7 // a stale summary of the right size would fool anyone
					m.Size--
					s.writeMeta(m.Meta, m.Size, m.Tail)
				}
			}
		}
		if err != nil {
			t.Fatalf("step %d, %s: %v", step, what, err)
		}
		if rng.IntN(3) != 0 && step != 599 {
			continue // let summaries fall behind between lists
		}
		want := rebuilt(id)
		for i, s := range stores {
			if got := listed(t, s, id); got != want {
				t.Fatalf("step %d (%s): store %d lists %+v, want %+v", step, what, i, got, want)
			}
			if got := mustLoad(t, s, id).Meta; got != want {
				t.Fatalf("step %d (%s): store %d loads %+v, want %+v", step, what, i, got, want)
			}
		}
	}
}
