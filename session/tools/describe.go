package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Each built-in tool is described once, in its own file: its name
// constant, its argument struct (whose field tags give the schema a model
// sees), and how a call shows to people (show). Everything else — the
// schema, the chat's one-line summary, the approval box's detail — is
// derived from that, so front ends hold no per-tool switch.

// schemaOf returns a function giving the JSON schema of A, generated once
// with jsonschema-go. A field's jsonschema tag is its description, a field
// without omitempty is required, and the limits tag adds what the library
// has no tag for: minLength, minimum and maximum, as in
// `limits:"minimum=1,maximum=10"`.
func schemaOf[A any]() func() json.RawMessage {
	return sync.OnceValue(func() json.RawMessage {
		raw, err := generateSchema(reflect.TypeFor[A]())
		if err != nil {
			panic(err) // the argument structs are ours; a test covers them all
		}
		return raw
	})
}

// generateSchema is schemaOf's work, returning the error instead.
func generateSchema(t reflect.Type) (json.RawMessage, error) {
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", t, err)
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("limits")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		p := s.Properties[name]
		if p == nil {
			return nil, fmt.Errorf("schema of %s: field %s has limits but no property", t, f.Name)
		}
		if err := applyLimits(p, tag); err != nil {
			return nil, fmt.Errorf("schema of %s: field %s: %w", t, f.Name, err)
		}
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	if len(s.Properties) > 0 {
		return raw, nil
	}
	// An empty properties map is dropped when marshalled, and some
	// providers refuse an object schema without one: put it back.
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	m["properties"] = map[string]any{}
	return json.Marshal(m)
}

// applyLimits sets the keywords of a limits tag on p.
func applyLimits(p *jsonschema.Schema, tag string) error {
	for kv := range strings.SplitSeq(tag, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("limit %q is not key=value", kv)
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("limit %q: %w", kv, err)
		}
		switch k {
		case "minLength":
			i := int(n)
			p.MinLength = &i
		case "minimum":
			p.Minimum = &n
		case "maximum":
			p.Maximum = &n
		default:
			return fmt.Errorf("unknown limit %q", k)
		}
	}
	return nil
}

// Shown is how one call shows to people, as its tool describes it.
type Shown struct {
	// Summary is the call in one line for a chat row or a list: the
	// command of a Bash call, the URL of a navigation, the path of a file
	// tool. It is not yet made safe for a terminal.
	Summary string
	// Target is what a browser call acts on, without the text it would
	// type ("text into #q ⏎"), for lines others may read; HasTarget is
	// false for other tools, whose arguments such lines quote whole.
	Target    string
	HasTarget bool
	// Detail is what the approval box shows of the call, in order.
	Detail []Part
}

// PartKind says what a Part of a call's detail holds.
type PartKind int

// Kinds of Part.
const (
	// PartField is a labelled value: Label "url: ", Text the URL.
	PartField PartKind = iota
	// PartNote is a remark on the call ("then press enter"); Warn marks
	// one the person must not miss.
	PartNote
	// PartCommand is a shell command in Text, to be shown so that nothing
	// in it can hide.
	PartCommand
	// PartChange replaces Old with Text in a file.
	PartChange
	// PartContent is the whole new content (Text) of the file at Path, to
	// be compared with what the file holds now.
	PartContent
	// PartText is preformatted text, such as indented JSON.
	PartText
)

// Part is one element of a call's detail; which fields it uses depends
// on its Kind.
type Part struct {
	Kind PartKind
	// Label names a field's value ("url: ").
	Label string
	// Text is the value, the note, the command, the new text or content.
	Text string
	// Old is the text a change replaces.
	Old string
	// Path is the file whose content a PartContent replaces.
	Path string
	// Warn marks a note the person must not miss.
	Warn bool
}

// field and note build Parts.
func field(label, text string) Part { return Part{Kind: PartField, Label: label, Text: text} }
func note(text string, warn bool) Part {
	return Part{Kind: PartNote, Text: text, Warn: warn}
}

// shower is implemented by a built-in tool (and the network approval's
// pseudo-tool) to say how its calls show; see showAs.
type shower interface {
	show(args string) Shown
}

// showAs decodes a call's arguments as A and describes them with f. A
// value of the wrong type leaves its field empty, as a front end reading
// the arguments key by key would, since a call that does not pass the
// schema is refused before anyone is asked, but can still be shown.
func showAs[A any](args string, f func(A) Shown) Shown {
	var a A
	var ute *json.UnmarshalTypeError
	if err := json.Unmarshal([]byte(args), &a); err != nil && !errors.As(err, &ute) {
		return Shown{Summary: oneLine(args)}
	}
	return f(a)
}

// builtinRegistry is DefaultRegistry built once, for questions about the
// built-in tools themselves.
var builtinRegistry = sync.OnceValue(DefaultRegistry)

// builtins are the tools Show describes: the built-in ones, and the
// network approval's.
var builtins = sync.OnceValue(func() map[string]shower {
	m := map[string]shower{NetworkTool: networkShower{}}
	reg := builtinRegistry()
	for _, name := range reg.order {
		if s, ok := reg.tools[name].(shower); ok {
			m[name] = s
		}
	}
	return m
})

// Show describes a call of the named tool with args, its raw JSON
// arguments, for people. Tools infer does not define (an MCP server's),
// and what a tool leaves out, get a generic account: the string
// arguments in one line, and the arguments as indented JSON.
func Show(name, args string) Shown {
	var obj map[string]any
	if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return Shown{Summary: oneLine(args), Detail: []Part{field("args: ", args)}}
	}
	var s Shown
	if sh, ok := builtins()[name]; ok {
		s = sh.show(args)
	} else {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			if v, ok := obj[k].(string); ok && v != "" {
				parts = append(parts, k+"="+v)
			}
		}
		s.Summary = oneLine(strings.Join(parts, " "))
	}
	if s.Detail == nil {
		text := args
		if b, err := json.MarshalIndent(obj, "", "  "); err == nil {
			text = string(b)
		}
		s.Detail = []Part{{Kind: PartText, Text: text}}
	}
	return s
}

// oneLine collapses whitespace so text fits a single row.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
