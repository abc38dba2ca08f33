package store

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"time"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
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
	// inPlace makes decoded strings share the memory of the bytes being
	// decoded instead of copying each one: resuming a long conversation
	// then allocates nothing per string. A string without escapes is its
	// own bytes; an escaped one is unescaped into scratch while parsing
	// and written over its own raw text, which is never shorter, by commit
	// once the whole record has parsed. A record the fast path
	// gives up on thus reaches encoding/json untouched. Only a caller that
	// owns the bytes and never reads them as JSON again may set it.
	inPlace bool
	fixups  []fixup
	// The last timestamp parsed, quoted as in the input (lastRaw[:lastLen],
	// in an array so that caching allocates nothing), and its value: every
	// record of one append carries the same time, so most are decoded once.
	lastRaw  [40]byte
	lastLen  int
	lastTime time.Time
}

// fixup is an escaped string of the current record awaiting commit: its
// decoded bytes are scratch[from:from+n], to be written at line[at:] and
// stored in the field named by field (and call, for a tool call's).
type fixup struct {
	field   stringField
	call    int
	at      int
	from, n int
}

// stringField names a record string that may hold escapes.
type stringField uint8

const (
	fieldNone stringField = iota
	fieldRecordToolCallID
	fieldContent
	fieldToolCallID
	fieldReasoning
	fieldCallID
	fieldCallName
	fieldCallArguments
)

// record parses the record at the start of line into r and reports
// whether it could; d.pos is then just past it. A record never spans a
// line end (a newline is a control character inside a string and a syntax
// error outside one), and line should stop at it: an escaped string
// reserves scratch room for the rest of line.
func (d *fastDecoder) record(line []byte, r *record) bool {
	d.line, d.pos = line, 0
	d.scratch, d.fixups = d.scratch[:0], d.fixups[:0]
	*r = record{}
	if !d.consume('{') {
		return false
	}
	var seen uint8
	for {
		var bit uint8
		ok := true
		switch {
		case d.literal(`"kind":`):
			bit = 1
			switch {
			case d.literal(`"` + kindMessage + `"`):
				r.Kind = kindMessage
			case d.literal(`"` + kindToolResult + `"`):
				r.Kind = kindToolResult
			default:
				return false
			}
		case d.literal(`"at":`):
			bit = 2
			if r.At, ok = d.time(); !ok {
				return false
			}
		case d.literal(`"message":`):
			bit = 4
			if !d.message(&d.msg) {
				return false
			}
			r.Message = &d.msg
		case d.literal(`"tool_call_id":`):
			bit = 8
			if r.ToolCallID, ok = d.text(fieldRecordToolCallID, 0); !ok {
				return false
			}
		case d.literal(`"ok":`):
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
		key, ok := d.key()
		if !ok {
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
			m.Title, ok = d.text(fieldNone, 0)
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
		case "jsonl_tail":
			bit = 512
			var n int64
			n, ok = d.integer()
			ok = ok && n <= math.MaxUint32
			m.Tail = uint32(n)
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
	if d.lastLen > 0 && d.literal(string(d.lastRaw[:d.lastLen])) {
		return d.lastTime, true
	}
	start := d.pos
	raw, ok := d.plainString()
	if !ok {
		return time.Time{}, false
	}
	t, ok := parseUTC(raw)
	if !ok && t.UnmarshalText(raw) == nil {
		ok = true
	}
	if quoted := d.line[start:d.pos]; ok && len(quoted) <= len(d.lastRaw) {
		d.lastLen, d.lastTime = copy(d.lastRaw[:], quoted), t
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
		var bit uint8
		ok := true
		switch {
		case d.literal(`"role":`):
			bit = 1
			switch {
			case d.literal(`"` + RoleUser + `"`):
				m.Role = RoleUser
			case d.literal(`"` + RoleAssistant + `"`):
				m.Role = RoleAssistant
			case d.literal(`"` + RoleTool + `"`):
				m.Role = RoleTool
			case d.literal(`"` + RoleSystem + `"`):
				m.Role = RoleSystem
			default:
				raw, ok := d.plainString()
				if !ok {
					return false
				}
				m.Role = string(raw)
			}
		case d.literal(`"content":`):
			bit = 2
			m.Content, ok = d.text(fieldContent, 0)
		case d.literal(`"tool_calls":`):
			bit = 4
			m.ToolCalls, ok = d.toolCalls()
		case d.literal(`"tool_call_id":`):
			bit = 8
			m.ToolCallID, ok = d.text(fieldToolCallID, 0)
		case d.literal(`"reasoning":`):
			bit = 16
			m.Reasoning, ok = d.text(fieldReasoning, 0)
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
		if !d.toolCall(&tc, len(calls)) {
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

// toolCall parses the call'th tool call of the message into tc.
func (d *fastDecoder) toolCall(tc *ToolCall, call int) bool {
	if !d.consume('{') {
		return false
	}
	var seen uint8
	for {
		var bit uint8
		ok := true
		switch {
		case d.literal(`"id":`):
			bit = 1
			tc.ID, ok = d.text(fieldCallID, call)
		case d.literal(`"type":`):
			bit = 2
			if d.literal(`"function"`) {
				tc.Type = "function"
			} else {
				var raw []byte
				if raw, ok = d.plainString(); ok {
					tc.Type = string(raw)
				}
			}
		case d.literal(`"function":`):
			bit = 4
			ok = d.function(&tc.Function, call)
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

func (d *fastDecoder) function(f *FunctionCall, call int) bool {
	if !d.consume('{') {
		return false
	}
	var seen uint8
	for {
		var bit uint8
		ok := true
		switch {
		case d.literal(`"name":`):
			bit = 1
			f.Name, ok = d.text(fieldCallName, call)
		case d.literal(`"arguments":`):
			bit = 2
			f.Arguments, ok = d.text(fieldCallArguments, call)
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
	switch {
	case d.literal("true"):
		return true, true
	case d.literal("false"):
		return false, true
	}
	return false, false
}

// literal consumes lit if the input continues with it.
func (d *fastDecoder) literal(lit string) bool {
	if len(d.line)-d.pos >= len(lit) && string(d.line[d.pos:d.pos+len(lit)]) == lit {
		d.pos += len(lit)
		return true
	}
	return false
}

// key reads an object key and its colon. Keys the fast path knows are
// short and plain, so it looks at one byte at a time.
func (d *fastDecoder) key() ([]byte, bool) {
	s := d.line
	i := d.pos
	if i == len(s) || s[i] != '"' {
		return nil, false
	}
	for i++; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			if i+1 == len(s) || s[i+1] != ':' {
				return nil, false
			}
			key := s[d.pos+1 : i]
			d.pos = i + 2
			return key, true
		}
		if special(c) {
			return nil, false
		}
	}
	return nil, false
}

// plainString returns the bytes of a string without escapes or non-ASCII
// characters, in place: keys and the short enumerated values.
func (d *fastDecoder) plainString() ([]byte, bool) {
	if !d.consume('"') {
		return nil, false
	}
	start := d.pos
	i := skipOrdinary(d.line, start)
	if i == len(d.line) || d.line[i] != '"' {
		return nil, false
	}
	d.pos = i + 1
	return d.line[start:i], true
}

// text decodes a string value, unescaping it as encoding/json does. field
// and call say where the caller stores it, for commit.
func (d *fastDecoder) text(field stringField, call int) (string, bool) {
	if !d.consume('"') {
		return "", false
	}
	s := d.line
	start := d.pos
	i := start
	for {
		if i = skipOrdinary(s, i); i == len(s) {
			return "", false
		}
		c := s[i]
		if c == '"' {
			break
		}
		if c == '\\' {
			return d.escaped(start, i, field, call)
		}
		n := runeLen(s[i:])
		if n == 0 {
			return "", false // a raw control character or invalid UTF-8
		}
		i += n
	}
	d.pos = i + 1
	if i == start {
		return "", true
	}
	if d.inPlace {
		return unsafe.String(&s[start], i-start), true
	}
	return string(s[start:i]), true
}

// simpleEscapes maps the letter of each two-byte JSON escape to the byte
// it stands for; zero marks the others.
var simpleEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// escaped finishes text for a string with an escape: s[start:i] is its
// first run, already checked, and s[i] a backslash.
func (d *fastDecoder) escaped(start, i int, field stringField, call int) (string, bool) {
	s := d.line
	from := len(d.scratch)
	// Decoded text is never longer than its source, so this much room
	// past from lets unescape store whole words without checks.
	if need := from + len(s) - start + 8; cap(d.scratch) < need {
		d.scratch = slices.Grow(d.scratch, need-from)
	}
	out := d.scratch[:cap(d.scratch)]
	w := from + copy(out[from:], s[start:i])
	i, w = unescapeRest(s, out, i, w)
	if i < 0 {
		return "", false
	}
	d.pos = i + 1
	if !d.inPlace || field == fieldNone {
		d.scratch = out[:from]
		return string(out[from:w]), true
	}
	d.scratch = out[:w]
	d.fixups = append(d.fixups, fixup{field: field, call: call, at: start, from: from, n: w - from})
	return "", true
}

// unescapeRest decodes the rest of a string, from s[i] (a byte special
// reports) to its closing quote, onto out[:w], and returns the quote's
// index and the output's new length; i is -1 if the string is not one the
// fast path takes. out must have room for len(s)-i+8 bytes past w, which
// spares checks for room; stores are still bounds-checked, so a broken
// promise panics instead of writing past out.
//
// It works a word at a time: each eight-byte word is copied whole and the
// output advanced only past its ordinary bytes, so the runs between
// escapes, short in text full of quotes and line breaks, cost no separate
// copy.
func unescapeRest(s, out []byte, i, w int) (int, int) {
	n := len(s)
	src := unsafe.Pointer(unsafe.SliceData(s))
	for {
		// Here i < n and s[i] is a byte special reports.
		c := s[i]
		switch {
		case c == '\\':
			if i+1 == n {
				return -1, w
			}
			if e := simpleEscapes[s[i+1]]; e != 0 {
				out[w] = e
				w, i = w+1, i+2
				break
			}
			u, k := unescape(out[:w], s[i:])
			if k == 0 {
				return -1, w
			}
			w, i = len(u), i+k
		case c == '"':
			return i, w
		default:
			k := runeLen(s[i:])
			if k == 0 {
				return -1, w
			}
			// Copied with the run that follows: the word loop below
			// starts at the character.
			if i+8 > n {
				copy(out[w:], s[i:i+k])
				w, i = w+k, i+k
			} else {
				binary.LittleEndian.PutUint64(out[w:], load64(src, i))
				w, i = w+k, i+k
			}
		}
		for i+8 <= n {
			v := load64(src, i)
			binary.LittleEndian.PutUint64(out[w:], v)
			if m := specialBytes(v); m != 0 {
				k := bits.TrailingZeros64(m) >> 3
				w, i = w+k, i+k
				break
			}
			w, i = w+8, i+8
		}
		if i+8 > n {
			for i < n && !special(s[i]) {
				out[w] = s[i]
				w, i = w+1, i+1
			}
			if i == n {
				return -1, w
			}
		}
	}
}

// load64 reads the eight bytes at p+i, which the caller has checked are
// in bounds; converting to an array pointer spares a bounds check per word.
func load64(p unsafe.Pointer, i int) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, i))[:])
}

// special reports whether c needs a closer look inside a string: a quote,
// a backslash, a control character or a byte of a multi-byte character.
func special(c byte) bool {
	return c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf
}

// specialBytes sets the high bit of each byte of v that special reports.
// Borrows can mark bytes after the first match too, never before it, so
// the lowest set bit is exact.
func specialBytes(v uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := v ^ (ones * '"')
	b := v ^ (ones * '\\')
	return ((q - ones) | (b - ones) | (v - ones*0x20) | v) & highs
}

// runeLen returns the length of the valid UTF-8 encoding of a non-ASCII
// character at the start of s, or 0 if there is none: exactly when
// utf8.DecodeRune would report an error, which encoding/json would turn
// into U+FFFD.
func runeLen(s []byte) int {
	const lo, hi = 0x80, 0xBF // the range of continuation bytes
	c := s[0]
	switch {
	case c < 0xC2:
		return 0 // ASCII, a continuation byte or an overlong lead
	case c < 0xE0:
		if len(s) >= 2 && s[1]&0xC0 == 0x80 {
			return 2
		}
	case c < 0xF0:
		first, last := byte(lo), byte(hi)
		switch c {
		case 0xE0:
			first = 0xA0 // shorter forms are overlong
		case 0xED:
			last = 0x9F // above are the UTF-16 surrogates
		}
		if len(s) >= 3 && first <= s[1] && s[1] <= last && s[2]&0xC0 == 0x80 {
			return 3
		}
	case c < 0xF5:
		first, last := byte(lo), byte(hi)
		switch c {
		case 0xF0:
			first = 0x90 // shorter forms are overlong
		case 0xF4:
			last = 0x8F // above is past U+10FFFF
		}
		if len(s) >= 4 && first <= s[1] && s[1] <= last && s[2]&0xC0 == 0x80 && s[3]&0xC0 == 0x80 {
			return 4
		}
	}
	return 0
}

// commit finishes a record the fast path accepted: each escaped string's
// decoded bytes are written over its raw text, which they never outgrow,
// and the string made from them. Nothing writes those bytes afterwards,
// which is what makes the strings immutable.
func (d *fastDecoder) commit(r *record) {
	for _, f := range d.fixups {
		dst := d.line[f.at : f.at+f.n]
		copy(dst, d.scratch[f.from:])
		*d.target(r, f) = unsafe.String(&dst[0], f.n)
	}
	d.fixups = d.fixups[:0]
}

// target is the field a fixup fills.
func (d *fastDecoder) target(r *record, f fixup) *string {
	switch f.field {
	case fieldRecordToolCallID:
		return &r.ToolCallID
	case fieldContent:
		return &d.msg.Content
	case fieldToolCallID:
		return &d.msg.ToolCallID
	case fieldReasoning:
		return &d.msg.Reasoning
	case fieldCallID:
		return &d.msg.ToolCalls[f.call].ID
	case fieldCallName:
		return &d.msg.ToolCalls[f.call].Function.Name
	case fieldCallArguments:
		return &d.msg.ToolCalls[f.call].Function.Arguments
	}
	panic("store: fixup without a field")
}

// skipOrdinary returns the index of the first byte at or after i in s that
// special reports, or len(s). It looks at sixteen bytes at a time.
func skipOrdinary(s []byte, i int) int {
	p := unsafe.Pointer(unsafe.SliceData(s))
	for ; i+16 <= len(s); i += 16 {
		a, b := specialBytes(load64(p, i)), specialBytes(load64(p, i+8))
		if a|b != 0 {
			if a != 0 {
				return i + bits.TrailingZeros64(a)>>3
			}
			return i + 8 + bits.TrailingZeros64(b)>>3
		}
	}
	for i < len(s) && !special(s[i]) {
		i++
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
