package ollama

import (
	"encoding/json"
	"strings"

	"github.com/infer-workspace/infer/session/llm"
)

// Controls are the thinking controls a model advertises in /api/show's
// "thinking" object: {"values": [false, "low", ...], "default": ...}.
type Controls struct {
	// Known is false when the metadata was missing, malformed,
	// unavailable or late; nothing is then assumed about the model.
	Known bool
	// Off and On report the booleans among the values: false is the
	// off control (a general thinking capability does not imply one).
	Off, On bool
	// Levels are the named levels, as the model spells them.
	Levels []string
	// Default is the advertised default as text ("" when not said).
	Default string
}

// parseControls reads the "thinking" member of an /api/show answer. Any
// shape other than the documented one leaves Known false.
func parseControls(raw json.RawMessage) Controls {
	var th struct {
		Values  []json.RawMessage `json:"values"`
		Default json.RawMessage   `json:"default"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &th) != nil || len(th.Values) == 0 {
		return Controls{}
	}
	c := Controls{Known: true}
	for _, v := range th.Values {
		var b bool
		var s string
		switch {
		case json.Unmarshal(v, &b) == nil:
			if b {
				c.On = true
			} else {
				c.Off = true
			}
		case json.Unmarshal(v, &s) == nil && strings.TrimSpace(s) != "":
			c.Levels = append(c.Levels, s)
		default:
			return Controls{}
		}
	}
	if len(th.Default) > 0 && string(th.Default) != "null" {
		var s string
		if json.Unmarshal(th.Default, &s) == nil {
			c.Default = s
		} else {
			c.Default = string(th.Default)
		}
	}
	return c
}

// levelOrder ranks the level names whose order is known; a model's own
// names outside it are never assumed to be higher or lower than another.
var levelOrder = map[string]int{"minimal": 1, "low": 2, "medium": 3, "high": 4, "xhigh": 5, "max": 6}

// ThinkFor maps a reasoning effort to /api/chat's think value from the
// model's advertised controls (nil: leave think out, the model's default):
//
//	effort       | think
//	auto         | omitted (and no probe)
//	none         | false when advertised; else the lowest known level advertised; else omitted
//	low/med/high | the matching advertised level; true for on/off models without levels; else omitted
//	any          | omitted when the metadata was missing, malformed, unavailable or late
func ThinkFor(e llm.Effort, c Controls) any {
	if !c.Known {
		return nil
	}
	switch e {
	case llm.EffortNone:
		if c.Off {
			return false
		}
		best, rank := "", 0
		for _, l := range c.Levels {
			if r, ok := levelOrder[strings.ToLower(l)]; ok && (best == "" || r < rank) {
				best, rank = l, r
			}
		}
		if best != "" {
			return best
		}
	case llm.EffortLow, llm.EffortMedium, llm.EffortHigh:
		for _, l := range c.Levels {
			if strings.EqualFold(l, string(e)) {
				return l
			}
		}
		if len(c.Levels) == 0 && (c.On || c.Off) {
			return true
		}
	}
	return nil
}

// thinkLabel names a think value for rejection matching.
func thinkLabel(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case bool:
		if t {
			return "true"
		}
		return "false"
	case string:
		return strings.ToLower(t)
	}
	return ""
}
