// Package recording writes and reads recordings of bridge sessions in the
// format of testdata/opentask-1.12.1.jsonl: JSON lines of {"t": seconds, "dir":
// "ext->srv"|"srv->ext", "frame": {...}}, plus a "handshake" line with the
// upgrade request's headers and "event" lines for connections. Tokens never
// reach a recording. Replay plays a recording's extension side against a
// running infer and reports where infer's answers differ from the
// recorded ones.
package recording

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/sim"
)

// Entry is one line of a recording. Exactly one of Frame, Raw, Handshake
// and Event is set.
type Entry struct {
	// T is seconds since the recording started.
	T float64 `json:"t"`
	// Dir is the frame's direction (empty for events).
	Dir sim.Direction `json:"dir,omitempty"`
	// Frame is a well-formed frame.
	Frame json.RawMessage `json:"frame,omitempty"`
	// Raw is a message that is not a JSON object (a malformed frame).
	Raw string `json:"raw,omitempty"`
	// Handshake holds the upgrade request's headers, without secrets.
	Handshake map[string]string `json:"handshake,omitempty"`
	// Event marks a connection event: connected, disconnected, rejected.
	Event string `json:"event,omitempty"`
	// Line is the entry's line in its file (not written).
	Line int `json:"-"`
}

// Type is the frame's type, or "".
func (e Entry) Type() string {
	if len(e.Frame) == 0 {
		return ""
	}
	t, _ := wire.PeekType(e.Frame)
	return t
}

// Writer records a client's connection: it is a sim.Tap. Lines are
// written as they happen, so a crash loses nothing already seen. It is safe
// for concurrent use.
type Writer struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	err   error
}

var _ sim.Tap = (*Writer)(nil)

// NewWriter records to w from now on.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, start: time.Now()}
}

// Err is the first write error, if any.
func (r *Writer) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// secretHeaders never reach a recording.
var secretHeaders = map[string]bool{"Authorization": true, "Cookie": true, "Sec-Websocket-Key": true, "Proxy-Authorization": true}

// Handshake implements sim.Tap.
func (r *Writer) Handshake(h http.Header) {
	m := map[string]string{}
	for k, v := range h {
		if !secretHeaders[http.CanonicalHeaderKey(k)] && len(v) > 0 {
			m[k] = v[0]
		}
	}
	r.write(Entry{Dir: sim.ExtToSrv, Handshake: m})
}

// Frame implements sim.Tap. A browser_hello's token is replaced by
// sim.RedactedToken whatever the caller passed.
func (r *Writer) Frame(dir sim.Direction, data []byte) {
	e := Entry{Dir: dir}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(trimmed) {
		e.Frame = redactHello(trimmed)
	} else {
		e.Raw = string(data)
	}
	r.write(e)
}

// Event implements sim.Tap.
func (r *Writer) Event(name string) { r.write(Entry{Event: name}) }

func (r *Writer) write(e Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return
	}
	e.T = float64(time.Since(r.start).Milliseconds()) / 1000
	b, err := json.Marshal(e)
	if err != nil {
		r.err = err
		return
	}
	if _, err := r.w.Write(append(b, '\n')); err != nil {
		r.err = fmt.Errorf("write recording: %w", err)
	}
}

// redactHello blanks the token of a browser_hello.
func redactHello(frame []byte) []byte {
	if t, _ := wire.PeekType(frame); t != (wire.BrowserHello{}).FrameType() {
		return frame
	}
	var m map[string]any
	if json.Unmarshal(frame, &m) != nil {
		return frame
	}
	if _, ok := m["token"]; ok {
		m["token"] = sim.RedactedToken
	}
	b, err := json.Marshal(m)
	if err != nil {
		return frame
	}
	return b
}

// Create opens path for a new recording (mode 0600: recordings hold page
// text) and returns its Writer and the file to close.
func Create(path string) (*Writer, io.Closer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("create recording: %w", err)
	}
	return NewWriter(f), f, nil
}

// Read parses a recording. Blank lines are skipped; a line that is not a
// recording entry is an error naming its line.
func Read(r io.Reader) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(text, &e); err != nil {
			return nil, fmt.Errorf("line %d is not a recording entry: %w", line, err)
		}
		if e.Dir != "" && e.Dir != sim.ExtToSrv && e.Dir != sim.SrvToExt {
			return nil, fmt.Errorf("line %d: unknown direction %q (want ext->srv or srv->ext)", line, e.Dir)
		}
		if e.Dir != "" && len(e.Frame) == 0 && e.Raw == "" && e.Handshake == nil {
			return nil, fmt.Errorf("line %d: a %s line without a frame", line, e.Dir)
		}
		e.Line = line
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("the recording is empty")
	}
	return out, nil
}

// Load reads a recording file.
func Load(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open recording: %w", err)
	}
	defer f.Close()
	es, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return es, nil
}
