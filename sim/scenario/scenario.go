// Package scenario runs scripted sessions of the simulated extension
// against a running infer: a YAML file of steps that type into the panel,
// send frames, expect frames back, script the browser's answers, approve
// or reject tool calls, and drop and restore the connection. A run stops at
// the first unmet expectation and reports it next to the closest frames
// that did arrive. README.md beside this file documents the format.
package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/sim"
)

// DefaultTimeout is how long an expect, approve or reject step waits when
// neither it nor the scenario says.
const DefaultTimeout = 10 * time.Second

// Scenario is one parsed scenario file.
type Scenario struct {
	// Name says what the scenario shows; Description may say more.
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Profile is the extension to impersonate: "" (the contract) or
	// opentask-1.12.1.
	Profile string `yaml:"profile"`
	// Browser answers the browser commands nobody scripted: fake (the
	// default: the fake browser with the demo site), minimal, or none.
	Browser string `yaml:"browser"`
	// Timeout is the default wait of expect, approve, reject and
	// reconnect steps.
	Timeout time.Duration `yaml:"timeout"`
	// Steps run in order.
	Steps []Step `yaml:"steps"`

	// File is where the scenario came from, for messages.
	File string `yaml:"-"`
}

// Step is one step; exactly one of its fields is set.
type Step struct {
	// Panel runs a panel command, as typed at infer-sim --panel.
	Panel *PanelStep `yaml:"panel"`
	// Send puts a frame on the wire as given.
	Send map[string]any `yaml:"send"`
	// Expect waits for a frame that matches.
	Expect *Expect `yaml:"expect"`
	// Answer scripts the result of the next matching browser command.
	Answer *Answer `yaml:"answer"`
	// Approve and Reject answer a pending approval: "latest" or an id.
	Approve string `yaml:"approve"`
	Reject  string `yaml:"reject"`
	// Wait pauses.
	Wait time.Duration `yaml:"wait"`
	// Disconnect drops the connection and stays offline.
	Disconnect bool `yaml:"disconnect"`
	// Reconnect comes back online and waits for the connection.
	Reconnect bool `yaml:"reconnect"`

	line int
}

// PanelStep is a panel command line, optionally expected to fail.
type PanelStep struct {
	Command string `yaml:"command"`
	// Fails, when set, requires the command to fail with an error that
	// contains it (for commands a profile refuses).
	Fails string `yaml:"fails"`
}

// UnmarshalYAML accepts a plain string or {command, fails}.
func (p *PanelStep) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		return n.Decode(&p.Command)
	}
	type plain PanelStep
	var v plain
	if err := decodePanel(n, &v); err != nil {
		return err
	}
	*p = PanelStep(v)
	return nil
}

// Expect is a frame pattern plus how to wait for it.
type Expect struct {
	// Pattern is matched against each frame as a subset: every key it has
	// must be in the frame with a matching value; an array must match a
	// subsequence of the frame's array (an empty one only an empty one);
	// other values must be equal.
	Pattern map[string]any
	// Within bounds the wait (default: the scenario's timeout).
	Within time.Duration
	// TextContains requires the text streamed in TEXT_MESSAGE_CONTENT
	// events since the previous expect, up to the match, to contain this.
	TextContains string
	// Contains requires some string in the matched frame to contain this.
	Contains string
}

// expectOptions are the keys of an expect mapping that are not part of the
// pattern.
var expectOptions = map[string]bool{"within": true, "text_contains": true, "contains": true}

// UnmarshalYAML splits the options off the pattern.
func (e *Expect) UnmarshalYAML(n *yaml.Node) error {
	var m map[string]any
	if err := n.Decode(&m); err != nil {
		return fmt.Errorf("expect must be a mapping of frame fields, e.g. {type: chat_event, event: {type: RUN_FINISHED}}: %w", err)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i].Value, n.Content[i+1]
		switch key {
		case "within":
			if err := val.Decode(&e.Within); err != nil {
				return fmt.Errorf("line %d: within: %w (write a duration such as 5s)", val.Line, err)
			}
		case "text_contains":
			if err := val.Decode(&e.TextContains); err != nil {
				return err
			}
		case "contains":
			if err := val.Decode(&e.Contains); err != nil {
				return err
			}
		}
	}
	for k := range expectOptions {
		delete(m, k)
	}
	if _, ok := m["type"].(string); !ok {
		return fmt.Errorf("line %d: expect needs a frame type, e.g. {type: chat_event, event: {type: RUN_FINISHED}}", n.Line)
	}
	norm, err := normalize(m)
	if err != nil {
		return fmt.Errorf("line %d: expect: %w", n.Line, err)
	}
	e.Pattern = norm.(map[string]any)
	return nil
}

// Answer scripts a browser result.
type Answer struct {
	// Action, and Selector, URL and Text when set, pick the command.
	Action   string `yaml:"action"`
	Selector string `yaml:"selector"`
	URL      string `yaml:"url"`
	Text     string `yaml:"text"`
	// Result is the browser_result's fields (id is filled in).
	Result map[string]any `yaml:"result"`
	// Delay holds the answer back this long.
	Delay time.Duration `yaml:"delay"`

	result wire.BrowserResult
}

// Load reads and parses a scenario file.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read scenario: %w", err)
	}
	return Parse(data, path)
}

// Parse parses a scenario; name is used in messages.
func Parse(data []byte, name string) (*Scenario, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("%s: not valid YAML: %w", name, err)
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%s: the scenario is empty: give it steps (see sim/scenario/README.md)", name)
	}
	var s Scenario
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true) // a misspelt key is an error, not a skipped step
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s.File = name
	if err := s.check(root.Content[0]); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &s, nil
}

// decodePanel decodes a panel mapping, rejecting unknown fields as the
// top-level decoder does (Node.Decode alone would skip them).
func decodePanel(n *yaml.Node, v any) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i].Value; k != "command" && k != "fails" {
			return fmt.Errorf("line %d: panel has no field %q: use command and fails", n.Content[i].Line, k)
		}
	}
	return n.Decode(v)
}

// check validates what decoding cannot: one kind per step, known profile
// and browser, well-formed answers.
func (s *Scenario) check(doc *yaml.Node) error {
	if _, err := sim.ProfileByName(s.Profile); err != nil {
		return err
	}
	switch s.Browser {
	case "", "fake", "minimal", "none":
	default:
		return fmt.Errorf("browser %q: use fake, minimal or none (infer-sim run --browser chrome drives Chromium instead)", s.Browser)
	}
	if s.Timeout < 0 {
		return errors.New("timeout must not be negative")
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if len(s.Steps) == 0 {
		return errors.New("the scenario has no steps")
	}
	lines := stepLines(doc)
	for i := range s.Steps {
		st := &s.Steps[i]
		if i < len(lines) {
			st.line = lines[i]
		}
		if n := st.kinds(); n != 1 {
			return fmt.Errorf("step %d (line %d) has %d kinds of action: give each step exactly one of panel, send, expect, answer, approve, reject, wait, disconnect, reconnect", i+1, st.line, n)
		}
		if err := st.check(); err != nil {
			return fmt.Errorf("step %d (line %d): %w", i+1, st.line, err)
		}
	}
	return nil
}

// stepLines finds each step's line in the document.
func stepLines(doc *yaml.Node) []int {
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if doc.Content[i].Value == "steps" {
			var lines []int
			for _, st := range doc.Content[i+1].Content {
				lines = append(lines, st.Line)
			}
			return lines
		}
	}
	return nil
}

func (st *Step) kinds() int {
	n := 0
	for _, set := range []bool{st.Panel != nil, st.Send != nil, st.Expect != nil, st.Answer != nil,
		st.Approve != "", st.Reject != "", st.Wait != 0, st.Disconnect, st.Reconnect} {
		if set {
			n++
		}
	}
	return n
}

func (st *Step) check() error {
	switch {
	case st.Panel != nil && strings.TrimSpace(st.Panel.Command) == "":
		return errors.New("panel needs a command, e.g. panel: say hello")
	case st.Send != nil:
		if _, ok := st.Send["type"].(string); !ok {
			return errors.New("send needs a frame with a type, e.g. send: {type: user_message, content: hi}")
		}
	case st.Wait < 0:
		return errors.New("wait must not be negative")
	case st.Answer != nil:
		a := st.Answer
		if a.Action == "" {
			return errors.New("answer needs the action it answers, e.g. answer: {action: read, result: {content: hi}}")
		}
		b, err := json.Marshal(a.Result)
		if err != nil {
			return fmt.Errorf("answer result: %w", err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a.result); err != nil {
			return fmt.Errorf("answer result is not a browser_result: %w", err)
		}
		if a.Result == nil {
			a.result = wire.BrowserResult{}
		}
		if _, ok := a.Result["content"]; !ok {
			empty := ""
			a.result.Content = &empty
		}
	}
	return nil
}

// describe names a step for progress lines and failures.
func (st *Step) describe() string {
	switch {
	case st.Panel != nil:
		return "panel " + st.Panel.Command
	case st.Send != nil:
		return fmt.Sprintf("send %v", st.Send["type"])
	case st.Expect != nil:
		return "expect " + compact(st.Expect.Pattern)
	case st.Answer != nil:
		return "answer " + st.Answer.Action + " " + st.Answer.Selector + st.Answer.URL
	case st.Approve != "":
		return "approve " + st.Approve
	case st.Reject != "":
		return "reject " + st.Reject
	case st.Wait != 0:
		return "wait " + st.Wait.String()
	case st.Disconnect:
		return "disconnect"
	case st.Reconnect:
		return "reconnect"
	}
	return "step"
}

// normalize turns YAML-decoded values into what encoding/json decodes, so
// patterns and frames compare alike (numbers become float64).
func normalize(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// compact is v as one line of JSON.
func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
