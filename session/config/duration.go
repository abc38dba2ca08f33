package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String renders d the way a person would write it: "30s", "2m", "1h30m".
func (d Duration) String() string {
	s := time.Duration(d).String()
	// time.Duration prints trailing zero units ("2m0s", "1h0m0s").
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// MarshalYAML writes d as a duration string.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// UnmarshalYAML reads a duration string such as "30s", "1.5m" or "2h".
// A bare number is refused because its unit would be a guess.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("expected a duration such as 30s or 2m, found %s", describeNode(n))
	}
	if n.Tag == "!!null" {
		return nil
	}
	v := strings.TrimSpace(n.Value)
	if _, err := strconv.ParseFloat(v, 64); err == nil && v != "0" {
		if q, ok := shownNumber(v); ok {
			return fmt.Errorf("%s has no unit; write it with one, e.g. %ss", q, v)
		}
		return errors.New("a number without a unit; write it with one, e.g. 30s or 2m")
	}
	parsed, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("%s is not a duration; write it like 30s, 2m or 1h30m", quoteValue(v))
	}
	*d = Duration(parsed)
	return nil
}
