package wire

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/browser"
)

// The codec moved from encoding/json to JSON v2 for speed only: a frame
// must decode to the same value, fail in the same cases and encode to the
// same bytes as under encoding/json. The reference below is encoding/json
// itself, as the package used it before.

// referenceDecode is Decode as encoding/json does it: the type read first,
// then the frame decoded into its struct and checked.
func referenceDecode(data []byte) (Frame, bool) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, false
	}
	var head struct {
		Type *string `json:"type"`
	}
	if json.Unmarshal(data, &head) != nil || head.Type == nil {
		return nil, false
	}
	k, ok := kinds[*head.Type]
	if !ok {
		return Unknown{Type: *head.Type}, true
	}
	v := k.new()
	if json.Unmarshal(data, v) != nil {
		return nil, false
	}
	f := reflect.ValueOf(v).Elem().Interface().(Frame)
	if validate(f) != nil {
		return nil, false
	}
	return f, true
}

// referenceEncode is Encode as encoding/json does it.
func referenceEncode(f Frame) ([]byte, bool) {
	body, err := json.Marshal(f)
	if err != nil {
		return nil, false
	}
	typ, _ := json.Marshal(f.FrameType())
	out := append([]byte(`{"type":`), typ...)
	if len(body) > 2 {
		return append(append(out, ','), body[1:]...), true
	}
	return append(out, '}'), true
}

// checkAgainstEncodingJSON fails t when Decode, PeekType or Encode differ
// from encoding/json on data.
func checkAgainstEncodingJSON(t *testing.T, data []byte) {
	t.Helper()
	want, wantOK := referenceDecode(data)
	got, err := Decode(data)
	if (err == nil) != wantOK || !reflect.DeepEqual(got, want) {
		t.Fatalf("Decode(%q) = %#v, %v; encoding/json gives %#v (ok %v)", data, got, err, want, wantOK)
	}
	var head struct {
		Type *string `json:"type"`
	}
	refErr := json.Unmarshal(data, &head)
	typ, err := PeekType(data)
	if refOK := refErr == nil && head.Type != nil; (err == nil) != refOK || refOK && typ != *head.Type {
		t.Fatalf("PeekType(%q) = %q, %v; encoding/json gives %+v, %v", data, typ, err, head, refErr)
	}
	if !wantOK {
		return
	}
	if _, unknown := got.(Unknown); unknown {
		return
	}
	enc, err := Encode(got)
	ref, refOK := referenceEncode(got)
	if (err == nil) != refOK || !bytes.Equal(enc, ref) {
		t.Fatalf("Encode(%#v) = %s, %v; encoding/json gives %s (ok %v)", got, enc, err, ref, refOK)
	}
}

// seedCorpus reads FuzzDecode's seed inputs: every frame of the opentask
// recording and the malformed and edge cases collected so far.
func seedCorpus(t *testing.T) map[string][]byte {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", "FuzzDecode")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		_, body, ok := strings.Cut(string(raw), "\n")
		lit, ok2 := strings.CutPrefix(strings.TrimSpace(body), "[]byte(")
		lit, ok3 := strings.CutSuffix(lit, ")")
		s, err := strconv.Unquote(lit)
		if !ok || !ok2 || !ok3 || err != nil {
			t.Fatalf("%s is not a one-input corpus file: %v", e.Name(), err)
		}
		out[e.Name()] = []byte(s)
	}
	if len(out) == 0 {
		t.Fatal("the seed corpus is empty")
	}
	return out
}

// codecCases are inputs where encoding/json has a rule of its own.
var codecCases = []string{
	`{"type":"browser_command","id":"a","action":"read"}`,
	`{"TYPE":"browser_command","ID":"a","Action":"read","TimeOut_MS":5}`,
	`{"type":"browser_command","id":"a","id":"b","action":"read"}`,
	`{"type":"mode","type":"browser_command","id":"a","action":"click"}`,
	`{"type":"browser_command","id":"a","action":"read","type":"mode","mode":"plan"}`,
	`{"type":"browser_command","id":"a","action":"read","future":{"x":[1,2,{"y":null}]}}`,
	`{"type":"browser_command","id":"a","action":"read","timeout_ms":1.5}`,
	`{"type":"browser_command","id":"a","action":"read","timeout_ms":1e3}`,
	`{"type":"browser_command","id":"a","action":"read","timeout_ms":99999999999999999999}`,
	`{"type":"browser_command","id":"a","action":"read","timeout_ms":"5"}`,
	`{"type":"browser_command","id":"a","action":"read","timeout_ms":null}`,
	`{"type":"browser_command","id":"a","action":"read","press_enter":1}`,
	`{"type":"browser_command","id":"a","action":"read","text":"bad \xff\xfe utf8 \ud800 lone"}`,
	`{"type":"browser_command","id":"a","action":"read","text":"ctl ` + "\x01" + `"}`,
	`{"type":"browser_command","id":"a","action":"read","text":"<&> \u2028 \u2029 \/"}`,
	`{"type":"browser_command","id":"a","action":"read"} {}`,
	`{"type":"browser_command","id":"a","action":"read",}`,
	`{"type":"browser_command","id":"","action":"read"}`,
	`{"type":"browser_command","action":"read"}`,
	`{"type":null,"id":"a"}`,
	`{"type":5}`,
	`{"id":"a"}`,
	`[]`,
	` {"type":"interrupt"} `,
	`{"type":"interrupt","x":1}`,
	`{"type":"new_session","":1}`,
	`{"type":"future_frame","a":[}`,
	`{"type":"future_frame","a":1}`,
	`{"type":"chat_event","event":{"type":"TEXT_MESSAGE_CONTENT","delta":"<b>"}}`,
	`{"type":"chat_event","event":[1]}`,
	`{"type":"chat_event","event":null}`,
	`{"type":"conversation_snapshot","messages":[{"role":"user","content":"hi"}],"tool_results":{"c1":true,"c1":false}}`,
	`{"type":"conversation_snapshot","messages":null,"tool_results":{}}`,
	`{"type":"models","models":["a","b"],"current":"a","models":["c"]}`,
	`{"type":"tool_result","id":"t","success":true,"output":"\ud83d\ude00","error":""}`,
	`{"type":"browser_result","id":"a","content":"x","Content":null}`,
	`{"type":"browser_result","id":"a","events":[{"b":1, "a" : [ ]}],"tabs":[{"index":1,"index":2}]}`,
	`{"type":"browser_result","id":"a","tabs":[{"index":-0}],"image":"QUJD"}`,
	`{"type":"browser_result","id":"a","events":{}}`,
	"{\"type\":\"browser_result\",\"id\":\"a\",\"content\":\"caf\u00e9 \\u00e9 \u2028\"}",
	`{"type":"browser_hello","token":"t","extension_version":"1.12.1","extension_version":2}`,
	`{"type":"approval_response","request_id":"r","action":"approve","\u0061ction":"reject"}`,
}

func TestCodecMatchesEncodingJSON(t *testing.T) {
	for name, data := range seedCorpus(t) {
		t.Run(name, func(t *testing.T) { checkAgainstEncodingJSON(t, data) })
	}
	for i, msg := range append(codecCases, recordedResults...) {
		t.Run(strconv.Itoa(i), func(t *testing.T) { checkAgainstEncodingJSON(t, []byte(msg)) })
	}
}

// A Go string that is not valid UTF-8 never comes out of Decode, but infer
// can hand one to Encode. encoding/json wrote each bad byte as the escape
// \ufffd; JSON v2 writes the character U+FFFD itself. Both read back as the
// same text, which is all a peer sees.
func TestInvalidUTF8EncodesToTheSameText(t *testing.T) {
	c := BrowserCommand{ID: "a", Action: browser.Type, Text: "caf\xc3\xa9 \xff\xfe end"}
	got, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := referenceEncode(c)
	var a, b BrowserCommand
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ref, &b); err != nil {
		t.Fatal(err)
	}
	if a != b || a.Text != "caf\u00e9 \ufffd\ufffd end" {
		t.Fatalf("Encode gives %q, encoding/json %q", a.Text, b.Text)
	}
}

// A browser command is encoded and decoded on every browser call. Under
// encoding/json the pair took 20 allocations (the frame scanned once for
// its type, again to validate and again to decode); read in one pass it
// takes 8, and a few more when the race detector empties the library's
// pools.
func TestACommandIsReadInOnePass(t *testing.T) {
	var buf []byte
	allocs := testing.AllocsPerRun(200, func() {
		buf = AppendCommand(buf[:0], benchCommand)
		if f, err := Decode(buf); err != nil || f != Frame(benchCommand) {
			t.Fatalf("Decode = %#v, %v", f, err)
		}
	})
	if allocs > 12 {
		t.Fatalf("%v allocations to encode and decode a command", allocs)
	}
}
