package wire

import (
	"bytes"
	"reflect"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Frames are read and written by JSON v2 (github.com/go-json-experiment/json)
// with the options that reproduce encoding/json: member names matched
// case-insensitively, the last of duplicate members winning, invalid UTF-8
// read as U+FFFD, unknown members ignored, <, > and & escaped, nil slices
// written as null, omitempty on a bool or a number. What a frame means on
// the wire was settled under encoding/json and peers rely on it, so the
// library changes only the cost: v2 reads a frame in one pass, where
// encoding/json scanned it for its type, again to validate and again to
// decode, and every browser call pays that for its command. (One byte
// sequence differs: a Go string that is not UTF-8, which Decode never
// returns, is written with U+FFFD itself rather than its escape.)

// legacy is encoding/json's behaviour as JSON v2 options; frames are
// written with all of it.
var legacy = jsonv1.DefaultOptionsV1()

// reading is legacy without encoding/json's validation pass: whether a
// frame is rejected does not change, since v2 reads every byte of it
// anyway and fails on the same syntax; only the error's text differs.
var reading = jsonv2.JoinOptions(legacy, jsonv1.ReportErrorsWithLegacySemantics(false))

// unmarshal decodes data into v as encoding/json would.
func unmarshal(data []byte, v any) error {
	return jsonv2.Unmarshal(data, v, reading)
}

// marshal encodes v as encoding/json would.
func marshal(v any) ([]byte, error) {
	return jsonv2.Marshal(v, legacy)
}

// A frame on the wire is its struct's members after a "type" member. The
// codec reads and writes that shape in one go through a struct made for
// each frame type: the type in a field of its own, first, and the frame's
// fields inlined after it.
var forms sync.Map // reflect.Type of a frame struct -> reflect.Type of its wire form

// formsByType caches the wire form of each known frame type by its name,
// so that decoding does not make a frame only to learn its Go type.
var formsByType sync.Map // frame type -> reflect.Type of its wire form

func wireForm(frame reflect.Type) reflect.Type {
	if t, ok := forms.Load(frame); ok {
		return t.(reflect.Type)
	}
	t := reflect.StructOf([]reflect.StructField{
		{Name: "Type", Type: reflect.TypeFor[*string](), Tag: `json:"type"`},
		{Name: "Frame", Type: frame, Tag: `json:",inline"`},
	})
	forms.Store(frame, t)
	return t
}

// decodeAs decodes data as a frame of type typ, made by mk, in one pass.
// ok is false unless the frame decoded without error and its last "type"
// member (encoding/json's rule) is still typ; the caller then takes the
// slower path that reads the type first, so the outcome never depends on
// which path ran.
func decodeAs(data []byte, typ string, mk func() any) (Frame, bool) {
	t, ok := formsByType.Load(typ)
	if !ok {
		t = wireForm(reflect.TypeOf(mk()).Elem())
		formsByType.Store(typ, t)
	}
	form := reflect.New(t.(reflect.Type))
	if unmarshal(data, form.Interface()) != nil {
		return nil, false
	}
	got := form.Elem().Field(0).Interface().(*string)
	if got == nil || *got != typ {
		return nil, false
	}
	return form.Elem().Field(1).Interface().(Frame), true
}

// appendFrame appends f's wire form to dst.
func appendFrame(dst []byte, f Frame) ([]byte, error) {
	v := reflect.ValueOf(f)
	form := reflect.New(wireForm(v.Type())).Elem()
	typ := f.FrameType()
	form.Field(0).Set(reflect.ValueOf(&typ))
	form.Field(1).Set(v)
	buf := bytes.NewBuffer(dst)
	if err := jsonv2.MarshalWrite(buf, form.Addr().Interface(), legacy); err != nil {
		return nil, err
	}
	// MarshalWrite ends the value with a newline, as a stream does.
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// firstType is the value of data's first member when that member is
// "type" with a plain string, as every sender writes a frame; ok is false
// otherwise. It is a guess that decodeAs confirms.
func firstType(data []byte) (string, bool) {
	s := scanner{data: data}
	if s.next() != '{' {
		return "", false
	}
	s.space()
	if key, ok := s.plainString(); !ok || string(key) != "type" {
		return "", false
	}
	s.space()
	if s.next() != ':' {
		return "", false
	}
	s.space()
	v, ok := s.plainString()
	return string(v), ok
}
