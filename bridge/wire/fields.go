package wire

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// UnknownFields lists the top-level members of a known frame that its Go
// type does not have (Decode ignores them, as the contract asks). It is a
// diagnostic for debug logs, so it favours clarity over speed; unknown
// frame types and malformed frames give nil.
func UnknownFields(data []byte) []string {
	typ, err := PeekType(data)
	if err != nil {
		return nil
	}
	k, ok := kinds[typ]
	if !ok {
		return nil
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(data, &members) != nil {
		return nil
	}
	known := fieldNames(reflect.TypeOf(k.new()).Elem())
	var unknown []string
	for name := range members {
		// encoding/json matches names case-insensitively.
		if !strings.EqualFold(name, "type") && !slices.ContainsFunc(known, func(k string) bool { return strings.EqualFold(k, name) }) {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	return unknown
}

var fieldNameCache sync.Map // reflect.Type -> []string

// fieldNames is the JSON member names of a frame struct.
func fieldNames(t reflect.Type) []string {
	if v, ok := fieldNameCache.Load(t); ok {
		return v.([]string)
	}
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		names = append(names, name)
	}
	fieldNameCache.Store(t, names)
	return names
}
