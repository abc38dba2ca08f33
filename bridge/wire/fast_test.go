package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Frames as opentask 1.12.1 sends them (from the recording): the fast
// path must take every one, or its speed is never used.
var recordedResults = []string{
	`{"type":"browser_result","id":"a4041bbc-f455-469a-a4b5-50c0baa5085c","url":"","title":"","content":"","events":[],"error":"","tabs":[{"index":0,"url":"about:blank","title":"about:blank","active":false},{"index":1,"url":"chrome-extension://pldlmnnoajphnolpalndfdodmojkjalc/sidepanel.html","title":"OpenTask Conversation","active":true}]}`,
	`{"type":"browser_result","id":"08f923de-0a47-4fc2-b01b-cd9b9f120ff7","url":"","title":"","content":"","events":[],"error":"Cannot access contents of url \"chrome-extension://pldlmnnoajphnolpalndfdodmojkjalc/sidepanel.html\". Extension manifest must request permission to access this host."}`,
	`{"type":"browser_result","id":"288bedc0-de3d-4492-bf2b-2a3b9bc4eb17","url":"http://127.0.0.1:52790/page.html","title":"OTX Test Page","content":"Hello from the test page\n\nSome visible paragraph text.\n\n    Search\nClick me\nnot clicked\nnot submitted","events":[],"error":""}`,
	`{"type":"browser_result","id":"e7c52a8b-3e80-4dde-afec-7e57f38e1695","url":"http://127.0.0.1:52790/page.html","title":"OTX Test Page","content":null,"events":[],"error":""}`,
	`{"type":"browser_result","id":"dfcd4eb2-95cf-4ef2-9df4-4310ac5328ea","url":"http://127.0.0.1:52790/page.html","title":"OTX Test Page","content":"","events":[],"error":"","image":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==","image_mime_type":"image/png"}`,
	`{"type":"browser_result","id":"dae1f313-7fb7-421c-b398-9b296b5a1866","url":"","title":"","content":"","events":[],"error":"unknown action: scroll"}`,
	// The same with the spacing of a pretty printer, and unicode.
	"{\"type\": \"browser_result\", \"id\": \"x\",\n \"content\": \"caf\u00e9 \\u00e9 \\ud83d\\ude00 \u2028\", \"events\": [ {\"level\": \"log\"} ], \"error\": \"\" }",
}

func TestFastPathTakesRecordedResults(t *testing.T) {
	for _, msg := range recordedResults {
		fast, ok := decodeResultFast([]byte(strings.TrimSpace(msg)))
		if !ok {
			t.Errorf("fast path declined %s", msg)
			continue
		}
		slow, err := decodeGeneric([]byte(strings.TrimSpace(msg)))
		if err != nil || !reflect.DeepEqual(Frame(fast), slow) {
			t.Errorf("fast %#v\nslow %#v (%v)", fast, slow, err)
		}
	}
}

func TestFastPathDeclinesTheUnusualButDecodeStillWorks(t *testing.T) {
	for _, tc := range []struct {
		msg     string
		wantErr bool
	}{
		{msg: `{"id":"a","type":"browser_result"}`},                       // type not first
		{msg: `{"type":"browser_result","id":"a","future_field":[1,{}]}`}, // unknown field
		{msg: `{"type":"browser_result","ID":"a"}`},                       // case-folded key
		{msg: `{"type":"browser_result","\u0069d":"a"}`},                  // escaped key
		{msg: `{"type":"browser_result","id":"a","url":null}`},            // null string
		{msg: `{"type":"browser_result","id":"a","TYPE":"mode"}`, wantErr: false},
		{msg: `{"type":"browser_result","id":"a"} trailing`, wantErr: true},
		{msg: `{"type":"browser_result","id":""}`, wantErr: true},
		{msg: `{"type":"browser_result","id":"a","content":"ctl` + "\x01" + `"}`, wantErr: true},
		{msg: `{"type":"browser_result","id":"a","tabs":[{"index":"0"}]}`, wantErr: true},
		{msg: `{"type":"browser_result","id":"a","events":[1,]}`, wantErr: true},
		{msg: `{"type":"browser_result","id":"a","content":"unterminated}`, wantErr: true},
	} {
		data := []byte(tc.msg)
		if _, ok := decodeResultFast(data); ok {
			t.Errorf("fast path accepted %s", tc.msg)
		}
		f, err := Decode(data)
		if tc.wantErr {
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("Decode(%s) = %#v, %v; want ErrMalformed", tc.msg, f, err)
			}
			continue
		}
		slow, serr := decodeGeneric(data)
		if err != nil || serr != nil || !reflect.DeepEqual(f, slow) {
			t.Errorf("Decode(%s) = %#v, %v; generic %#v, %v", tc.msg, f, err, slow, serr)
		}
	}
}

func TestFastDecodeHandlesEscapesAndInvalidUTF8LikeEncodingJSON(t *testing.T) {
	for _, content := range []string{
		`tab\tnew\nline \"quoted\" back\\slash`,
		`\u003cb\u003e \ud83d\ude00 \/`,
		"caf\xc3\xa9",
		"bad \xff\xfe utf8",
		"ends with backslash pair \\\\",
		strings.Repeat("long ascii run ", 100) + `\n`,
	} {
		msg := []byte(`{"type":"browser_result","id":"a","content":"` + content + `"}`)
		fast, ok := decodeResultFast(msg)
		if !ok {
			t.Errorf("fast path declined content %q", content)
			continue
		}
		var want string
		if err := json.Unmarshal([]byte(`"`+content+`"`), &want); err != nil {
			t.Fatal(err)
		}
		if *fast.Content != want {
			t.Errorf("content %q decoded to %q, want %q", content, *fast.Content, want)
		}
	}
}

func TestFastEncodeMatchesEncodingJSON(t *testing.T) {
	s := func(v string) *string { return &v }
	for _, r := range []BrowserResult{
		{ID: "a"},
		{ID: "a", Content: s("")},
		{ID: "a", URL: "https://x.example/?a=1&b=<2>", Title: `"quoted" \ back`, Content: s("line\nnext\ttab")},
		{ID: "a", Content: s("caf\u00e9 \u2028 \u2029 \xff"), Error: "boom"},
		{ID: "a", Image: strings.Repeat("QUJD", 1000), ImageMIMEType: "image/png"},
		{ID: "a", Events: []json.RawMessage{json.RawMessage(`{ "level" : "log" }`)}, Tabs: []Tab{{Index: 1, URL: "u", Title: "t", Active: true, Controlled: true}}},
		{ID: "a", Tabs: []Tab{}},
		{ID: strings.Repeat("x", 7), Content: s(strings.Repeat("<", 9))},
	} {
		fast, err := encodeResult(r)
		if err != nil {
			t.Fatal(err)
		}
		slow, err := encodeGeneric(r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(fast, slow) {
			t.Errorf("encodings differ:\nfast %s\nslow %s", fast, slow)
		}
	}
	if _, err := Encode(BrowserResult{ID: "a", Events: []json.RawMessage{json.RawMessage(`{bad`)}}); err == nil {
		t.Error("an invalid event encoded without error")
	}
}

// TestByteTricks checks the word tests against the byte-at-a-time rule,
// with the odd byte at each of the eight places of a word.
func TestByteTricks(t *testing.T) {
	for pos := range 8 {
		for b := range 256 {
			word := []byte("AAAAAAAA")
			word[pos] = byte(b)
			x := binary.LittleEndian.Uint64(word)
			if got, want := jsonSpecial(x)&highBits != 0, b < 0x20 || b >= 0x80; got != want {
				t.Errorf("jsonSpecial with %#x at %d = %v", b, pos, got)
			}
			plain := b >= 0x20 && b < 0x80 && !strings.ContainsRune(`"\<>&`, rune(b))
			if got := needsNoEscape(string(word)); got != plain {
				t.Errorf("needsNoEscape with %#x at %d = %v", b, pos, got)
			}
		}
	}
}

// Commands go through encoding/json both ways; AppendCommand writes into a
// reused buffer what Encode writes, and Decode reads it back.
func TestCommandsRoundTripThroughTheLibrary(t *testing.T) {
	buf := []byte("left over from the last command")
	for _, c := range []BrowserCommand{
		{ID: "a", Action: "tabs"},
		{ID: "a", Action: "navigate", URL: "https://x.example/?q=<a>&b", TimeoutMS: 30000},
		{ID: "a", Action: "type", Selector: `input[name="q"]`, Text: "caf\u00e9\n\xff", PressEnter: true, TimeoutMS: -5},
	} {
		want, err := Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		buf = AppendCommand(buf[:0], c)
		if !bytes.Equal(buf, want) {
			t.Errorf("AppendCommand differs from Encode:\n%s\n%s", buf, want)
		}
		back, err := Decode(buf)
		if err != nil {
			t.Fatal(err)
		}
		c.Text = strings.ToValidUTF8(c.Text, "\ufffd")
		if !reflect.DeepEqual(back, Frame(c)) {
			t.Errorf("round trip: %#v, want %#v", back, c)
		}
	}
	for _, msg := range []string{
		`{"type":"browser_command","action":"read"}`,
		`{"type":"browser_command","id":"u","action":"read","press_enter":"yes"}`,
	} {
		if _, err := Decode([]byte(msg)); !errors.Is(err, ErrMalformed) {
			t.Errorf("Decode(%s) = %v, want ErrMalformed", msg, err)
		}
	}
}

func TestWordTestsAgreeWithByteTests(t *testing.T) {
	const n = 40 // covers the 16-byte loop, the 8-byte words and the tail
	plain := strings.Repeat("A", n)
	if !needsNoEscape(plain) || !verbatimJSONString([]byte(plain)) {
		t.Fatal("a plain ASCII string is not recognised as plain")
	}
	for b := range 256 {
		for pos := range n {
			s := plain[:pos] + string([]byte{byte(b)}) + plain[pos+1:]
			want := b >= 0x20 && b < 0x80 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
			if got := needsNoEscape(s); got != want {
				t.Fatalf("needsNoEscape with byte %#x at %d = %v", b, pos, got)
			}
			wantVerbatim := b >= 0x20 && b < 0x80
			if got := verbatimJSONString([]byte(s)); got != wantVerbatim {
				t.Fatalf("verbatimJSONString with byte %#x at %d = %v", b, pos, got)
			}
		}
	}
	if !verbatimJSONString([]byte(plain + "caf\u00e9" + plain)) {
		t.Error("valid UTF-8 is not verbatim")
	}
	if verbatimJSONString([]byte(plain + "\xff" + plain)) {
		t.Error("invalid UTF-8 counts as verbatim")
	}
}

var sink bool

func BenchmarkNeedsNoEscape1MiB(b *testing.B) {
	s := strings.Repeat("QUJDRA+/", 1<<17)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		sink = needsNoEscape(s)
	}
}

func BenchmarkVerbatimJSONString1MiB(b *testing.B) {
	s := []byte(strings.Repeat("QUJDRA+/", 1<<17))
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		sink = verbatimJSONString(s)
	}
}

func TestUnknownFields(t *testing.T) {
	for msg, want := range map[string][]string{
		`{"type":"list_conversations","future_field":1}`:                         {"future_field"},
		`{"type":"browser_result","id":"a","Content":"x","zeta":1,"alpha":null}`: {"alpha", "zeta"},
		`{"TYPE":"mode","mode":"plan"}`:                                          nil,
		`{"type":"some_future_frame","x":1}`:                                     nil,
		`not json`:                                                               nil,
	} {
		if got := UnknownFields([]byte(msg)); !slices.Equal(got, want) {
			t.Errorf("UnknownFields(%s) = %q, want %q", msg, got, want)
		}
	}
}
