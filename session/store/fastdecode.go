package store

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// fastDecoder parses the two records that make up nearly every line of a
// transcript, "message" and "tool_result", in exactly the compact form
// encodeRecords writes them. Resuming a long conversation is dominated by
// decoding, and encoding/json's reflective decoder runs about fifty times
// slower than reading the file.
//
// It is a fast path, not a second parser of record: any line it does not
// fully recognise (another kind, whitespace between tokens, an unknown or
// repeated key, a null, invalid UTF-8, a raw control character) is left to
// encoding/json, so the two always agree. FuzzFastDecoder checks that.
type fastDecoder struct {
	line    []byte
	pos     int
	scratch []byte  // unescaped string bytes, reused
	msg     Message // the decoded message; state.apply copies it
	ok      bool
	// id, when set, is the conversation id expected in a summary; reusing
	// it saves allocating the same string once per listed conversation.
	id string
	// arena, when set, holds the text of every decoded string, which are
	// then substrings of it: one allocation for a whole conversation
	// instead of one per string. A strings.Builder only ever appends, so
	// substrings of what it returned stay valid as it grows.
	arena *strings.Builder
}

// record parses the record at the start of line into r and reports
// whether it could; d.pos is then just past it. line may run on past the
// record: a newline is a control character inside a string and a syntax
// error outside one, so the parse can never succeed across a line end.
func (d *fastDecoder) record(line []byte, r *record) bool {
	d.line, d.pos = line, 0
	*r = record{}
	if !d.consume('{') {
		return false
	}
	var seen uint8
	for {
		key, ok := d.plainString()
		if !ok || !d.consume(':') {
			return false
		}
		var bit uint8
		switch string(key) {
		case "kind":
			bit = 1
			raw, ok := d.plainString()
			if !ok {
				return false
			}
			switch string(raw) {
			case kindMessage:
				r.Kind = kindMessage
			case kindToolResult:
				r.Kind = kindToolResult
			default:
				return false
			}
		case "at":
			bit = 2
			if r.At, ok = d.time(); !ok {
				return false
			}
		case "message":
			bit = 4
			if !d.message(&d.msg) {
				return false
			}
			r.Message = &d.msg
		case "tool_call_id":
			bit = 8
			if r.ToolCallID, ok = d.text(); !ok {
				return false
			}
		case "ok":
			bit = 16
			if d.ok, ok = d.boolean(); !ok {
				return false
			}
			r.OK = &d.ok
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		if d.consume('}') {
			return true
		}
		if !d.consume(',') {
			return false
		}
	}
}

// meta parses a summary file's object into m, in the key order and form
// writeMeta produces; anything else is refused.
func (d *fastDecoder) meta(line []byte, m *metaFile) bool {
	d.line, d.pos = line, 0
	*m = metaFile{}
	if !d.consume('{') {
		return false
	}
	var seen uint16
	for {
		key, ok := d.plainString()
		if !ok || !d.consume(':') {
			return false
		}
		var bit uint16
		switch string(key) {
		case "version":
			bit = 1
			var n int64
			n, ok = d.integer()
			m.Version = int(n)
		case "id":
			bit = 2
			var raw []byte
			if raw, ok = d.plainString(); ok {
				m.ID = d.internID(raw)
			}
		case "title":
			bit = 4
			m.Title, ok = d.text()
		case "title_source":
			bit = 8
			var raw []byte
			if raw, ok = d.plainString(); ok {
				switch string(raw) {
				case TitlePreview:
					m.TitleSource = TitlePreview
				case TitleGenerated:
					m.TitleSource = TitleGenerated
				case TitleUser:
					m.TitleSource = TitleUser
				default:
					m.TitleSource = string(raw)
				}
			}
		case "created_at":
			bit = 16
			m.CreatedAt, ok = d.time()
		case "updated_at":
			bit = 32
			m.UpdatedAt, ok = d.time()
		case "message_count":
			bit = 64
			var n int64
			n, ok = d.integer()
			m.MessageCount = int(n)
		case "pinned":
			bit = 128
			m.Pinned, ok = d.boolean()
		case "jsonl_size":
			bit = 256
			m.Size, ok = d.integer()
		default:
			return false
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if d.consume('}') {
			return true
		}
		if !d.consume(',') {
			return false
		}
	}
}

// internID returns the expected id for matching bytes.
func (d *fastDecoder) internID(raw []byte) string {
	if string(raw) == d.id {
		return d.id
	}
	return string(raw)
}

// time parses a timestamp string.
func (d *fastDecoder) time() (time.Time, bool) {
	raw, ok := d.plainString()
	if !ok {
		return time.Time{}, false
	}
	t, ok := parseUTC(raw)
	if !ok && t.UnmarshalText(raw) == nil {
		ok = true
	}
	return t, ok
}

// integer parses a non-negative integer without sign, fraction or exponent
// and small enough not to overflow.
func (d *fastDecoder) integer() (int64, bool) {
	start := d.pos
	var n int64
	for d.pos < len(d.line) && d.pos-start < 18 {
		c := d.line[d.pos]
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
		d.pos++
	}
	digits := d.pos - start
	if digits == 0 || digits > 1 && d.line[start] == '0' {
		return 0, false
	}
	if d.pos < len(d.line) {
		switch d.line[d.pos] {
		case '.', 'e', 'E', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			return 0, false
		}
	}
	return n, true
}

func (d *fastDecoder) message(m *Message) bool {
	*m = Message{}
	if !d.consume('{') {
		return false
	}
	var seen uint8
	for {
		key, ok := d.plainString()
		if !ok || !d.consume(':') {
			return false
		}
		var bit uint8
		switch string(key) {
		case "role":
			bit = 1
			raw, ok := d.plainString()
			if !ok {
				return false
			}
			switch string(raw) {
			case RoleUser:
				m.Role = RoleUser
			case RoleAssistant:
				m.Role = RoleAssistant
			case RoleTool:
				m.Role = RoleTool
			case RoleSystem:
				m.Role = RoleSystem
			default:
				m.Role = string(raw)
			}
		case "content":
			bit = 2
			m.Content, ok = d.text()
		case "tool_calls":
			bit = 4
			m.ToolCalls, ok = d.toolCalls()
		case "tool_call_id":
			bit = 8
			m.ToolCallID, ok = d.text()
		case "reasoning":
			bit = 16
			m.Reasoning, ok = d.text()
		default:
			return false
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if d.consume('}') {
			return true
		}
		if !d.consume(',') {
			return false
		}
	}
}

func (d *fastDecoder) toolCalls() ([]ToolCall, bool) {
	if !d.consume('[') {
		return nil, false
	}
	calls := []ToolCall{}
	if d.consume(']') {
		return calls, true
	}
	for {
		var tc ToolCall
		if !d.toolCall(&tc) {
			return nil, false
		}
		calls = append(calls, tc)
		if d.consume(']') {
			return calls, true
		}
		if !d.consume(',') {
			return nil, false
		}
	}
}

func (d *fastDecoder) toolCall(tc *ToolCall) bool {
	if !d.consume('{') {
		return false
	}
	var seen uint8
	for {
		key, ok := d.plainString()
		if !ok || !d.consume(':') {
			return false
		}
		var bit uint8
		switch string(key) {
		case "id":
			bit = 1
			tc.ID, ok = d.text()
		case "type":
			bit = 2
			var raw []byte
			if raw, ok = d.plainString(); ok {
				if string(raw) == "function" {
					tc.Type = "function"
				} else {
					tc.Type = string(raw)
				}
			}
		case "function":
			bit = 4
			ok = d.function(&tc.Function)
		default:
			return false
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if d.consume('}') {
			return true
		}
		if !d.consume(',') {
			return false
		}
	}
}

func (d *fastDecoder) function(f *FunctionCall) bool {
	if !d.consume('{') {
		return false
	}
	var seen uint8
	for {
		key, ok := d.plainString()
		if !ok || !d.consume(':') {
			return false
		}
		var bit uint8
		switch string(key) {
		case "name":
			bit = 1
			f.Name, ok = d.text()
		case "arguments":
			bit = 2
			f.Arguments, ok = d.text()
		default:
			return false
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if d.consume('}') {
			return true
		}
		if !d.consume(',') {
			return false
		}
	}
}

func (d *fastDecoder) consume(c byte) bool {
	if d.pos < len(d.line) && d.line[d.pos] == c {
		d.pos++
		return true
	}
	return false
}

func (d *fastDecoder) boolean() (bool, bool) {
	rest := d.line[d.pos:]
	switch {
	case bytes.HasPrefix(rest, []byte("true")):
		d.pos += 4
		return true, true
	case bytes.HasPrefix(rest, []byte("false")):
		d.pos += 5
		return false, true
	}
	return false, false
}

// plainString returns the bytes of a string without escapes or non-ASCII
// characters, in place: keys and the short enumerated values.
func (d *fastDecoder) plainString() ([]byte, bool) {
	if !d.consume('"') {
		return nil, false
	}
	start := d.pos
	i := nextSpecial(d.line, start)
	if i == len(d.line) || d.line[i] != '"' {
		return nil, false
	}
	d.pos = i + 1
	return d.line[start:i], true
}

// text decodes a string value in one pass, unescaping it as encoding/json
// does; the scan skips eight ordinary bytes at a time.
func (d *fastDecoder) text() (string, bool) {
	if !d.consume('"') {
		return "", false
	}
	s := d.line
	start, i := d.pos, d.pos
	escaped := false
	out := d.scratch[:0]
	for {
		i = nextSpecial(s, i)
		if i == len(s) {
			return "", false
		}
		switch c := s[i]; {
		case c == '"':
			d.pos = i + 1
			if !escaped {
				return d.intern(s[start:i]), true
			}
			out = append(out, s[start:i]...)
			d.scratch = out
			return d.intern(out), true
		case c == '\\':
			escaped = true
			out = append(out, s[start:i]...)
			var n int
			if out, n = unescape(out, s[i:]); n == 0 {
				return "", false
			}
			i += n
			start = i
		case c < 0x20:
			return "", false
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			i += size
		}
	}
}

// intern turns decoded bytes into a string, in the arena when there is one.
func (d *fastDecoder) intern(b []byte) string {
	if d.arena == nil || len(b) == 0 {
		return string(b)
	}
	start := d.arena.Len()
	d.arena.Write(b)
	return d.arena.String()[start:]
}

// nextSpecial returns the index of the first byte at or after i in s that
// needs a closer look inside a JSON string (a quote, a backslash, a control
// character or a non-ASCII byte), or len(s).
func nextSpecial(s []byte, i int) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(s); i += 8 {
		v := binary.LittleEndian.Uint64(s[i:])
		q := v ^ (ones * '"')
		b := v ^ (ones * '\\')
		// Each term sets the high bit of a matching byte; borrows can mark
		// bytes after the first match too, never before it.
		m := ((q-ones)&^q | (b-ones)&^b | (v-ones*0x20)&^v | v) & highs
		if m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			return i
		}
	}
	return i
}

// unescape decodes the escape at the start of s onto out and returns its
// length, or 0 if it is not a JSON escape. Lone surrogates become U+FFFD,
// as in encoding/json.
func unescape(out, s []byte) ([]byte, int) {
	if len(s) < 2 {
		return out, 0
	}
	switch s[1] {
	case '"', '\\', '/':
		return append(out, s[1]), 2
	case 'b':
		return append(out, '\b'), 2
	case 'f':
		return append(out, '\f'), 2
	case 'n':
		return append(out, '\n'), 2
	case 'r':
		return append(out, '\r'), 2
	case 't':
		return append(out, '\t'), 2
	case 'u':
		r := hex4(s)
		if r < 0 {
			return out, 0
		}
		if !utf16.IsSurrogate(r) {
			return utf8.AppendRune(out, r), 6
		}
		if len(s) >= 12 {
			if r2 := hex4(s[6:]); r2 >= 0 {
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					return utf8.AppendRune(out, dec), 12
				}
			}
		}
		return utf8.AppendRune(out, utf8.RuneError), 6
	}
	return out, 0
}

// hex4 reads the code unit of a \uXXXX escape, or -1.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// parseUTC parses the one timestamp form the store writes,
// "2006-01-02T15:04:05.999999999Z", about five times faster than
// time.Parse. Anything else (offsets, out-of-range fields) is refused and
// left to the strict parser.
func parseUTC(s []byte) (time.Time, bool) {
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[len(s)-1] != 'Z' {
		return time.Time{}, false
	}
	num := func(b []byte) int {
		n := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day := num(s[0:4]), num(s[5:7]), num(s[8:10])
	hour, minute, sec := num(s[11:13]), num(s[14:16]), num(s[17:19])
	if year < 0 || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return time.Time{}, false
	}
	nsec := 0
	switch frac := s[19 : len(s)-1]; {
	case len(frac) == 0:
	case len(frac) < 2 || len(frac) > 10 || frac[0] != '.':
		return time.Time{}, false
	default:
		if nsec = num(frac[1:]); nsec < 0 {
			return time.Time{}, false
		}
		for range 10 - len(frac) {
			nsec *= 10
		}
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC), true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}
