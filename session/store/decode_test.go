package store

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// trickyText exercises every escape encoding/json writes or reads.
var trickyText = []string{
	"", "plain", "quote \" backslash \\ slash /", "tab\tnewline\ncr\r", "\b\f\x00\x01\x1f\x7f",
	"<html> & 'single'", "é ü 日本語 😀", "line sep \u2028 para sep \u2029", "\xff\xfe invalid utf-8",
	strings.Repeat("long ascii run ", 40), strings.Repeat("\"", 9) + strings.Repeat("\\", 9),
}

// written is what the store reads back for s: the writer (encoding/json)
// replaces each byte of invalid UTF-8 with U+FFFD, as converting to runes
// does.
func written(s string) string { return string([]rune(s)) }

// writtenMessage is what the store reads back for m: written applied to
// every string, and no empty slice or map, which the writer omits.
func writtenMessage(m Message) Message {
	m.Role, m.Content, m.ToolCallID, m.Reasoning = written(m.Role), written(m.Content), written(m.ToolCallID), written(m.Reasoning)
	calls, data := m.ToolCalls, m.ProviderData
	m.ToolCalls, m.ProviderData = nil, nil
	for _, c := range calls {
		m.ToolCalls = append(m.ToolCalls, ToolCall{ID: written(c.ID), Type: written(c.Type),
			Function: FunctionCall{Name: written(c.Function.Name), Arguments: written(c.Function.Arguments)}})
	}
	for k, v := range data {
		if m.ProviderData == nil {
			m.ProviderData = make(map[string]string, len(data))
		}
		m.ProviderData[written(k)] = written(v)
	}
	return m
}

// trickyMessages puts s in every string of a message, in each role.
func trickyMessages(s string) []Message {
	return []Message{
		{Role: RoleUser, Content: s},
		{Role: RoleAssistant, Content: s, Reasoning: s, ToolCalls: []ToolCall{
			{ID: s, Type: "function", Function: FunctionCall{Name: s, Arguments: s}},
			{ID: "2", Type: "custom", Function: FunctionCall{Name: "n", Arguments: `{"a":"` + s + `"}`}},
		}},
		{Role: RoleAssistant, ToolCalls: []ToolCall{}},
		{Role: RoleTool, ToolCallID: s, Content: s, ProviderData: map[string]string{"k": s, s: "v"}},
		{Role: s, Content: s},
	}
}

// roundTrip writes msgs as the store does, each with a tool result, and
// reads them back, failing on any damage.
func roundTrip(t *testing.T, msgs []Message, at time.Time) *state {
	t.Helper()
	ok := true
	var recs []record
	for i := range msgs {
		recs = append(recs,
			record{Kind: kindMessage, At: at, Message: &msgs[i]},
			record{Kind: kindToolResult, At: at, ToolCallID: msgs[i].Content + "#", OK: &ok})
	}
	data, err := encodeRecords(recs)
	if err != nil {
		t.Fatal(err)
	}
	st := &state{keep: true}
	if d := decodeRecords(data, st); d.lines() != 0 {
		t.Fatalf("reading back what the store wrote: %v\n%s", d.describe("transcript"), data)
	}
	return st
}

// TestRecordsReadBackAsWritten writes every string the store may hold, in
// every string of each kind of record, and reads it back unchanged.
func TestRecordsReadBackAsWritten(t *testing.T) {
	times := []time.Time{
		time.Date(2026, 8, 16, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 8, 16, 12, 0, 0, 123456789, time.UTC),
		time.Date(2024, 2, 29, 23, 59, 59, 1, time.UTC),
		time.Date(2026, 8, 16, 12, 0, 0, 0, time.FixedZone("x", 3600)),
	}
	for i, s := range trickyText {
		at := times[i%len(times)]
		msgs := trickyMessages(s)
		st := roundTrip(t, msgs, at)
		if len(st.messages) != len(msgs) {
			t.Fatalf("%q: read %d messages, wrote %d", s, len(st.messages), len(msgs))
		}
		for j, m := range msgs {
			if want := writtenMessage(m); !reflect.DeepEqual(st.messages[j], want) {
				t.Errorf("message read back as\n%#v\nwant\n%#v", st.messages[j], want)
			}
			if !st.results[written(m.Content)+"#"] {
				t.Errorf("tool result for %q not read back", m.Content)
			}
		}
		if !st.meta.UpdatedAt.Equal(at) {
			t.Errorf("updated %v, want %v", st.meta.UpdatedAt, at)
		}

		pinned := true
		data, err := encodeRecords([]record{
			{Kind: kindConversation, At: at, ID: "x", Version: formatVersion},
			{Kind: kindTitle, At: at, Title: s, Source: TitleUser},
			{Kind: kindPin, At: at, Pinned: &pinned},
			{Kind: kindNotice, At: at, Notice: &Notice{Text: s, Origin: s}},
		})
		if err != nil {
			t.Fatal(err)
		}
		st = &state{keep: true}
		if d := decodeRecords(data, st); d.lines() != 0 {
			t.Fatalf("reading back what the store wrote: %v\n%s", d.describe("transcript"), data)
		}
		if m := st.meta; m.Title != written(s) || m.TitleSource != TitleUser || !m.Pinned || !m.CreatedAt.Equal(at) {
			t.Errorf("meta read back as %+v", m)
		}
		if len(st.notices) != 1 || st.notices[0].Text != written(s) || st.notices[0].Origin != written(s) || !st.notices[0].At.Equal(at) {
			t.Errorf("notice read back as %+v", st.notices)
		}
	}
}

// TestHandEditedLines reads lines in forms the store never writes, as a
// person or another tool may leave them: valid JSON loads, and anything
// else costs its own line only.
func TestHandEditedLines(t *testing.T) {
	for _, c := range []struct {
		line    string
		content string // the message's content, when the line is one
		damaged bool
	}{
		{line: `{"message":{"content":"keys in any order","role":"user"},"at":"2026-08-16T12:00:00.5Z","kind":"message"}`, content: "keys in any order"},
		{line: ` { "kind" : "message" , "message" : { "role" : "user" , "content" : "spaced" } } `, content: "spaced"},
		{line: "{\"kind\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"crlf\"}}\r", content: "crlf"},
		{line: `{"kind":"message","message":{"role":"user","content":"\ud83d\ude00 \u00e9 \/"}}`, content: "😀 é /"},
		{line: `{"kind":"message","message":{"role":"user","content":"lone \ud800 surrogate \udc00 x"}}`, content: "lone \uFFFD surrogate \uFFFD x"},
		{line: "{\"kind\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"bad \xff byte\"}}", content: "bad \uFFFD byte"},
		{line: `{"kind":"message","message":{"role":"user","content":"first"},"message":{"content":"second"}}`, content: "second"},
		{line: `{"kind":"message","at":"2026-08-16T12:00:00+02:00","message":{"role":"user","content":"offset"}}`, content: "offset"},
		{line: `{"kind":"message","message":{"role":"user","content":"unknown keys","extra":[1,{"a":null}]},"more":true}`, content: "unknown keys"},
		{line: `{"kind":"from-the-future","payload":{"x":1}}`},
		{line: `{"kind":"message","message":null}`, damaged: true},
		{line: `{"kind":"message","message":{"role":"user","content":"trailing"}} junk`, damaged: true},
		{line: "{\"kind\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"raw\ttab\"}}", damaged: true},
		{line: `{"kind":"message","message":{"role":"user","content":"bad escape \'"}}`, damaged: true},
		{line: `{"kind":"message","at":"2026-02-30T12:00:00Z","message":{"role":"user","content":"no such day"}}`, damaged: true},
		{line: `{"kind":"message","message":{"role":"user","content":"unterminated}}`, damaged: true},
		{line: `{"kind":"message","message":{"role":"user","content":7}}`, damaged: true},
		{line: `{"kind":"tool_result","tool_call_id":"c","ok":tru}`, damaged: true},
		{line: `{"kind":"tool_result","tool_call_id":"c"}`, damaged: true},
		{line: `[]`, damaged: true},
	} {
		// Good lines around it show that damage stays on its line.
		data := "{\"kind\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"before\"}}\n" + c.line +
			"\n{\"kind\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"after\"}}\n"
		st := &state{keep: true}
		d := decodeRecords([]byte(data), st)
		var got []string
		for _, m := range st.messages {
			got = append(got, m.Content)
		}
		want := []string{"before", "after"}
		if c.content != "" {
			want = []string{"before", c.content, "after"}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: read messages %q, want %q", c.line, got, want)
		}
		if c.damaged && (d.skipped != 1 || d.firstLine != 2 || d.torn) || !c.damaged && d.lines() != 0 {
			t.Errorf("%s: damage %+v, want damaged %v", c.line, d, c.damaged)
		}
	}
}

// TestSummariesReadBackAsWritten writes summaries with every kind of title
// and large sizes, and reads them back unchanged.
func TestSummariesReadBackAsWritten(t *testing.T) {
	s, _ := openTest(t, t.TempDir())
	for i, title := range trickyText {
		m := Meta{ID: "6f1c2b1e-8d3a-4c55-9a0e-2f5b8c7d9e10", Title: title, TitleSource: TitleUser,
			CreatedAt: time.Date(2026, 8, 16, 12, 0, 0, i*1000, time.UTC), UpdatedAt: time.Date(2026, 8, 17, 0, 0, 0, 0, time.UTC),
			MessageCount: i * 1000, Pinned: i%2 == 0}
		tail := uint32(i) * 2654435761 // 0 (none) first, then large values
		if err := s.writeMeta(m, int64(i)<<40, tail); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(s.metaPath(m.ID))
		if err != nil {
			t.Fatal(err)
		}
		m.Title = written(title)
		if got, ok := decodeMeta(data); !ok || got.Version != formatVersion || got.Meta != m || got.Size != int64(i)<<40 || got.Tail != tail {
			t.Errorf("decodeMeta(%s) = %+v, %v", data, got, ok)
		}
	}
	for _, data := range []string{`{"version":1,"message_count":1.5}`, `{"version":1,"jsonl_tail":4294967296}`, `{"version":1} {}`, `{"version":1`} {
		if got, ok := decodeMeta([]byte(data)); ok {
			t.Errorf("decodeMeta(%s) = %+v, accepted", data, got)
		}
	}
}

// FuzzDecodeRecords checks that whatever strings a message holds are read
// back as the store wrote them, and that any bytes between two records,
// however broken, cost neither of them.
func FuzzDecodeRecords(f *testing.F) {
	for _, s := range trickyText {
		f.Add(s, []byte(s))
	}
	f.Add("x", []byte("garbage\n{\"kind\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"a\\nb\"}}\n\r\n  \n{\"kind\":\"message\""))
	f.Add("x", []byte(`{"kind":"tool_result","tool_call_id":"c\u0041","ok":true}`))
	f.Fuzz(func(t *testing.T, s string, between []byte) {
		msgs := trickyMessages(s)
		st := roundTrip(t, msgs, time.Date(2026, 8, 16, 12, 0, 0, 0, time.UTC))
		for j, m := range msgs {
			if want := writtenMessage(m); !reflect.DeepEqual(st.messages[j], want) {
				t.Fatalf("message read back as\n%#v\nwant\n%#v", st.messages[j], want)
			}
		}

		line, err := encodeRecords([]record{{Kind: kindMessage, Message: &msgs[1]}})
		if err != nil {
			t.Fatal(err)
		}
		data := append(append(append(append([]byte{}, line...), between...), '\n'), line...)
		st = &state{keep: true}
		d := decodeRecords(data, st)
		want := writtenMessage(msgs[1])
		if n := len(st.messages); n < 2 || !reflect.DeepEqual(st.messages[0], want) || !reflect.DeepEqual(st.messages[n-1], want) {
			t.Fatalf("the records around %q were not read back: %d messages", between, n)
		}
		if d.torn || d.skipped > strings.Count(string(between), "\n")+1 {
			t.Fatalf("damage %+v from %q", d, between)
		}
	})
}
