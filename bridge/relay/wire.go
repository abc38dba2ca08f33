package relay

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/infer-workspace/infer/session/browser"
)

// The protocol is newline-delimited JSON. A guest opens with a hello and
// the holder answers with a welcome (or a refusal); then the guest sends
// requests and cancels, and the holder sends replies and status pushes, in
// any order, matched by id.

// protocolVersion changes when a frame's meaning does; a holder refuses a
// guest of another version with a reason that says to restart one of them.
const protocolVersion = 1

// handshakeTimeout bounds the hello and the welcome, so a connection that
// never speaks cannot hold a goroutine. Tests shorten it.
var handshakeTimeout = 5 * time.Second

// maxHello bounds the hello line: a token and a version.
const maxHello = 4096

// maxFrame bounds every later frame. A screenshot is a few MB, a third more
// in base64; nothing legitimate comes near this, and nothing larger is ever
// read into memory.
const maxFrame = 32 << 20

// writeTimeout bounds one frame's write: a peer that stops reading for
// this long is dropped rather than holding its writers forever.
const writeTimeout = 30 * time.Second

// errFrameTooBig is returned by readFrame for a line longer than its limit.
var errFrameTooBig = fmt.Errorf("a frame is longer than the relay allows (%d MiB)", maxFrame>>20)

// hello is a guest's first line.
type hello struct {
	Token   string `json:"token"`
	Version int    `json:"version"`
}

// welcome is the holder's answer to a hello: OK with who it is and the
// browser's status, or the reason it refused.
type welcome struct {
	OK      bool            `json:"ok"`
	Version int             `json:"version,omitempty"`
	Error   string          `json:"error,omitempty"`
	Holder  *Holder         `json:"holder,omitempty"`
	Status  *browser.Status `json:"status,omitempty"`
}

// request is a guest's frame: a command to run, or the cancel of one in
// flight (the guest's context ended).
type request struct {
	ID     uint64           `json:"id"`
	Cmd    *browser.Command `json:"cmd,omitempty"`
	Cancel bool             `json:"cancel,omitempty"`
}

// reply is a holder's frame: the outcome of request ID, or a status push.
type reply struct {
	ID     uint64          `json:"id,omitempty"`
	Result *browser.Result `json:"result,omitempty"`
	Error  *wireError      `json:"error,omitempty"`
	Status *browser.Status `json:"status,omitempty"`
}

// wireError carries a holder's error so that the guest can rebuild one
// that errors.Is and errors.As treat as the holder's own, with the same
// message.
type wireError struct {
	// Message is the error's whole text.
	Message string `json:"message"`
	// Kinds name the sentinels the error matches (see sentinels).
	Kinds []string `json:"kinds,omitempty"`
	// Command is set when the error is or wraps a *browser.CommandError.
	Command *browser.CommandError `json:"command,omitempty"`
}

// sentinels are the errors a guest can test for, by the names the wire
// uses. A name a guest does not know (a newer holder's) is ignored: the
// message still says what happened.
var sentinels = []struct {
	name string
	err  error
}{
	{"not_connected", browser.ErrNotConnected},
	{"disconnected", browser.ErrDisconnected},
	{"timeout", browser.ErrTimeout},
	{"flapping", browser.ErrFlapping},
	{"canceled", context.Canceled},
	{"deadline", context.DeadlineExceeded},
}

// encodeError describes err for the wire.
func encodeError(err error) *wireError {
	we := &wireError{Message: err.Error()}
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			we.Kinds = append(we.Kinds, s.name)
		}
	}
	var ce *browser.CommandError
	if errors.As(err, &ce) {
		we.Command = &browser.CommandError{Action: ce.Action, Message: ce.Message}
	}
	return we
}

// decodeError rebuilds the holder's error: the sentinel or CommandError
// itself when that is all it was, else an error with the holder's message
// that matches all of them.
func decodeError(we *wireError) error {
	var wraps []error
	for _, k := range we.Kinds {
		for _, s := range sentinels {
			if s.name == k {
				wraps = append(wraps, s.err)
			}
		}
	}
	if we.Command != nil {
		ce := &browser.CommandError{Action: we.Command.Action, Message: we.Command.Message}
		if len(wraps) == 0 && ce.Error() == we.Message {
			return ce
		}
		wraps = append(wraps, ce)
	}
	if len(wraps) == 1 && wraps[0].Error() == we.Message {
		return wraps[0]
	}
	return &relayedError{msg: we.Message, wraps: wraps}
}

// relayedError is a holder's error as the guest sees it.
type relayedError struct {
	msg   string
	wraps []error
}

func (e *relayedError) Error() string   { return e.msg }
func (e *relayedError) Unwrap() []error { return e.wraps }

// readFrame reads one line of at most limit bytes, without its newline.
// It never holds more than limit bytes, however long the line.
func readFrame(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > limit+1 {
			return nil, errFrameTooBig
		}
		switch {
		case err == nil:
			if line == nil {
				return chunk[:len(chunk)-1], nil
			}
			line = append(line, chunk...)
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			line = append(line, chunk...)
		case errors.Is(err, io.EOF) && len(line)+len(chunk) > 0:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// marshalFrame encodes v as one line, or says it is too big to send.
func marshalFrame(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(b) > maxFrame {
		return nil, fmt.Errorf("%w: %d MiB", errFrameTooBig, len(b)>>20)
	}
	return append(b, '\n'), nil
}
