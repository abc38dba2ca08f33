// Package wire defines the frames of the browser-extension bridge protocol
// (docs/protocol.md) and their lenient decoding.
//
// It is the single vocabulary shared by the bridge server and the extension
// simulator, so both sides agree on every field name by construction.
// Decoding follows the contract's forward-compatibility rule: a frame of an
// unknown type decodes to Unknown and is meant to be ignored, while a known
// frame whose fields have the wrong JSON types is an error, so callers never
// act on a half-understood frame.
package wire

import (
	"bytes"
	"errors"
	"fmt"
)

// ErrMalformed wraps every decoding failure, so callers can tell a bad frame
// (log and drop) from a transport failure.
var ErrMalformed = errors.New("malformed frame")

// PeekType returns a frame's type discriminator without decoding the rest.
func PeekType(data []byte) (string, error) {
	var head struct {
		Type *string `json:"type"`
	}
	if err := unmarshal(data, &head); err != nil {
		return "", fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if head.Type == nil {
		return "", fmt.Errorf("%w: no \"type\" field", ErrMalformed)
	}
	return *head.Type, nil
}

// Decode parses one frame. Unknown types decode to Unknown with a nil error;
// invalid JSON, a missing or non-string type, and known frames whose fields
// have the wrong JSON types are errors wrapping ErrMalformed. Frames read
// as encoding/json reads them (codec.go); a browser_result usually takes a
// one-pass path (fast.go) that yields exactly the same.
func Decode(data []byte) (Frame, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	if r, ok := decodeResultFast(data); ok {
		return r, nil
	}
	return decodeGeneric(data)
}

// decodeGeneric is Decode through the library alone (codec.go), for every
// frame the fast path leaves alone: in one pass when the frame starts with
// its type, as senders write it, and otherwise, or when that pass fails,
// by reading the type first and then the frame.
func decodeGeneric(data []byte) (Frame, error) {
	if typ, ok := firstType(data); ok {
		if k, known := kinds[typ]; known {
			if f, ok := decodeAs(data, typ, k.new); ok && validate(f) == nil {
				return f, nil
			}
		}
	}
	typ, err := PeekType(data)
	if err != nil {
		return nil, err
	}
	k, ok := kinds[typ]
	if !ok {
		return Unknown{Type: typ}, nil
	}
	v := k.new()
	if err := unmarshal(data, v); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, typ, err)
	}
	f := k.value(v)
	if err := validate(f); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, typ, err)
	}
	return f, nil
}

// Encode renders a frame as one JSON text message, with its type first.
func Encode(f Frame) ([]byte, error) {
	switch f := f.(type) {
	case BrowserResult:
		return encodeResult(f)
	}
	return encodeGeneric(f)
}

// encodeGeneric is Encode through the library alone (codec.go).
func encodeGeneric(f Frame) ([]byte, error) {
	return appendGeneric(nil, f)
}

// appendGeneric appends f to dst with the frame's type as its first
// member, as encoding/json would write the frame's members after it.
func appendGeneric(dst []byte, f Frame) ([]byte, error) {
	out, err := appendFrame(dst, f)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", f.FrameType(), err)
	}
	return out, nil
}

// AppendResult appends r to dst exactly as Encode(r) renders it, so that
// a sender of many results can reuse one buffer. On error dst's contents
// are unspecified and the result is nil.
func AppendResult(dst []byte, r BrowserResult) ([]byte, error) {
	return appendResult(dst, r)
}

// AppendCommand appends c to dst exactly as Encode(c) renders it, so that
// a connection can reuse one buffer for its commands.
func AppendCommand(dst []byte, c BrowserCommand) []byte {
	out, err := appendGeneric(dst, c)
	if err != nil {
		// Strings, a bool and an integer always encode.
		panic(fmt.Sprintf("wire: a browser command failed to encode: %v", err))
	}
	return out
}

// DecodeResult decodes data exactly as Decode would when it is a
// browser_result of the usual shape (the one-pass path of fast.go), without
// boxing it in a Frame. ok is false for anything else, including unusual
// or malformed results: hand those to Decode.
func DecodeResult(data []byte) (r BrowserResult, ok bool) {
	return decodeResultFast(bytes.TrimSpace(data))
}

// MustEncode is Encode for frames that cannot fail to encode (all of ours
// except ChatEvent with invalid raw JSON); it panics on error.
func MustEncode(f Frame) []byte {
	b, err := Encode(f)
	if err != nil {
		panic(err)
	}
	return b
}
