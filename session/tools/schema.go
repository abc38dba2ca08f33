package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// schema is the draft-07 subset the tools use: type (string, integer,
// number, boolean, array, object), properties, required, enum, minimum,
// maximum, minLength, items and additionalProperties (a boolean). Keeping
// the subset small lets validation errors speak to the model plainly.
type schema struct {
	Type                 string             `json:"type"`
	Description          string             `json:"description,omitempty"`
	Properties           map[string]*schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	Enum                 []any              `json:"enum,omitempty"`
	Minimum              *float64           `json:"minimum,omitempty"`
	Maximum              *float64           `json:"maximum,omitempty"`
	MinLength            *int               `json:"minLength,omitempty"`
	Items                *schema            `json:"items,omitempty"`
	AdditionalProperties *bool              `json:"additionalProperties,omitempty"`
}

// compileSchema parses a tool's schema, rejecting keywords outside the
// subset so that a typo in a schema fails at registration, not silently.
func compileSchema(raw json.RawMessage) (*schema, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var s schema
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	if s.Type != "object" {
		return nil, errors.New("schema: the top level must be an object")
	}
	return &s, nil
}

func (s *schema) check() error {
	switch s.Type {
	case "string", "integer", "number", "boolean":
	case "array":
		if s.Items != nil {
			if err := s.Items.check(); err != nil {
				return err
			}
		}
	case "object":
		for _, r := range s.Required {
			if s.Properties[r] == nil {
				return fmt.Errorf("schema: required property %q is not defined", r)
			}
		}
		for name, p := range s.Properties {
			if err := p.check(); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	default:
		return fmt.Errorf("schema: unsupported type %q", s.Type)
	}
	return nil
}

// validateArgs checks raw tool arguments against s. An empty string counts
// as {}, and null for an optional property counts as absent, because
// models send both. The error speaks to the model, e.g.
// `argument "limit" must be an integer ≥ 1, got "ten"`.
func validateArgs(s *schema, raw string) error {
	if strings.TrimSpace(raw) == "" {
		raw = "{}"
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("arguments are not valid JSON: %v; send one JSON object such as {\"path\": \"main.go\"}", err)
	}
	if dec.More() {
		return errors.New("arguments are not valid JSON: extra data after the object; send exactly one JSON object")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("arguments must be a JSON object, got %s", describeValue(v))
	}
	return s.validateObject(obj, "")
}

func (s *schema) validateObject(obj map[string]any, at string) error {
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	if s.AdditionalProperties != nil && !*s.AdditionalProperties {
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if s.Properties[k] == nil {
				accepted := "none"
				if len(names) > 0 {
					accepted = strings.Join(names, ", ")
				}
				return fmt.Errorf("unknown argument %q (accepted arguments: %s)", at+k, accepted)
			}
		}
	}
	for _, r := range s.Required {
		if v, ok := obj[r]; !ok || v == nil {
			return fmt.Errorf("missing required argument %q", at+r)
		}
	}
	for _, n := range names {
		v, ok := obj[n]
		if !ok || v == nil {
			continue
		}
		if err := s.Properties[n].validate(v, at+n); err != nil {
			return err
		}
	}
	return nil
}

func (s *schema) validate(v any, at string) error {
	bad := func() error {
		return fmt.Errorf("argument %q must be %s, got %s", at, s.expect(), describeValue(v))
	}
	switch s.Type {
	case "string":
		str, ok := v.(string)
		if !ok || (s.MinLength != nil && len([]rune(str)) < *s.MinLength) {
			return bad()
		}
	case "integer", "number":
		n, ok := v.(json.Number)
		if !ok {
			return bad()
		}
		f, err := n.Float64()
		if err != nil || math.IsInf(f, 0) || (s.Type == "integer" && f != math.Trunc(f)) {
			return bad()
		}
		if (s.Minimum != nil && f < *s.Minimum) || (s.Maximum != nil && f > *s.Maximum) {
			return bad()
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return bad()
		}
	case "array":
		items, ok := v.([]any)
		if !ok {
			return bad()
		}
		if s.Items != nil {
			for i, it := range items {
				if err := s.Items.validate(it, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		return s.validateObject(obj, at+".")
	}
	if len(s.Enum) > 0 && !inEnum(s.Enum, v) {
		return bad()
	}
	return nil
}

// expect describes what s accepts, e.g. "an integer ≥ 1".
func (s *schema) expect() string {
	if len(s.Enum) > 0 {
		opts := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			b, _ := json.Marshal(e)
			opts[i] = string(b)
		}
		return "one of " + strings.Join(opts, ", ")
	}
	switch s.Type {
	case "string":
		if s.MinLength != nil && *s.MinLength == 1 {
			return "a non-empty string"
		}
		if s.MinLength != nil && *s.MinLength > 1 {
			return fmt.Sprintf("a string of at least %d characters", *s.MinLength)
		}
		return "a string"
	case "integer", "number":
		noun := "an integer"
		if s.Type == "number" {
			noun = "a number"
		}
		switch {
		case s.Minimum != nil && s.Maximum != nil:
			return fmt.Sprintf("%s from %s to %s", noun, num(*s.Minimum), num(*s.Maximum))
		case s.Minimum != nil:
			return fmt.Sprintf("%s ≥ %s", noun, num(*s.Minimum))
		case s.Maximum != nil:
			return fmt.Sprintf("%s ≤ %s", noun, num(*s.Maximum))
		}
		return noun
	case "boolean":
		return "true or false"
	case "array":
		return "an array"
	default:
		return "an object"
	}
}

func num(f float64) string { return fmt.Sprintf("%g", f) }

func inEnum(enum []any, v any) bool {
	vb, _ := json.Marshal(v)
	for _, e := range enum {
		eb, _ := json.Marshal(e)
		if bytes.Equal(vb, eb) {
			return true
		}
	}
	return false
}

// describeValue shows a received value briefly, as JSON.
func describeValue(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "an unreadable value"
	}
	if r := []rune(string(b)); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return string(b)
}
