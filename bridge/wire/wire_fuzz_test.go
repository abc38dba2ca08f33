package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// FuzzDecode checks that no input makes Decode panic, that every failure
// is ErrMalformed, and that known frames survive Encode→Decode: encoding
// a decoded frame, decoding it again and re-encoding gives the same bytes
// and the same frame. (The first decode may differ from the second in ways
// JSON cannot tell apart, such as [] versus an omitted field, so the
// comparison starts from the first re-encoding.)
//
// The seed corpus in testdata/fuzz/FuzzDecode holds every frame of the
// opentask 1.12.1 recording plus malformed and edge-case inputs.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"type":"browser_hello","token":"t","extension_version":"1.12.1"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastPaths(t, data)
		checkAgainstEncodingJSON(t, data)
		frame, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Decode error %v does not wrap ErrMalformed", err)
			}
			if frame != nil {
				t.Fatalf("Decode returned both %#v and %v", frame, err)
			}
			return
		}
		if u, ok := frame.(Unknown); ok {
			if _, known := kinds[u.Type]; known {
				t.Fatalf("known type %q decoded as Unknown", u.Type)
			}
			return
		}
		typ, err := PeekType(data)
		if err != nil || typ != frame.FrameType() {
			t.Fatalf("PeekType = %q, %v; frame type %q", typ, err, frame.FrameType())
		}
		once, err := Encode(frame)
		if err != nil {
			t.Fatalf("Encode(%#v): %v", frame, err)
		}
		again, err := Decode(once)
		if err != nil {
			t.Fatalf("Decode(Encode(frame)) = %v for %s", err, once)
		}
		twice, err := Encode(again)
		if err != nil {
			t.Fatalf("second Encode: %v", err)
		}
		if !bytes.Equal(once, twice) {
			t.Fatalf("encoding is not stable:\n first %s\nsecond %s", once, twice)
		}
		third, err := Decode(twice)
		if err != nil {
			t.Fatalf("third Decode: %v", err)
		}
		if !reflect.DeepEqual(again, third) {
			t.Fatalf("round trip changed the frame:\n%#v\n%#v", again, third)
		}
	})
}

// checkFastPaths holds the browser_result fast path to the generic one:
// whatever the fast decoder accepts, the generic path decodes to the same
// frame, and the fast encoder writes the same bytes as the generic one.
// AppendCommand, into a buffer already holding bytes, must write what
// Encode writes.
func checkFastPaths(t *testing.T, data []byte) {
	trimmed := bytes.TrimSpace(data)
	if fast, ok := decodeResultFast(trimmed); ok {
		slow, err := decodeGeneric(trimmed)
		if err != nil {
			t.Fatalf("fast path accepted what the generic path rejects (%v): %q", err, trimmed)
		}
		if !reflect.DeepEqual(Frame(fast), slow) {
			t.Fatalf("fast and generic decoding differ for %q:\n fast %#v\n slow %#v", trimmed, fast, slow)
		}
	}
	if f, err := decodeGeneric(trimmed); err == nil {
		var fast []byte
		var ferr error
		switch f := f.(type) {
		case BrowserResult:
			fast, ferr = encodeResult(f)
		case BrowserCommand:
			fast = AppendCommand([]byte("reused"), f)[len("reused"):]
		default:
			return
		}
		slow, serr := encodeGeneric(f)
		if (ferr == nil) != (serr == nil) || !bytes.Equal(fast, slow) {
			t.Fatalf("fast and generic encoding differ for %#v:\n fast %s (%v)\n slow %s (%v)", f, fast, ferr, slow, serr)
		}
	}
}
