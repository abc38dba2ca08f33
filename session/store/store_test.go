package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock hands out strictly increasing times, so ordering tests do not
// depend on the resolution of the real clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 8, 16, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// warnings collects what a store reports as recovered problems.
type warnings struct {
	mu   sync.Mutex
	errs []error
}

func (w *warnings) add(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.errs = append(w.errs, err)
}

func (w *warnings) joined() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var parts []string
	for _, e := range w.errs {
		parts = append(parts, e.Error())
	}
	return strings.Join(parts, "\n")
}

func openTest(t testing.TB, dir string) (*Store, *warnings) {
	t.Helper()
	w := &warnings{}
	s, err := Open(dir, Options{NoSync: true, Warn: w.add, Now: newClock().Now})
	if err != nil {
		t.Fatal(err)
	}
	return s, w
}

func mustCreate(t testing.TB, s *Store) string {
	t.Helper()
	m, err := s.Create()
	if err != nil {
		t.Fatal(err)
	}
	return m.ID
}

func mustAppend(t testing.TB, s *Store, id string, msgs ...Message) {
	t.Helper()
	if err := s.Append(id, msgs...); err != nil {
		t.Fatal(err)
	}
}

func mustLoad(t testing.TB, s *Store, id string) Conversation {
	t.Helper()
	c, err := s.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func user(text string) Message { return Message{Role: RoleUser, Content: text} }

// sampleTurn is a turn with every message feature the panel reads.
func sampleTurn() []Message {
	return []Message{
		user("open example.com and read <h1> & the title"),
		{Role: RoleAssistant, Content: "", Reasoning: "I should navigate first.", ToolCalls: []ToolCall{{
			ID: "call_1", Type: "function", Function: FunctionCall{Name: "BrowserNavigate", Arguments: `{"url":"https://example.com"}`},
		}}},
		{Role: RoleTool, ToolCallID: "call_1", Content: "Example Domain\nhttps://example.com/"},
		{Role: RoleAssistant, Content: "The page is titled \"Example Domain\"."},
	}
}

func TestMessageJSONShapeMatchesPanel(t *testing.T) {
	got, err := json.Marshal(sampleTurn()[1:3])
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"BrowserNavigate","arguments":"{\"url\":\"https://example.com\"}"}}],"reasoning":"I should navigate first."},` +
		`{"role":"tool","content":"Example Domain\nhttps://example.com/","tool_call_id":"call_1"}]`
	if string(got) != want {
		t.Fatalf("message JSON\n got %s\nwant %s", got, want)
	}
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s, w := openTest(t, dir)
	meta, err := s.Create()
	if err != nil {
		t.Fatal(err)
	}
	if !validID(meta.ID) || meta.CreatedAt.IsZero() || meta.MessageCount != 0 {
		t.Fatalf("Create returned %+v", meta)
	}
	turn := sampleTurn()
	mustAppend(t, s, meta.ID, turn[:2]...)
	mustAppend(t, s, meta.ID, turn[2])
	if err := s.recordToolResult(meta.ID, "call_1", true); err != nil {
		t.Fatal(err)
	}
	mustAppend(t, s, meta.ID, turn[3])

	// A second store on the same directory sees exactly what was written.
	other, _ := openTest(t, dir)
	c := mustLoad(t, other, meta.ID)
	if got, want := mustJSON(t, c.Messages), mustJSON(t, turn); got != want {
		t.Fatalf("messages\n got %s\nwant %s", got, want)
	}
	if !c.ToolResults["call_1"] || len(c.ToolResults) != 1 {
		t.Fatalf("tool results %v", c.ToolResults)
	}
	if c.Meta.MessageCount != 4 || c.Meta.Title != "open example.com and read <h1> & the title" || c.Meta.TitleSource != TitlePreview {
		t.Fatalf("meta %+v", c.Meta)
	}
	if !c.Meta.UpdatedAt.After(c.Meta.CreatedAt) {
		t.Fatalf("updated %v not after created %v", c.Meta.UpdatedAt, c.Meta.CreatedAt)
	}
	if c.SkippedLines != 0 || w.joined() != "" {
		t.Fatalf("unexpected damage: %d lines, warnings %q", c.SkippedLines, w.joined())
	}
	list, err := other.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0] != c.Meta {
		t.Fatalf("List = %+v, want [%+v]", list, c.Meta)
	}

	// The transcript is human-readable JSON lines with a kind on each.
	data, err := os.ReadFile(s.Path(meta.ID))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"content":"open example.com and read <h1> & the title"`)) {
		t.Fatalf("transcript escapes HTML or lacks the message:\n%s", data)
	}
	kinds := []string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var r struct {
			Kind string `json:"kind"`
			At   string `json:"at"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if _, err := time.Parse(time.RFC3339Nano, r.At); err != nil {
			t.Fatalf("line %q: at: %v", line, err)
		}
		kinds = append(kinds, r.Kind)
	}
	if got := strings.Join(kinds, ","); got != "conversation,message,message,message,tool_result,message" {
		t.Fatalf("record kinds %s", got)
	}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLoadReturnsEmptyMessagesNotNil(t *testing.T) {
	for name, s := range map[string]*Store{"disk": func() *Store { s, _ := openTest(t, t.TempDir()); return s }(), "memory": OpenMemory()} {
		t.Run(name, func(t *testing.T) {
			c := mustLoad(t, s, mustCreate(t, s))
			if c.Messages == nil || len(c.Messages) != 0 {
				t.Fatalf("Messages = %#v, want empty non-nil", c.Messages)
			}
		})
	}
}

func TestPreviewTitle(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct{ in, want string }{
		{"", ""},
		{"  \n\t ", ""},
		{"fix the tests", "fix the tests"},
		{"  fix\n\n the\ttests  ", "fix the tests"},
		{"one two three four five six seven eight nine ten", "one two three four five six seven eight nine ten"},
		{"one two three four five six seven eight nine ten eleven", "one two three four five six seven eight nine ten…"},
		{long, strings.Repeat("x", 79) + "…"},
		{"please " + long, "please…"},
		// Ten words of eight letters are 89 characters: cut at a word.
		{strings.TrimSpace(strings.Repeat("abcdefgh ", 10)), strings.TrimSpace(strings.Repeat("abcdefgh ", 8)) + "…"},
		// Characters, not bytes: 80 two-byte runes fit exactly.
		{strings.Repeat("é", 80), strings.Repeat("é", 80)},
		{strings.Repeat("é", 81), strings.Repeat("é", 79) + "…"},
	}
	for _, tt := range tests {
		got := PreviewTitle(tt.in)
		if got != tt.want {
			t.Errorf("PreviewTitle(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if n := len([]rune(got)); n > 80 {
			t.Errorf("PreviewTitle(%q) has %d characters", tt.in, n)
		}
	}
}

func TestTitles(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir)
	id := mustCreate(t, s)
	check := func(title, source string) {
		t.Helper()
		c := mustLoad(t, s, id)
		if c.Meta.Title != title || c.Meta.TitleSource != source {
			t.Fatalf("title %q (%s), want %q (%s)", c.Meta.Title, c.Meta.TitleSource, title, source)
		}
		// The summary that List serves agrees with the transcript, also
		// after being rebuilt from it.
		for _, rebuild := range []bool{false, true} {
			if rebuild {
				os.Remove(s.metaPath(id))
			}
			list, err := s.List()
			if err != nil {
				t.Fatal(err)
			}
			if list[0].Title != title || list[0].TitleSource != source {
				t.Fatalf("listed title %q (%s), want %q (%s), rebuilt %v", list[0].Title, list[0].TitleSource, title, source, rebuild)
			}
		}
	}
	check("", "")
	mustAppend(t, s, id, Message{Role: RoleSystem, Content: "you are helpful"}, user("   "))
	check("", "")
	mustAppend(t, s, id, user("first real question"), user("second question"))
	check("first real question", TitlePreview)
	if err := s.SetGeneratedTitle(id, "  Generated  "); err != nil {
		t.Fatal(err)
	}
	check("Generated", TitleGenerated)
	if err := s.Rename(id, "Mine"); err != nil {
		t.Fatal(err)
	}
	check("Mine", TitleUser)
	if err := s.SetGeneratedTitle(id, "Generated again"); err != nil {
		t.Fatal(err)
	}
	check("Mine", TitleUser)
	if err := s.Rename(id, " \n "); err == nil {
		t.Fatal("Rename to a blank title succeeded")
	}
	check("Mine", TitleUser)
}

func TestListOrderPinAndDelete(t *testing.T) {
	s, _ := openTest(t, t.TempDir())
	a, b, c := mustCreate(t, s), mustCreate(t, s), mustCreate(t, s)
	mustAppend(t, s, b, user("b"))
	mustAppend(t, s, a, user("a"))
	ids := func() string {
		list, err := s.List()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range list {
			name := map[string]string{a: "a", b: "b", c: "c"}[m.ID]
			if m.Pinned {
				name += "*"
			}
			out = append(out, name)
		}
		return strings.Join(out, " ")
	}
	if got := ids(); got != "a b c" {
		t.Fatalf("order %q, want newest first", got)
	}
	// Pinning and renaming are not activity: the order stays.
	if err := s.SetPinned(c, true); err != nil {
		t.Fatal(err)
	}
	if err := s.Rename(b, "renamed"); err != nil {
		t.Fatal(err)
	}
	if got := ids(); got != "a b c*" {
		t.Fatalf("order %q after pin and rename", got)
	}
	if err := s.SetPinned(c, false); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(a); err != nil {
		t.Fatal(err)
	}
	if got := ids(); got != "b c" {
		t.Fatalf("order %q after delete", got)
	}
	for _, err := range []error{s.Delete(a), s.Append(a, user("x")), func() error { _, err := s.Load(a); return err }()} {
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("after delete: %v, want ErrNotFound", err)
		}
	}
	if _, err := os.Stat(s.metaPath(a)); !os.IsNotExist(err) {
		t.Fatalf("summary of a deleted conversation remains: %v", err)
	}
}

func TestRejectsIDsThatAreNotUUIDs(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir)
	id := mustCreate(t, s)
	// A file an attacker would like to reach through an id.
	outside := filepath.Join(filepath.Dir(dir), "victim.jsonl")
	os.WriteFile(outside, []byte(`{"kind":"conversation"}`+"\n"), 0o600)
	defer os.Remove(outside)
	bad := []string{"", "../victim", "../" + filepath.Base(filepath.Dir(dir)) + "/victim", strings.ToUpper(id), "{" + id + "}",
		"urn:uuid:" + id, strings.ReplaceAll(id, "-", ""), id + "/../" + id, id[:35] + "/"}
	for _, b := range bad {
		if _, err := s.Load(b); !errors.Is(err, ErrNotFound) {
			t.Errorf("Load(%q) = %v, want ErrNotFound", b, err)
		}
		if err := s.Append(b, user("x")); !errors.Is(err, ErrNotFound) {
			t.Errorf("Append(%q) = %v, want ErrNotFound", b, err)
		}
		if err := s.Delete(b); !errors.Is(err, ErrNotFound) {
			t.Errorf("Delete(%q) = %v, want ErrNotFound", b, err)
		}
		if p := s.Path(b); p != "" {
			t.Errorf("Path(%q) = %q", b, p)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Fatalf("file outside the store was touched: %v", err)
	}
	if _, err := s.Load("6f1c2b1e-8d3a-4c55-9a0e-2f5b8c7d9e10"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
}

func TestAppendValidatesInput(t *testing.T) {
	s, _ := openTest(t, t.TempDir())
	id := mustCreate(t, s)
	err := s.Append(id, user("ok"), Message{Role: "robot", Content: "x"})
	if err == nil || !strings.Contains(err.Error(), `message 2 has role "robot"`) {
		t.Fatalf("bad role: %v", err)
	}
	if err := s.AppendToolResult(id, Message{Role: RoleTool, Content: "x"}, true); err == nil {
		t.Fatal("tool result without a call id accepted")
	}
	if c := mustLoad(t, s, id); len(c.Messages) != 0 {
		t.Fatalf("a rejected batch was partly stored: %+v", c.Messages)
	}
}

func TestMemoryStore(t *testing.T) {
	s := OpenMemory()
	if s.Persistent() {
		t.Fatal("memory store claims to persist")
	}
	id := mustCreate(t, s)
	turn := sampleTurn()
	mustAppend(t, s, id, turn...)
	if err := s.recordToolResult(id, "call_1", false); err != nil {
		t.Fatal(err)
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, list); got != "[]" {
		t.Fatalf("memory List encodes as %s, want []", got)
	}
	c := mustLoad(t, s, id)
	if got, want := mustJSON(t, c.Messages), mustJSON(t, turn); got != want {
		t.Fatalf("messages\n got %s\nwant %s", got, want)
	}
	if ok, known := c.ToolResults["call_1"]; !known || ok {
		t.Fatalf("tool results %v", c.ToolResults)
	}
	if c.Meta.MessageCount != 4 || c.Meta.TitleSource != TitlePreview {
		t.Fatalf("meta %+v", c.Meta)
	}
	// Neither the caller's slices nor the loaded copy alias the store.
	turn[1].ToolCalls[0].ID = "changed"
	c.Messages[1].ToolCalls[0].Function.Name = "changed"
	c.ToolResults["call_1"] = true
	again := mustLoad(t, s, id)
	if tc := again.Messages[1].ToolCalls[0]; tc.ID != "call_1" || tc.Function.Name != "BrowserNavigate" || again.ToolResults["call_1"] {
		t.Fatalf("stored conversation changed through an alias: %+v %v", tc, again.ToolResults)
	}
	if err := s.Rename(id, "named"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetPinned(id, true); err != nil {
		t.Fatal(err)
	}
	if m := mustLoad(t, s, id).Meta; m.Title != "named" || !m.Pinned {
		t.Fatalf("meta %+v", m)
	}
	if p := s.Path(id); p != "" {
		t.Fatalf("memory Path = %q", p)
	}
	if err := s.Delete(id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}

// appendRaw writes bytes straight to a transcript, as a crash or a hand
// edit would leave them.
func appendRaw(t testing.TB, path, raw string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(raw); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// checkLines asserts that every line of a transcript is a whole JSON object
// and the file ends in a newline.
func checkLines(t testing.TB, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		t.Fatalf("%s does not end in a newline", path)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s line %d does not parse: %v: %q", path, n, err, sc.Text())
		}
	}
	return n
}

func TestTornLastLineIsSkippedAndRepaired(t *testing.T) {
	s, w := openTest(t, t.TempDir())
	id := mustCreate(t, s)
	mustAppend(t, s, id, user("one"), user("two"))
	// A process killed mid-write leaves half a record and no newline.
	appendRaw(t, s.Path(id), `{"kind":"message","at":"2026-08-16T12:00:00Z","message":{"role":"user","content":"thr`)

	c := mustLoad(t, s, id)
	if len(c.Messages) != 2 || c.SkippedLines != 1 {
		t.Fatalf("got %d messages, %d skipped; want 2 and 1", len(c.Messages), c.SkippedLines)
	}
	if !strings.Contains(w.joined(), "incomplete last line") {
		t.Fatalf("no warning about the torn line: %q", w.joined())
	}
	// The summary describes the torn size, so List rebuilds it rather than
	// trusting it, and counts only whole messages.
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if list[0].MessageCount != 2 {
		t.Fatalf("listed %d messages", list[0].MessageCount)
	}

	mustAppend(t, s, id, user("three"))
	checkLines(t, s.Path(id))
	c = mustLoad(t, s, id)
	if len(c.Messages) != 3 || c.Messages[2].Content != "three" || c.SkippedLines != 0 {
		t.Fatalf("after repair: %+v, skipped %d", c.Messages, c.SkippedLines)
	}
	if list, _ := s.List(); list[0].MessageCount != 3 {
		t.Fatalf("listed %d messages after repair", list[0].MessageCount)
	}
}

func TestCompleteLastLineWithoutNewlineIsKept(t *testing.T) {
	s, _ := openTest(t, t.TempDir())
	id := mustCreate(t, s)
	mustAppend(t, s, id, user("one"))
	// An editor that strips the final newline leaves a whole record.
	appendRaw(t, s.Path(id), `{"kind":"message","at":"2026-08-16T12:00:00Z","message":{"role":"assistant","content":"edited"}}`)
	c := mustLoad(t, s, id)
	if len(c.Messages) != 2 || c.Messages[1].Content != "edited" || c.SkippedLines != 0 {
		t.Fatalf("got %+v, skipped %d", c.Messages, c.SkippedLines)
	}
	mustAppend(t, s, id, user("two"))
	checkLines(t, s.Path(id))
	if c := mustLoad(t, s, id); len(c.Messages) != 3 {
		t.Fatalf("got %d messages after append", len(c.Messages))
	}
}

func TestCorruptLinesAreSkippedWithACountedWarning(t *testing.T) {
	s, w := openTest(t, t.TempDir())
	id := mustCreate(t, s)
	mustAppend(t, s, id, user("one"))
	appendRaw(t, s.Path(id), "garbage that is not json\n"+`{"kind":"message","at":"2026-08-16T12:00:00Z"}`+"\n\n")
	mustAppend(t, s, id, user("two"))
	appendRaw(t, s.Path(id), `{"kind":"from-the-future","at":"2026-08-16T12:00:00Z"}`+"\n")
	mustAppend(t, s, id, user("three"))

	c := mustLoad(t, s, id)
	var got []string
	for _, m := range c.Messages {
		got = append(got, m.Content)
	}
	if strings.Join(got, ",") != "one,two,three" {
		t.Fatalf("messages %v", got)
	}
	if c.SkippedLines != 2 {
		t.Fatalf("skipped %d lines, want 2 (garbage and a message without one; unknown kinds are not damage)", c.SkippedLines)
	}
	if !strings.Contains(w.joined(), "skipped 2 unreadable line(s) (first at line 3") {
		t.Fatalf("warning %q", w.joined())
	}
	os.Remove(s.metaPath(id))
	if list, err := s.List(); err != nil || list[0].MessageCount != 3 {
		t.Fatalf("rebuilt summary %+v, %v", list, err)
	}
}

func TestSummaryIsRebuiltWhenMissingCorruptOrStale(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir)
	id := mustCreate(t, s)
	mustAppend(t, s, id, user("hello"), Message{Role: RoleAssistant, Content: "hi"})
	if err := s.SetPinned(id, true); err != nil {
		t.Fatal(err)
	}
	want := mustLoad(t, s, id).Meta

	listed := func() Meta {
		t.Helper()
		list, err := s.List()
		if err != nil || len(list) != 1 {
			t.Fatalf("List = %+v, %v", list, err)
		}
		return list[0]
	}
	if got := listed(); got != want {
		t.Fatalf("listed %+v, want %+v", got, want)
	}
	for name, damage := range map[string]func(){
		"missing": func() { os.Remove(s.metaPath(id)) },
		"empty":   func() { os.WriteFile(s.metaPath(id), nil, 0o600) },
		"garbage": func() { os.WriteFile(s.metaPath(id), []byte("{not json"), 0o600) },
		"other id": func() {
			data, _ := os.ReadFile(s.metaPath(id))
			os.WriteFile(s.metaPath(id), bytes.ReplaceAll(data, []byte(id), []byte("00000000-0000-4000-8000-000000000000")), 0o600)
		},
	} {
		damage()
		if got := listed(); got != want {
			t.Fatalf("%s summary: listed %+v, want %+v", name, got, want)
		}
		if _, ok := s.readMeta(id, fileSize(t, s.Path(id))); !ok {
			t.Fatalf("%s summary was not rewritten by List", name)
		}
	}

	// A crash between the append and the summary update leaves the
	// summary describing a shorter file.
	appendRaw(t, s.Path(id), `{"kind":"message","at":"2030-01-01T00:00:00Z","message":{"role":"user","content":"after the crash"}}`+"\n")
	got := listed()
	if got.MessageCount != 3 || !got.UpdatedAt.Equal(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)) || !got.Pinned {
		t.Fatalf("stale summary not rebuilt: %+v", got)
	}
	// Appends rebuild a stale summary too, before adding to it.
	appendRaw(t, s.Path(id), `{"kind":"message","at":"2030-01-01T00:00:01Z","message":{"role":"user","content":"again"}}`+"\n")
	mustAppend(t, s, id, user("and once more"))
	if m, ok := s.readMeta(id, fileSize(t, s.Path(id))); !ok || m.MessageCount != 5 {
		t.Fatalf("summary after append %+v, up to date %v", m, ok)
	}
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func TestListIgnoresStrayFiles(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir)
	id := mustCreate(t, s)
	for _, name := range []string{"notes.txt", "not-a-uuid.jsonl", ".tmp.jsonl", "00000000-0000-4000-8000-000000000000.meta.json"} {
		os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600)
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o700)
	list, err := s.List()
	if err != nil || len(list) != 1 || list[0].ID != id {
		t.Fatalf("List = %+v, %v", list, err)
	}
}

func TestConcurrentStoresOnOneDirectory(t *testing.T) {
	dir := t.TempDir()
	s1, _ := openTest(t, dir)
	s2, _ := openTest(t, dir)
	shared := mustCreate(t, s1)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*2)
	for w := range writers {
		s := s1
		if w%2 == 1 {
			s = s2
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			own, err := s.Create()
			if err != nil {
				errs <- err
				return
			}
			for i := range each {
				text := fmt.Sprintf("w%d-%d", w, i)
				if err := s.Append(shared, user(text), Message{Role: RoleAssistant, Content: strings.Repeat(text, 50)}); err != nil {
					errs <- err
					return
				}
				if err := s.Append(own.ID, user(text)); err != nil {
					errs <- err
					return
				}
				if i%5 == 0 {
					// Readers interleave with writers.
					if _, err := s.List(); err != nil {
						errs <- err
						return
					}
					if _, err := s.Load(shared); err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := checkLines(t, s1.Path(shared)); n != 1+writers*each*2 {
		t.Fatalf("%d lines, want %d", n, 1+writers*each*2)
	}
	c := mustLoad(t, s2, shared)
	seen := map[string]bool{}
	for _, m := range c.Messages {
		if m.Role == RoleUser {
			seen[m.Content] = true
		}
	}
	for w := range writers {
		for i := range each {
			if !seen[fmt.Sprintf("w%d-%d", w, i)] {
				t.Fatalf("message w%d-%d lost", w, i)
			}
		}
	}
	list, err := s1.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != writers+1 {
		t.Fatalf("listed %d conversations, want %d", len(list), writers+1)
	}
	for _, m := range list {
		want := each
		if m.ID == shared {
			want = writers * each * 2
		}
		if m.MessageCount != want {
			t.Fatalf("%s: %d messages, want %d", m.ID, m.MessageCount, want)
		}
	}
}

func TestWritersWaitForTheLockAndReadersShareIt(t *testing.T) {
	dir := t.TempDir()
	s, _ := openTest(t, dir)
	other, _ := openTest(t, dir)
	id := mustCreate(t, s)
	mustAppend(t, s, id, user("before"))

	// Another process holds a shared lock (it is loading): loads still
	// proceed, an append waits.
	held, err := openLocked(OS, s.Path(id), os.O_RDONLY, lockShared)
	if err != nil {
		t.Fatal(err)
	}
	mustLoad(t, other, id)
	done := make(chan error, 1)
	go func() { done <- other.Append(id, user("after")) }()
	select {
	case err := <-done:
		t.Fatalf("append finished while another process held the lock: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	if got := contents(t, s, id); got != "before" {
		t.Fatalf("file changed under a held lock: %q", got)
	}
	held.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("append still waiting after the lock was released")
	}
	if got := contents(t, s, id); got != "before,after" {
		t.Fatalf("after the lock was released: %q", got)
	}

	// An exclusive holder (a writer) also keeps loads waiting, so they
	// never see half a record.
	held, err = openLocked(OS, s.Path(id), os.O_RDONLY, lockExclusive)
	if err != nil {
		t.Fatal(err)
	}
	loaded := make(chan error, 1)
	go func() { _, err := other.Load(id); loaded <- err }()
	select {
	case err := <-loaded:
		t.Fatalf("load finished while a writer held the lock: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	held.Close()
	select {
	case err := <-loaded:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("load still waiting after the lock was released")
	}
}

func TestDeleteWhileAnAppendWaits(t *testing.T) {
	s, _ := openTest(t, t.TempDir())
	id := mustCreate(t, s)
	held, err := openLocked(OS, s.Path(id), os.O_RDONLY, lockExclusive)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Append(id, user("too late")) }()
	// Delete as the lock holder would: the waiting append must then find
	// the conversation gone rather than write into the unlinked file.
	time.Sleep(50 * time.Millisecond)
	os.Remove(s.Path(id))
	os.Remove(s.metaPath(id))
	held.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("append after delete = %v, want ErrNotFound", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("append hung")
	}
}

func TestProviderDataRoundTripsButStaysOutOfTheWireShape(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(dir, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := st.Create()
	msg := Message{Role: RoleAssistant, Content: "x", ProviderData: map[string]string{"anthropic.blocks": `[{"type":"thinking","signature":"sig"}]`}}
	if err := st.Append(m.ID, Message{Role: RoleUser, Content: "q"}, msg); err != nil {
		t.Fatal(err)
	}
	again, _ := Open(dir, Options{NoSync: true})
	c, err := again.Load(m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.Messages[1].ProviderData["anthropic.blocks"] != msg.ProviderData["anthropic.blocks"] {
		t.Fatalf("provider data lost: %+v", c.Messages[1])
	}
	c.Messages[1].ProviderData["anthropic.blocks"] = "changed"
	c2, _ := again.Load(m.ID)
	if c2.Messages[1].ProviderData["anthropic.blocks"] == "changed" {
		t.Fatal("Load shares provider data with the caller")
	}
}
