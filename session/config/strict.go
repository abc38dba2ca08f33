package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// document is one configuration file after syntax and shape checks.
type document struct {
	// file is the path as shown to the person.
	file string
	// root is the top-level mapping, or nil for an empty file.
	root *yaml.Node
	// lines maps each dotted key present in the file to its line, so
	// semantic errors can point at the right place.
	lines map[string]int
}

// has reports whether the file sets key (dotted).
func (d *document) has(key string) bool {
	_, ok := d.lines[key]
	return ok
}

// locate fills in the file and line of problems found by validation.
func (d *document) locate(problems []*FieldError) error {
	if len(problems) == 0 {
		return nil
	}
	errs := make([]error, len(problems))
	for i, p := range problems {
		p.File = d.file
		p.Line = d.lines[p.Key]
		errs[i] = p
	}
	return errors.Join(errs...)
}

// parseStrict decodes data into out (a pointer to a struct) and rejects
// anything the struct does not describe. A first pass walks the YAML tree
// against out's type so each unknown key or wrongly typed value is reported
// by its dotted key and line, all at once; the decode itself then runs with
// KnownFields(true) as a second guard.
func parseStrict(data []byte, file string, out any) (*document, error) {
	doc := &document{file: file, lines: map[string]int{}}
	var top yaml.Node
	if err := yaml.Unmarshal(data, &top); err != nil {
		line, problem := splitYAMLLine(strings.TrimPrefix(err.Error(), "yaml: "))
		return nil, &FieldError{
			File:    file,
			Line:    line,
			Problem: problem,
			Fix:     "fix the YAML syntax (indent with spaces, one key: value per line)",
			Err:     err,
		}
	}
	if top.Kind == yaml.DocumentNode && len(top.Content) > 0 {
		doc.root = top.Content[0]
	}
	if doc.root == nil || isNull(doc.root) {
		doc.root = nil
		return doc, nil
	}
	c := &checker{file: file, lines: doc.lines}
	c.check(doc.root, reflect.TypeOf(out).Elem(), "")
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(out); err != nil && !errors.Is(err, io.EOF) {
		return nil, &FieldError{
			File:    file,
			Problem: strings.TrimPrefix(err.Error(), "yaml: "),
			Fix:     "compare the file with the reference in the README",
			Err:     err,
		}
	}
	return doc, nil
}

// checker walks a YAML tree alongside a Go type.
type checker struct {
	file  string
	lines map[string]int
	errs  []error
}

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

func (c *checker) fail(n *yaml.Node, key, problem, fix string) {
	c.errs = append(c.errs, &FieldError{File: c.file, Line: n.Line, Key: key, Problem: problem, Fix: fix})
}

func (c *checker) check(n *yaml.Node, t reflect.Type, path string) {
	n = resolveAlias(n)
	if isNull(n) {
		return // null leaves the default
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || isScalarKind(t.Kind()) {
		c.checkLeaf(n, t, path)
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		c.check(n, t.Elem(), path)
	case reflect.Struct:
		c.checkStruct(n, t, path)
	case reflect.Map:
		c.checkMap(n, t, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			c.fail(n, path, "expected a list, found "+describeNode(n), "write it as [a, b] or as lines starting with \"- \"")
			return
		}
		for i, item := range n.Content {
			c.check(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	default:
		c.checkLeaf(n, t, path)
	}
}

func (c *checker) checkLeaf(n *yaml.Node, t reflect.Type, path string) {
	own := reflect.PointerTo(t).Implements(unmarshalerType) // says what it expected itself
	if isWholeKind(t.Kind()) && !own && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
		// yaml.v3 would truncate 4123.5 to 4123 without a word.
		c.fail(n, path, "expected "+describeType(t)+", found "+describeNode(n), "")
		return
	}
	err := n.Decode(reflect.New(t).Interface())
	if err == nil {
		return
	}
	if own {
		// Our own unmarshalers already say what they expected.
		c.fail(n, path, strings.TrimPrefix(err.Error(), "yaml: "), "")
		return
	}
	c.fail(n, path, "expected "+describeType(t)+", found "+describeNode(n), "")
}

func (c *checker) checkStruct(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		if path == "" {
			c.fail(n, "", "the file must be a mapping of keys (key: value), found "+describeNode(n), "compare it with the reference in the README")
			return
		}
		c.fail(n, path, "expected nested keys, found "+describeNode(n), "indent the keys that belong under "+path)
		return
	}
	fields := yamlFields(t)
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" {
			continue // a merge key; yaml expands it during the decode
		}
		if k.Kind != yaml.ScalarNode {
			c.fail(k, path, "a key must be a plain name, found "+describeNode(k), "")
			continue
		}
		key := joinKey(path, k.Value)
		shown := joinKey(path, shownKey(k.Value))
		if first, dup := seen[k.Value]; dup {
			c.fail(k, shown, fmt.Sprintf("set twice (first on line %d)", first), "keep only one")
			continue
		}
		seen[k.Value] = k.Line
		c.lines[key] = k.Line
		idx, ok := fields[k.Value]
		if !ok {
			if strings.Contains(k.Value, ":") {
				c.fail(k, shown, "unknown key", "put a space after the colon (key: value)")
				continue
			}
			c.fail(k, shown, "unknown key", suggestKey(k.Value, fields))
			continue
		}
		c.check(v, t.Field(idx).Type, key)
	}
}

func (c *checker) checkMap(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind != yaml.MappingNode {
		c.fail(n, path, "expected a mapping of names, found "+describeNode(n), "indent the entries that belong under "+path)
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			c.fail(k, path, "a name must be plain text, found "+describeNode(k), "")
			continue
		}
		key := joinKey(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			c.fail(k, joinKey(path, shownKey(k.Value)), fmt.Sprintf("set twice (first on line %d)", first), "keep only one")
			continue
		}
		seen[k.Value] = k.Line
		c.lines[key] = k.Line
		c.check(v, t.Elem(), key)
	}
}

// yamlFields maps the YAML names of t's fields to their indexes, following
// yaml's rules: the tag's name, else the lowercased field name.
func yamlFields(t reflect.Type) map[string]int {
	fields := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		fields[name] = i
	}
	return fields
}

// suggestKey proposes the closest known key for a typo, else lists them.
func suggestKey(got string, fields map[string]int) string {
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	best, bestDist := "", 3
	for _, name := range names {
		if d := editDistance(strings.ToLower(got), name); d < bestDist {
			best, bestDist = name, d
		}
	}
	if best != "" {
		return fmt.Sprintf("did you mean %q? (known keys here: %s)", best, strings.Join(names, ", "))
	}
	return "remove it or use one of: " + strings.Join(names, ", ")
}

// editDistance is the Levenshtein distance, used only for short key names.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// splitYAMLLine takes the "line N: " prefix off a yaml syntax error so the
// line can go where FieldError puts it.
func splitYAMLLine(msg string) (int, string) {
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return 0, msg
	}
	num, problem, ok := strings.Cut(rest, ": ")
	line, err := strconv.Atoi(num)
	if !ok || err != nil {
		return 0, msg
	}
	return line, problem
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// isWholeKind reports whether k holds whole numbers only.
func isWholeKind(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

func isScalarKind(k reflect.Kind) bool {
	switch k {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "text"
	}
	return "a " + t.Kind().String()
}

// describeNode says what kind of thing the person wrote, never the value
// itself (see describeScalar).
func describeNode(n *yaml.Node) string {
	n = resolveAlias(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "nested keys"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return describeScalar(n.Value)
	}
	return "nothing"
}

// describeScalar names a misplaced value without repeating it: a value
// that sits where nested keys or a list belong is most often a key or
// token indented under the wrong name (providers:\n  api_key: …), and
// however short it is, the file and line are enough to find it. Only a
// short number is shown, since no key or token is one and it is what a
// fraction in a whole-number field needs to be recognised. A colon inside
// is worth saying, since "name:value" without a space is the usual way a
// key: value pair turns into one value.
func describeScalar(v string) string {
	if q, ok := shownNumber(v); ok {
		return q
	}
	if strings.Contains(v, ":") {
		return "text with a colon in it (a missing space after the colon?)"
	}
	return "text"
}

// shownNumber quotes v when it is a short number, which is safe to show.
func shownNumber(v string) (string, bool) {
	if _, err := strconv.ParseFloat(v, 64); err != nil || len(v) > 12 || strings.ContainsAny(v, "xXpP_") {
		return "", false
	}
	return strconv.Quote(v), true
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// mergeNodes layers over on top of base: mappings merge key by key
// (recursively), anything else in over replaces base, and a null in over
// leaves base as it is. Neither input is modified.
func mergeNodes(base, over *yaml.Node) *yaml.Node {
	base, over = resolveAlias(base), resolveAlias(over)
	if isNull(over) {
		return base
	}
	if isNull(base) || base.Kind != yaml.MappingNode || over.Kind != yaml.MappingNode {
		return over
	}
	merged := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: base.Line, Column: base.Column}
	index := map[string]int{}
	for i := 0; i+1 < len(base.Content); i += 2 {
		index[base.Content[i].Value] = len(merged.Content) + 1
		merged.Content = append(merged.Content, base.Content[i], base.Content[i+1])
	}
	for i := 0; i+1 < len(over.Content); i += 2 {
		k, v := over.Content[i], over.Content[i+1]
		if at, ok := index[k.Value]; ok {
			merged.Content[at] = mergeNodes(merged.Content[at], v)
			continue
		}
		index[k.Value] = len(merged.Content) + 1
		merged.Content = append(merged.Content, k, v)
	}
	return merged
}

// shownKey is a key as error messages may print it. A "key" holding a colon
// is almost always "name:value" with the space after the colon missing, and
// the value may be a token or an API key, so only the part before the colon
// is shown; very long keys are cut.
func shownKey(k string) string {
	if looksLikeSecret(k) {
		return "(a key name that looks like a token, not shown)"
	}
	if name, _, found := strings.Cut(k, ":"); found {
		k = name + ":…"
	}
	if r := []rune(k); len(r) > 40 {
		k = string(r[:39]) + "…"
	}
	return k
}
