package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBuiltinRegistry(t *testing.T) {
	t.Parallel()
	r := DefaultRegistry()
	want := []string{"Bash", "Read", "Write", "Edit", "Grep", "Tree",
		"BrowserNavigate", "BrowserClick", "BrowserType", "BrowserRead", "BrowserScreenshot", "BrowserTabs", "WebSearch"}
	if got := strings.Join(r.Names(), ","); got != strings.Join(want, ",") {
		t.Fatalf("Names() = %s", got)
	}
	specs := r.Specs()
	if len(specs) != len(want) {
		t.Fatalf("%d specs", len(specs))
	}
	readOnly := map[string]bool{"Read": true, "Grep": true, "Tree": true, "BrowserRead": true, "BrowserScreenshot": true, "BrowserTabs": true, "WebSearch": true}
	for _, s := range specs {
		if len(s.Description) < 40 || !strings.Contains(s.Description, "{") {
			t.Errorf("%s: description lacks an example: %q", s.Name, s.Description)
		}
		var v map[string]any
		if err := json.Unmarshal(s.Parameters, &v); err != nil || v["type"] != "object" {
			t.Errorf("%s: schema %s: %v", s.Name, s.Parameters, err)
		}
		tool, _ := r.Lookup(s.Name)
		if tool.ReadOnly() != readOnly[s.Name] {
			t.Errorf("%s: ReadOnly() = %v", s.Name, tool.ReadOnly())
		}
		if tool.Timeout() <= 0 {
			t.Errorf("%s: no timeout", s.Name)
		}
	}
	if _, ok := r.Lookup("Nope"); ok {
		t.Error("Lookup found an unknown tool")
	}
}

func TestRegistryRejectsBadTools(t *testing.T) {
	t.Parallel()
	if _, err := NewRegistry(readTool{}, readTool{}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate: %v", err)
	}
	bad := []string{
		`{"type": "object", "properties": {"a": {"type": "strnig"}}}`,
		`{"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}}`,
		`{"type": "object", "required": ["a"]}`,
		`{"type": "array"}`,
		`not json`,
	}
	for _, s := range bad {
		if _, err := NewRegistry(schemaTool{schema: s}); err == nil {
			t.Errorf("schema %s accepted", s)
		}
	}
}

// schemaTool is a tool with an arbitrary schema, for validator tests.
type schemaTool struct {
	readTool
	schema string
}

func (s schemaTool) Name() string            { return "Probe" }
func (s schemaTool) Schema() json.RawMessage { return json.RawMessage(s.schema) }

func TestValidationErrors(t *testing.T) {
	t.Parallel()
	r := DefaultRegistry()
	probe, err := NewRegistry(schemaTool{schema: `{
		"type": "object",
		"properties": {
			"n": {"type": "number", "maximum": 5},
			"mode": {"type": "string", "enum": ["fast", "slow"]},
			"tags": {"type": "array", "items": {"type": "string", "minLength": 2}},
			"opts": {"type": "object", "properties": {"deep": {"type": "boolean"}}, "required": ["deep"], "additionalProperties": false},
			"long": {"type": "string", "minLength": 3}
		},
		"additionalProperties": false
	}`})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		reg        *Registry
		tool, args string
		want       string // "" means valid
	}{
		{r, "BrowserType", `{"text": "hi"}`, `BrowserType: missing required argument "selector"`},
		{r, "Read", `{"path": "a", "limit": "ten"}`, `Read: argument "limit" must be an integer ≥ 1, got "ten"`},
		{r, "Read", `{"path": "a", "limit": 0}`, `Read: argument "limit" must be an integer ≥ 1, got 0`},
		{r, "Read", `{"path": "a", "limit": 2.5}`, `Read: argument "limit" must be an integer ≥ 1, got 2.5`},
		{r, "Read", `{"path": "a", "limit": 3.0}`, ``},
		{r, "Read", `{"path": "a", "limit": null}`, ``},
		{r, "Read", `{"path": "a", "bogus": 1}`, `Read: unknown argument "bogus" (accepted arguments: limit, offset, path)`},
		{r, "Read", `{"path": ""}`, `Read: argument "path" must be a non-empty string, got ""`},
		{r, "Read", `{"path": 7}`, `Read: argument "path" must be a non-empty string, got 7`},
		{r, "Read", `{"path": null}`, `Read: missing required argument "path"`},
		{r, "Read", `{"path": "a"`, `Read: arguments are not valid JSON: unexpected EOF`},
		{r, "Read", `{"path": "a"} {}`, `Read: arguments are not valid JSON: extra data`},
		{r, "Read", `["a"]`, `Read: arguments must be a JSON object, got an array`},
		{r, "Read", `"a"`, `Read: arguments must be a JSON object, got "a"`},
		{r, "Tree", ``, ``},
		{r, "Tree", `{"depth": 11}`, `Tree: argument "depth" must be an integer from 1 to 10, got 11`},
		{r, "Bash", `{"command": "ls", "timeout_ms": 600001}`, `must be an integer from 1 to 600000`},
		{r, "BrowserType", `{"selector": "#q", "text": "x", "press_enter": "yes"}`, `BrowserType: argument "press_enter" must be true or false, got "yes"`},
		{r, "BrowserScreenshot", `{"full": true}`, `BrowserScreenshot: unknown argument "full" (accepted arguments: none)`},
		{r, "Nope", `{}`, `unknown tool "Nope"; the available tools are Bash, BrowserClick`},
		{probe, "Probe", `{"n": 6}`, `Probe: argument "n" must be a number ≤ 5, got 6`},
		{probe, "Probe", `{"n": 4.5}`, ``},
		{probe, "Probe", `{"mode": "medium"}`, `Probe: argument "mode" must be one of "fast", "slow", got "medium"`},
		{probe, "Probe", `{"mode": "slow"}`, ``},
		{probe, "Probe", `{"tags": ["ok", "x"]}`, `Probe: argument "tags[1]" must be a string of at least 2 characters, got "x"`},
		{probe, "Probe", `{"tags": "ok"}`, `Probe: argument "tags" must be an array, got "ok"`},
		{probe, "Probe", `{"opts": {}}`, `Probe: missing required argument "opts.deep"`},
		{probe, "Probe", `{"opts": {"deep": true, "x": 1}}`, `Probe: unknown argument "opts.x" (accepted arguments: deep)`},
		{probe, "Probe", `{"opts": []}`, `Probe: argument "opts" must be an object, got an array`},
		{probe, "Probe", `{"long": "ab"}`, `Probe: argument "long" must be a string of at least 3 characters, got "ab"`},
	}
	for _, c := range cases {
		err := c.reg.Validate(c.tool, c.args)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %s: unexpected error %v", c.tool, c.args, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %s: error %v, want %q", c.tool, c.args, err, c.want)
		}
	}
}

func TestPipelineSpecs(t *testing.T) {
	t.Parallel()
	p := NewPipeline(PipelineConfig{})
	if got := len(p.Specs()); got != 13 || p.Registry() == nil {
		t.Errorf("Specs() has %d tools", got)
	}
}
