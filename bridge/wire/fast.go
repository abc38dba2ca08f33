package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// browser_result is the bridge's one big frame: page text, and screenshots
// of a megabyte or more as base64, on every browser call. The functions
// here decode and encode the usual shape of a browser_result in one pass,
// with long strings handled by bulk byte searches and copied once. They
// give up (ok == false) on anything unusual — a field they do not know, an
// escaped key, a null where a string belongs — and the caller then takes
// the library's path (codec.go), so the outcome is always exactly what
// that path produces; FuzzDecode checks that. Every other frame, the
// browser command included, is small and goes through the library.
//
// The library alone costs more here than on a command: encoding and
// decoding the 1 KiB read result of BenchmarkResultCodec1KiB took 5.1 µs
// of CPU through it against 2.0 µs here, about a tenth of the bridge's
// whole round trip, and a 1 MiB screenshot 2.3 ms against 1.5 ms
// (2026-12-06, docs/performance.md).

const resultPrefix = `{"type":"browser_result"`

// decodeResultFast decodes data (already trimmed of surrounding space) if
// it is a browser_result whose first key is "type", as every known sender
// writes it; other frames are turned away after reading their type.
func decodeResultFast(data []byte) (BrowserResult, bool) {
	var r BrowserResult
	s := scanner{data: data}
	if !s.begin(BrowserResult{}.FrameType()) {
		return r, false
	}
	for {
		key, more, ok := s.field()
		if !ok {
			return r, false
		}
		if !more {
			return r, s.end() && r.ID != ""
		}
		switch string(key) {
		case "type":
			ok = s.sameType(BrowserResult{}.FrameType())
		case "id":
			ok = s.strInto(&r.ID)
		case "url":
			ok = s.strInto(&r.URL)
		case "title":
			ok = s.strInto(&r.Title)
		case "error":
			ok = s.strInto(&r.Error)
		case "image":
			ok = s.strInto(&r.Image)
		case "image_mime_type":
			ok = s.strInto(&r.ImageMIMEType)
		case "content":
			if s.literal("null") {
				r.Content = nil
			} else {
				var v string
				ok = s.strInto(&v)
				r.Content = &v
			}
		case "events":
			// Almost always empty or null: skip encoding/json's setup.
			if s.literal("[]") {
				r.Events = []json.RawMessage{}
				break
			}
			if s.literal("null") {
				r.Events = nil
				break
			}
			var events []json.RawMessage
			ok = s.arrayInto(&events)
			r.Events = events
		case "tabs":
			var tabs []Tab
			ok = s.arrayInto(&tabs)
			r.Tabs = tabs
		default:
			return r, false
		}
		if !ok {
			return r, false
		}
	}
}

// scanner walks one JSON text; every method reports false rather than
// guessing when the input is not what it expects.
type scanner struct {
	data []byte
	i    int
}

func (s *scanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

func (s *scanner) next() byte {
	c := s.peek()
	s.i++
	return c
}

// begin reads the opening of an object whose first member is
// "type": typ.
func (s *scanner) begin(typ string) bool {
	if s.next() != '{' {
		return false
	}
	s.space()
	if key, ok := s.plainString(); !ok || string(key) != "type" {
		return false
	}
	s.space()
	if s.next() != ':' {
		return false
	}
	s.space()
	return s.sameType(typ)
}

// sameType reads a string value that must equal typ. A repeated "type"
// member with another value is left to encoding/json, whose last-wins rule
// decides what the frame is.
func (s *scanner) sameType(typ string) bool {
	v, ok := s.plainString() // a type never needs escapes
	return ok && string(v) == typ
}

// field moves to the next member of the object: more is false at its end;
// otherwise key is the member's name and the scanner is at its value.
func (s *scanner) field() (key []byte, more, ok bool) {
	s.space()
	switch s.next() {
	case '}':
		return nil, false, true
	case ',':
	default:
		return nil, false, false
	}
	s.space()
	key, ok = s.plainString()
	if !ok {
		return nil, false, false
	}
	s.space()
	if s.next() != ':' {
		return nil, false, false
	}
	s.space()
	return key, true, true
}

// end reports whether nothing but space follows the object.
func (s *scanner) end() bool {
	s.space()
	return s.i == len(s.data)
}

func (s *scanner) literal(lit string) bool {
	if !bytes.HasPrefix(s.data[s.i:], []byte(lit)) {
		return false
	}
	s.i += len(lit)
	return true
}

// stringEnd returns the index of the quote closing the string that opens
// at s.i, or -1.
func (s *scanner) stringEnd() int {
	from := s.i + 1
	for i := from; ; {
		j := bytes.IndexByte(s.data[i:], '"')
		if j < 0 {
			return -1
		}
		q := i + j
		backslashes := 0
		for k := q - 1; k >= from && s.data[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return q
		}
		i = q + 1
	}
}

// plainString reads a string without escapes (an object key, or a frame
// type) and returns its bytes; anything with escapes is left to
// encoding/json.
func (s *scanner) plainString() ([]byte, bool) {
	if s.peek() != '"' {
		return nil, false
	}
	end := s.stringEnd()
	if end < 0 {
		return nil, false
	}
	body := s.data[s.i+1 : end]
	if bytes.IndexByte(body, '\\') >= 0 || !verbatimJSONString(body) {
		return nil, false
	}
	s.i = end + 1
	return body, true
}

// str reads a string value. A string with escapes, control characters or
// invalid UTF-8 is decoded by encoding/json, which knows all the rules;
// the common case is one bulk check and one copy.
func (s *scanner) str() (string, bool) {
	if s.peek() != '"' {
		return "", false
	}
	end := s.stringEnd()
	if end < 0 {
		return "", false
	}
	tok := s.data[s.i : end+1]
	s.i = end + 1
	body := tok[1 : len(tok)-1]
	if bytes.IndexByte(body, '\\') < 0 && verbatimJSONString(body) {
		return string(body), true
	}
	var v string
	if unmarshal(tok, &v) != nil {
		return "", false
	}
	return v, true
}

func (s *scanner) strInto(dst *string) bool {
	v, ok := s.str()
	*dst = v
	return ok
}

// arrayInto decodes an array (or null) with encoding/json, after finding
// where it ends.
func (s *scanner) arrayInto(dst any) bool {
	start := s.i
	if s.peek() == 'n' {
		if !s.literal("null") {
			return false
		}
	} else if !s.skipArray() {
		return false
	}
	return unmarshal(s.data[start:s.i], dst) == nil
}

// skipArray moves past the array opening at s.i. It only needs to find
// the end of valid input; encoding/json validates the slice afterwards.
func (s *scanner) skipArray() bool {
	if s.peek() != '[' {
		return false
	}
	depth := 0
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				s.i++
				return true
			}
		case '"':
			end := s.stringEnd()
			if end < 0 {
				return false
			}
			s.i = end
		}
		s.i++
	}
	return false
}

const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// The word tests below look at eight bytes at once. For a word x,
// (x - lowBits*n) &^ x has the high bit of some byte set exactly when some
// byte is below n (n <= 128); with v = x ^ lowBits*b the same test for
// n = 1 finds a byte equal to b; and x's own high bits are the bytes that
// are not ASCII. The tests are OR-ed together so the loop has one branch
// per word.

// jsonSpecial has a byte's high bit set when some byte of x is a control
// character or not ASCII.
func jsonSpecial(x uint64) uint64 {
	return (x-lowBits*0x20)&^x | x
}

// verbatimJSONString reports whether body, which holds no backslash, reads
// as a JSON string body that decodes to itself: no control characters and
// valid UTF-8. It checks eight bytes at a time while they are ASCII.
func verbatimJSONString(body []byte) bool {
	i := 0
	for ; i+16 <= len(body); i += 16 {
		x := binary.LittleEndian.Uint64(body[i : i+8])
		y := binary.LittleEndian.Uint64(body[i+8 : i+16])
		if (jsonSpecial(x)|jsonSpecial(y))&highBits != 0 {
			break
		}
	}
	for j := i; j < len(body); j++ {
		if body[j] < 0x20 {
			return false
		}
	}
	return utf8.Valid(body[i:])
}

// needsNoEscape reports whether encoding/json would write s between
// quotes unchanged: printable ASCII other than the quote, the backslash
// and the three characters it escapes for HTML safety (<, >, &).
func needsNoEscape(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		// escapeMask, written out: the compiler would not inline it.
		x := load64(s[i : i+8])
		q := x ^ (lowBits * '"')
		b := x ^ (lowBits * '\\')
		l := x ^ (lowBits * '<')
		g := x ^ (lowBits * '>')
		a := x ^ (lowBits * '&')
		m := (x-lowBits*0x20)&^x | x |
			(q-lowBits)&^q | (b-lowBits)&^b | (l-lowBits)&^l | (g-lowBits)&^g | (a-lowBits)&^a
		if m&highBits != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c >= 0x80, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// load64 reads the eight bytes of s as a little-endian word; the compiler
// turns the shifts into one load, and the constant indices need no bounds
// checks.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// appendString appends s as a JSON string exactly as encoding/json writes
// it.
func appendString(dst []byte, s string) []byte {
	if needsNoEscape(s) {
		dst = append(dst, '"')
		dst = append(dst, s...)
		return append(dst, '"')
	}
	b, _ := marshal(s) // a string always marshals
	return append(dst, b...)
}

// appendJSON appends json.Marshal(v).
func appendJSON(dst []byte, v any) ([]byte, error) {
	b, err := marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// encodeResult renders r exactly as Encode's generic path would (same
// field order, omitempty rules and escaping), without the intermediate
// copy of a large body.
func encodeResult(r BrowserResult) ([]byte, error) {
	size := len(resultPrefix) + len(r.ID) + len(r.URL) + len(r.Title) + len(r.Error) + len(r.Image) + len(r.ImageMIMEType) + 128
	if r.Content != nil {
		size += len(*r.Content)
	}
	return appendResult(make([]byte, 0, size), r)
}

func appendResult(out []byte, r BrowserResult) ([]byte, error) {
	out = append(out, resultPrefix...)
	out = append(out, `,"id":`...)
	out = appendString(out, r.ID)
	out = append(out, `,"url":`...)
	out = appendString(out, r.URL)
	out = append(out, `,"title":`...)
	out = appendString(out, r.Title)
	out = append(out, `,"content":`...)
	if r.Content == nil {
		out = append(out, "null"...)
	} else {
		out = appendString(out, *r.Content)
	}
	out = append(out, `,"events":`...)
	var err error
	switch {
	case r.Events == nil: // as encoding/json writes a nil slice
		out = append(out, "null"...)
	case len(r.Events) == 0:
		out = append(out, "[]"...)
	default:
		if out, err = appendJSON(out, r.Events); err != nil {
			return nil, fmt.Errorf("encode %s: %w", BrowserResult{}.FrameType(), err)
		}
	}
	out = append(out, `,"error":`...)
	out = appendString(out, r.Error)
	if r.Image != "" {
		out = append(out, `,"image":`...)
		out = appendString(out, r.Image)
	}
	if r.ImageMIMEType != "" {
		out = append(out, `,"image_mime_type":`...)
		out = appendString(out, r.ImageMIMEType)
	}
	if len(r.Tabs) > 0 {
		out = append(out, `,"tabs":`...)
		if out, err = appendJSON(out, r.Tabs); err != nil {
			return nil, fmt.Errorf("encode %s: %w", BrowserResult{}.FrameType(), err)
		}
	}
	return append(out, '}'), nil
}
