package store

import (
	"bytes"
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// damage describes the unreadable lines found while reading a file.
type damage struct {
	skipped   int   // unreadable lines before the last one
	firstLine int   // line number of the first of them
	firstErr  error // why it was unreadable
	torn      bool  // the last line had no newline and did not parse
}

// lines counts every line that was ignored.
func (d damage) lines() int {
	if d.torn {
		return d.skipped + 1
	}
	return d.skipped
}

// describe renders the damage as a warning about file, or nil when there is
// none.
func (d damage) describe(file string) error {
	switch {
	case d.skipped > 0 && d.torn:
		return fmt.Errorf("%s: skipped %d unreadable line(s) (first at line %d: %v) and an incomplete last line left by an interrupted write", file, d.skipped, d.firstLine, d.firstErr)
	case d.skipped > 0:
		return fmt.Errorf("%s: skipped %d unreadable line(s) (first at line %d: %v)", file, d.skipped, d.firstLine, d.firstErr)
	case d.torn:
		return fmt.Errorf("%s: ignored an incomplete last line left by an interrupted write", file)
	}
	return nil
}

// decodeRecords folds every readable line of data into st. A line that is
// not a valid record is counted and skipped, never fatal: one bad line (a
// stray edit, a disk hiccup) must not cost the rest of the conversation. The
// last line may lack its newline after a crash; it is used if it parses.
func decodeRecords(data []byte, st *state) damage {
	var d damage
	if st.keep && st.messages == nil {
		// Nearly every line is a message; sizing once avoids regrowing a
		// large slice while resuming a long conversation.
		st.messages = make([]Message, 0, bytes.Count(data, []byte{'\n'})+1)
	}
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
	return d
}

// note records an unreadable line n; an unterminated one is the torn
// tail a crash leaves.
func (d *damage) note(n int, terminated bool, err error) {
	if !terminated {
		d.torn = true
		return
	}
	if d.skipped == 0 {
		d.firstLine, d.firstErr = n, err
	}
	d.skipped++
}

// decodeRecord parses one line and folds it into st.
func decodeRecord(line []byte, st *state) error {
	var r record
	if err := unmarshal(line, &r); err != nil {
		return err
	}
	if !st.apply(&r) {
		return fmt.Errorf("%s record without its data", r.Kind)
	}
	return nil
}

// readOptions make the store's reading as forgiving as encoding/json's was,
// where that saves a person's text: a string with invalid UTF-8 (a
// corrupted byte, a careless edit) loads with U+FFFD in its place instead
// of costing its whole line, and a repeated key is read, the later value
// winning, instead of failing the line. Keys match exactly, as the store
// writes them (encoding/json also took them in any case).
var readOptions = jsonv2.JoinOptions(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))

// unmarshal decodes the JSON value data, and nothing after it, into v. It
// uses JSON v2 (github.com/go-json-experiment/json), not encoding/json:
// on a long conversation's lines it decodes more than twice as fast, and
// decoding is most of what resuming costs (docs/performance.md).
func unmarshal(data []byte, v any) error {
	return jsonv2.Unmarshal(data, v, readOptions)
}
