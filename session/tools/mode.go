package tools

import "strings"

// Mode is the agent's permission mode, shared by every front end.
type Mode string

// The modes, by their canonical keys (the wire protocol's vocabulary).
const (
	// Standard runs read-only tools, allowlisted Bash and granted calls,
	// and asks about everything else.
	Standard Mode = "standard"
	// Plan runs read-only tools and read-only Bash only; anything that
	// would change files or pages is refused with a reason.
	Plan Mode = "plan"
	// Auto runs everything except the deny list and paths outside the
	// project, which ask.
	Auto Mode = "auto"
	// AutoWithJudge is Auto, except that each call Standard would ask about
	// goes to a Judge first, which may pass it to the person.
	AutoWithJudge Mode = "auto-with-judge"
)

var modes = []Mode{Standard, Plan, Auto, AutoWithJudge}

// Modes lists the modes in shift+tab cycle order.
func Modes() []Mode { return append([]Mode(nil), modes...) }

// ParseMode reads a mode key, ignoring case and surrounding space and
// accepting auto_with_judge for auto-with-judge.
func ParseMode(s string) (Mode, bool) {
	s = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-")
	for _, m := range modes {
		if string(m) == s {
			return m, true
		}
	}
	return "", false
}

// Next is the mode after m in the shift+tab cycle: standard → plan →
// auto → auto-with-judge → standard. An unknown mode goes to Standard.
func Next(m Mode) Mode {
	for i, x := range modes {
		if x == m {
			return modes[(i+1)%len(modes)]
		}
	}
	return Standard
}

// Description says in a few words what m lets the agent do.
func (m Mode) Description() string {
	switch m {
	case Standard:
		return "reads run; changes ask first"
	case Plan:
		return "read-only: the agent plans, nothing changes"
	case Auto:
		return "everything runs except the deny list"
	case AutoWithJudge:
		return "a judge model reviews what would ask; doubts go to you"
	}
	return "unknown mode"
}
