package store

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// agree checks that when the fast path accepts line, it decodes exactly
// what encoding/json decodes from the same bytes.
func agree(t *testing.T, line []byte) (accepted bool) {
	t.Helper()
	var d fastDecoder
	var got record
	if !d.record(line, &got) {
		return false
	}
	var want record
	if err := json.Unmarshal(line[:d.pos], &want); err != nil {
		t.Fatalf("fast path accepted %q, which encoding/json rejects: %v", line[:d.pos], err)
	}
	// Compare what the pointers hold: the fast path reuses its buffers.
	if !reflect.DeepEqual(flatten(got), flatten(want)) {
		t.Fatalf("decoders disagree on %q\nfast %+v\njson %+v", line[:d.pos], flatten(got), flatten(want))
	}
	return true
}

type flatRecord struct {
	Kind, ToolCallID string
	At               time.Time
	Message          Message
	HasMessage       bool
	OK               *bool
}

func flatten(r record) flatRecord {
	f := flatRecord{Kind: r.Kind, ToolCallID: r.ToolCallID, At: r.At, OK: r.OK}
	if r.Message != nil {
		f.Message, f.HasMessage = *r.Message, true
	}
	return f
}

// trickyText exercises every escape encoding/json writes or reads.
var trickyText = []string{
	"", "plain", "quote \" backslash \\ slash /", "tab\tnewline\ncr\r", "\b\f\x00\x01\x1f\x7f",
	"<html> & 'single'", "é ü 日本語 😀", "line sep \u2028 para sep \u2029", "\xff\xfe invalid utf-8",
	strings.Repeat("long ascii run ", 40), strings.Repeat("\"", 9) + strings.Repeat("\\", 9),
}

func TestFastDecoderAgreesOnEverythingTheStoreWrites(t *testing.T) {
	ok := true
	var msgs []Message
	for _, s := range trickyText {
		msgs = append(msgs,
			Message{Role: RoleUser, Content: s},
			Message{Role: RoleAssistant, Content: s, Reasoning: s, ToolCalls: []ToolCall{
				{ID: s, Type: "function", Function: FunctionCall{Name: s, Arguments: s}},
				{ID: "2", Type: "custom", Function: FunctionCall{Name: "n", Arguments: `{"a":"` + s + `"}`}},
			}},
			Message{Role: RoleTool, ToolCallID: s, Content: s},
			Message{Role: "other", Content: s},
		)
	}
	msgs = append(msgs, Message{Role: RoleAssistant, ToolCalls: []ToolCall{}})
	times := []time.Time{
		time.Date(2026, 8, 16, 12, 0, 0, 0, time.UTC),
		time.Date(2026, 8, 16, 12, 0, 0, 123456789, time.UTC),
		time.Date(2026, 8, 16, 12, 0, 0, 120000000, time.UTC),
		time.Date(2024, 2, 29, 23, 59, 59, 1, time.UTC),
		time.Date(2026, 8, 16, 12, 0, 0, 0, time.FixedZone("x", 3600)),
	}
	for i := range msgs {
		recs := []record{
			{Kind: kindMessage, At: times[i%len(times)], Message: &msgs[i]},
			{Kind: kindToolResult, At: times[i%len(times)], ToolCallID: msgs[i].Content, OK: &ok},
		}
		data, err := encodeRecords(recs)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n") {
			line = strings.TrimSuffix(line, "\n")
			if !agree(t, []byte(line)) {
				t.Errorf("fast path refused a line the store writes: %s", line)
			}
		}
	}
}

func TestFastDecoderDefersWhatItDoesNotKnow(t *testing.T) {
	accepted := []string{
		`{"kind":"message","at":"2026-08-16T12:00:00Z","message":{"role":"user","content":"\ud83d\ude00 \u00e9 \/"}}`,
		`{"kind":"message","at":"2026-08-16T12:00:00Z","message":{"role":"user","content":"lone \ud800 surrogate \udc00 x"}}`,
		`{"kind":"message","at":"2026-08-16T12:00:00Z","message":{"role":"user","content":"high then bad \ud83d\u0041"}}`,
		`{"message":{"content":"keys in any order","role":"user"},"at":"2026-08-16T12:00:00.5Z","kind":"message"}`,
		`{"kind":"message","message":{"role":"user","content":"no time"}}`,
		`{"kind":"tool_result","tool_call_id":"c","ok":false}`,
		`{"kind":"tool_result","tool_call_id":"c"}`,
		`{"kind":"message","at":"2026-08-16T12:00:00+02:00","message":{"role":"user","content":"offset"}}`,
	}
	for _, line := range accepted {
		if !agree(t, []byte(line)) {
			t.Errorf("fast path refused %s", line)
		}
	}
	deferred := []string{
		`{"kind":"conversation","at":"2026-08-16T12:00:00Z","id":"x","version":1}`,
		`{"kind":"title","at":"2026-08-16T12:00:00Z","title":"t","source":"user"}`,
		`{ "kind":"message","message":{"role":"user","content":"space"}}`,
		`{"Kind":"message","message":{"role":"user","content":"case-folded key"}}`,
		`{"kind":"message","message":{"role":"user","content":"dup"},"message":{"content":"merged"}}`,
		`{"kind":"message","message":null}`,
		"{\"kind\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"raw\ttab\"}}",
		"{\"kind\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"bad \xff byte\"}}",
		`{"kind":"message","message":{"role":"user","content":"bad escape \'"}}`,
		`{"kind":"message","at":"2026-02-30T12:00:00Z","message":{"role":"user","content":"no such day"}}`,
		`{"kind":"message","message":{"role":"user","content":"unterminated}}`,
		`{"kind":"message","message":{"role":"user","content":"x","extra":1}}`,
		`{"kind":"tool_result","ok":tru}`,
	}
	for _, line := range deferred {
		if agree(t, []byte(line)) {
			t.Errorf("fast path accepted %s; it should leave it to encoding/json", line)
		}
	}
}

func TestParseUTCAgreesWithTimeParse(t *testing.T) {
	for _, s := range []string{
		"2026-08-16T12:00:00Z", "2026-08-16T12:00:00.1Z", "2026-08-16T12:00:00.123456789Z", "0001-01-01T00:00:00Z",
		"2024-02-29T23:59:59Z", "2023-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-04-31T00:00:00Z", "2026-08-16T24:00:00Z",
		"2026-08-16T12:60:00Z", "2026-08-16T12:00:60Z", "2026-08-16T12:00:00.Z", "2026-08-16T12:00:00.1234567890Z",
		"2026-08-16 12:00:00Z", "2026-08-16T12:00:00", "2026-08-16T12:00:00+01:00", "+026-08-16T12:00:00Z", "2026-08-16T12:00:0aZ",
	} {
		got, ok := parseUTC([]byte(s))
		want, err := time.Parse(time.RFC3339, s)
		if ok && (err != nil || !reflect.DeepEqual(got, want)) {
			t.Errorf("parseUTC(%q) = %v; time.Parse = %v, %v", s, got, want, err)
		}
		if !ok && err == nil && strings.HasSuffix(s, "Z") && len(s) <= 30 {
			t.Errorf("parseUTC(%q) refused a valid timestamp", s)
		}
	}
}

func FuzzFastDecoder(f *testing.F) {
	for _, s := range trickyText {
		m := Message{Role: RoleAssistant, Content: s, ToolCalls: []ToolCall{{ID: s, Type: "function", Function: FunctionCall{Name: "n", Arguments: s}}}}
		data, _ := encodeRecords([]record{{Kind: kindMessage, At: time.Now(), Message: &m}})
		f.Add(data)
	}
	f.Add([]byte(`{"kind":"tool_result","at":"2026-08-16T12:00:00Z","tool_call_id":"c","ok":true}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		agree(t, line)
	})
}

// agreeMeta checks the summary fast path against encoding/json.
func agreeMeta(t *testing.T, data []byte) (accepted bool) {
	t.Helper()
	var d fastDecoder
	var got metaFile
	if !d.meta(data, &got) {
		return false
	}
	var want metaFile
	if err := json.Unmarshal(data[:d.pos], &want); err != nil {
		t.Fatalf("fast path accepted %q, which encoding/json rejects: %v", data[:d.pos], err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoders disagree on %q\nfast %+v\njson %+v", data[:d.pos], got, want)
	}
	return true
}

func TestFastMetaAgreesOnEverySummaryTheStoreWrites(t *testing.T) {
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
		if !agreeMeta(t, data) {
			t.Errorf("fast path refused a summary the store writes: %s", data)
		}
		if !utf8.ValidString(title) {
			continue // encoding/json wrote replacement characters
		}
		if got, ok := decodeMeta(data, m.ID); !ok || got.Meta != m || got.Size != int64(i)<<40 || got.Tail != tail {
			t.Errorf("decodeMeta(%s) = %+v, %v", data, got, ok)
		}
	}
	for _, data := range []string{
		`{"version":1,"message_count":01}`, `{"version":1,"message_count":-1}`, `{"version":1,"message_count":1.5}`,
		`{"version":1,"message_count":1e3}`, `{"version":1,"jsonl_size":12345678901234567890}`, `{"version":1,"pinned":null}`,
		`{"version":1,"title":"a","title":"b"}`, `{"version":1,"unknown":1}`, `{"version":1,"jsonl_tail":4294967296}`,
	} {
		if agreeMeta(t, []byte(data)) {
			t.Errorf("fast path accepted %s; it should leave it to encoding/json", data)
		}
	}
}

func FuzzFastMeta(f *testing.F) {
	f.Add([]byte(`{"version":1,"id":"x","title":"t\u00e9","title_source":"preview","created_at":"2026-08-16T12:00:00Z","updated_at":"2026-08-16T12:00:00.5Z","message_count":2,"pinned":false,"jsonl_size":123}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		agreeMeta(t, data)
	})
}

// referenceDecode folds data the way decodeRecords does but through
// encoding/json alone, line by line: what the fast path must reproduce.
func referenceDecode(data []byte) (*state, damage) {
	st := &state{keep: true, messages: []Message{}}
	var d damage
	for n := 1; len(data) > 0; n++ {
		line, rest, terminated := data, []byte(nil), false
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, rest, terminated = data[:i], data[i+1:], true
		}
		data = rest
		if line = bytes.TrimSpace(line); len(line) == 0 {
			continue
		}
		if err := decodeRecord(line, st); err != nil {
			d.note(n, terminated, err)
		}
	}
	return st, d
}

// agreeInPlace checks that decoding data in place, as Load does, gives
// exactly what encoding/json gives.
func agreeInPlace(t *testing.T, data []byte) {
	t.Helper()
	want, wantDamage := referenceDecode(data)
	got := &state{keep: true, messages: []Message{}}
	gotDamage := decodeRecords(bytes.Clone(data), got)
	if !reflect.DeepEqual(got.messages, want.messages) || !reflect.DeepEqual(got.results, want.results) || got.meta != want.meta {
		t.Fatalf("in-place decoding of %q disagrees with encoding/json\nfast %+v %v %+v\njson %+v %v %+v",
			data, got.messages, got.results, got.meta, want.messages, want.results, want.meta)
	}
	if gotDamage.lines() != wantDamage.lines() || gotDamage.torn != wantDamage.torn || gotDamage.firstLine != wantDamage.firstLine {
		t.Fatalf("in-place decoding of %q reports damage %+v, encoding/json %+v", data, gotDamage, wantDamage)
	}
}

// inPlaceSeeds are transcripts mixing every string the store may write
// with lines the fast path leaves to encoding/json.
func inPlaceSeeds(t testing.TB) [][]byte {
	ok := true
	var seeds [][]byte
	for i, s := range trickyText {
		msgs := []Message{
			{Role: RoleUser, Content: s},
			{Role: RoleAssistant, Content: s, Reasoning: s, ToolCalls: []ToolCall{{ID: s, Type: "function", Function: FunctionCall{Name: s, Arguments: `{"a":"` + s + `"}`}}}},
			{Role: RoleTool, ToolCallID: s, Content: s, ProviderData: map[string]string{"k": s}},
		}
		recs := []record{{Kind: kindConversation, At: time.Date(2026, 8, 16, 12, 0, 0, i, time.UTC), ID: "x", Version: 1}}
		for j := range msgs {
			recs = append(recs, record{Kind: kindMessage, At: time.Date(2026, 8, 16, 12, 0, j, 0, time.UTC), Message: &msgs[j]})
		}
		recs = append(recs, record{Kind: kindToolResult, At: time.Date(2026, 8, 16, 12, 1, 0, 0, time.UTC), ToolCallID: s + "x", OK: &ok},
			record{Kind: kindTitle, Title: s, Source: TitleGenerated})
		data, err := encodeRecords(recs)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, data)
	}
	return append(seeds,
		[]byte("{\"kind\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"a\\nb\"}} junk\n"),
		[]byte("{\"kind\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"a\\\"b\"},\"extra\":1}\n{\"kind\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"c\\td\"}}"),
		[]byte("{\"kind\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"crlf \\\"line\\\"\"}}\r\n\n  \n{\"kind\":\"tool_result\",\"tool_call_id\":\"c\\u0041\"}\n{\"kind\":\"message\",\"message\":{\"role\":\"user\",\"content\":\"torn \\n"),
	)
}

func TestInPlaceDecodingAgreesWithEncodingJSON(t *testing.T) {
	for _, data := range inPlaceSeeds(t) {
		agreeInPlace(t, data)
	}
}

func FuzzInPlaceDecoding(f *testing.F) {
	for _, data := range inPlaceSeeds(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		agreeInPlace(t, data)
	})
}

// runeLenWant is what runeLen must return: the length of the character
// utf8.DecodeRune reads, or 0 where it reports an encoding error.
func runeLenWant(b []byte) int {
	if r, n := utf8.DecodeRune(b); r != utf8.RuneError || n != 1 {
		return n
	}
	return 0
}

func TestRuneLenAgreesWithUTF8(t *testing.T) {
	// Every lead byte with every second and third byte, whole and cut
	// short; four-byte forms with every second byte and a spread of the
	// last two.
	buf := make([]byte, 4)
	for b0 := 0x80; b0 <= 0xff; b0++ {
		for b1 := range 256 {
			for b2 := range 256 {
				buf[0], buf[1], buf[2], buf[3] = byte(b0), byte(b1), byte(b2), 0x80
				for _, n := range []int{1, 2, 3, 4} {
					if got, want := runeLen(buf[:n]), runeLenWant(buf[:n]); got != want {
						t.Fatalf("runeLen(% x) = %d, want %d", buf[:n], got, want)
					}
				}
				if b0 >= 0xf0 {
					for _, b3 := range []byte{0x00, 0x7f, 0x80, 0xbf, 0xc0, 0xff} {
						buf[3] = b3
						if got, want := runeLen(buf), runeLenWant(buf); got != want {
							t.Fatalf("runeLen(% x) = %d, want %d", buf, got, want)
						}
					}
				}
			}
		}
	}
}
