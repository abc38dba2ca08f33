package approvals

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/tui/theme"
)

// pane returns a focused pane of 100×30 showing a, its guard passed.
func pane(t *testing.T, a session.Approval) *Model {
	t.Helper()
	now := time.Unix(1_700_000_000, 0)
	m := New(theme.New(true, true), func() time.Time { return now })
	m.SetSize(100, 30)
	m.SetFocused(true)
	m.Add(a)
	now = now.Add(Guard)
	return m
}

func press(m *Model, k string) Action {
	var msg tea.KeyPressMsg
	switch k {
	case "enter":
		msg = tea.KeyPressMsg{Code: tea.KeyEnter}
	default:
		msg = tea.KeyPressMsg{Code: rune(k[0]), Text: k}
	}
	return m.HandleKey(msg)
}

// screen is the pane's text, without colours or border, its lines'
// spaces closed up so wrapped words read as one line.
func screen(m *Model) string {
	s := strings.NewReplacer("┃", " ", "│", " ").Replace(ansi.Strip(m.View()))
	return strings.Join(strings.Fields(s), " ")
}

func rmApproval() session.Approval {
	return session.Approval{
		ID:      "ap1",
		Call:    tools.Call{ID: "c1", Name: "Bash", Origin: tools.OriginAgent, Args: `{"command":"rm -rf /"}`},
		Why:     "Bash command needs approval in every mode: rm -rf /",
		Sandbox: "Runs inside the sandbox: writes only the project, network through infer.",
		Outside: true,
	}
}

// TestAlwaysWithoutAnOfferDoesNothing: with no "always" offered (the box
// for rm -rf /), a is not a second allow key: nothing is answered, the
// request stays, and the box says why.
func TestAlwaysWithoutAnOfferDoesNothing(t *testing.T) {
	m := pane(t, rmApproval())
	if act := press(m, "a"); act.Kind != None {
		t.Fatalf("a with no always offered: %+v, want nothing", act)
	}
	if m.Len() != 1 {
		t.Fatal("a with no always offered took the request away")
	}
	if s := screen(m); !strings.Contains(s, "no 'always' for this request") {
		t.Errorf("the box does not say why a did nothing:\n%s", s)
	}
	// The next key clears the hint; y still allows once.
	act := press(m, "y")
	if act.Kind != Answer || act.Decision.Kind != tools.AllowOnce {
		t.Errorf("y after a: %+v", act)
	}
}

// TestAlwaysWithAnOfferSaves: when a grant is offered, a saves it.
func TestAlwaysWithAnOfferSaves(t *testing.T) {
	a := rmApproval()
	a.Call.Args = `{"command":"rm -rf build/"}`
	a.Options = []tools.GrantOption{{Label: "Always allow Bash commands starting with `rm -rf build/`"}}
	m := pane(t, a)
	if act := press(m, "a"); act.Kind != Answer || act.Decision.Kind != tools.AllowAlways {
		t.Errorf("a with always offered: %+v", act)
	}
}

// TestTheBoxSaysWhereTheCommandRuns: one plain line, as the pipeline
// words it, with no word of the browser panel; the outside choice has
// its own key, shown only when offered.
func TestTheBoxSaysWhereTheCommandRuns(t *testing.T) {
	for _, c := range []struct {
		name, where string
		outside     bool
	}{
		{"inside", "Runs inside the sandbox: writes only the project, network through infer.", true},
		{"outside", "Runs OUTSIDE the sandbox, with your full permissions: the sandbox is off (sandbox.mode: off).", false},
		{"no sandbox", "Runs with your full permissions: there is no sandbox on this machine to run it in.", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := rmApproval()
			a.Sandbox, a.Outside = c.where, c.outside
			s := screen(pane(t, a))
			if !strings.Contains(s, c.where) {
				t.Errorf("the where-line %q is not shown:\n%s", c.where, s)
			}
			if strings.Contains(s, "Sandbox:") || strings.Contains(s, "panel") {
				t.Errorf("the box words where the command runs in more than its one line:\n%s", s)
			}
			if got := strings.Contains(s, "o run outside the sandbox, once"); got != c.outside {
				t.Errorf("the outside key shown: %v, want %v:\n%s", got, c.outside, s)
			}
		})
	}
}

// TestOutsideIsItsOwnKey: o answers "run it outside the sandbox, once";
// y and enter answer "allow once", which runs it inside.
func TestOutsideIsItsOwnKey(t *testing.T) {
	m := pane(t, rmApproval())
	if act := press(m, "o"); act.Kind != Answer || act.Decision != (tools.Decision{Kind: tools.AllowOutside}) {
		t.Errorf("o: %+v, want the outside decision", act)
	}
	for _, k := range []string{"y", "enter"} {
		m = pane(t, rmApproval())
		if act := press(m, k); act.Kind != Answer || act.Decision != (tools.Decision{Kind: tools.AllowOnce}) {
			t.Errorf("%s: %+v, want allow once", k, act)
		}
	}
}

// TestOutsideNotOfferedDoesNothing: a request that cannot run outside
// (a network host, a Write, no sandbox at all) takes no answer from o.
func TestOutsideNotOfferedDoesNothing(t *testing.T) {
	a := rmApproval()
	a.Outside = false
	m := pane(t, a)
	if act := press(m, "o"); act.Kind != None || m.Len() != 1 {
		t.Fatalf("o not offered: %+v, %d waiting", act, m.Len())
	}
	if s := screen(m); !strings.Contains(s, "no 'outside the sandbox' choice") {
		t.Errorf("the box does not say why o did nothing:\n%s", s)
	}
}
