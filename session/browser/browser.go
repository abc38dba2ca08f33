// Package browser defines what the workspace needs from a browser: a Driver
// that performs one action in the person's controlled tab and returns its
// outcome. The bridge implements it over the extension's WebSocket; tests and
// the simulator may implement it directly.
//
// It lives in session (not bridge) because session must not import bridge:
// the dependency points from the transport to the workspace, never back.
package browser

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Action is one of the browser actions of the bridge contract. Its value is
// the action's name on the wire: bridge/wire sends it as it is, so the
// actions are named here and nowhere else.
type Action string

// The actions of the contract.
const (
	Navigate   Action = "navigate"
	Click      Action = "click"
	Type       Action = "type"
	Read       Action = "read"
	Screenshot Action = "screenshot"
	Tabs       Action = "tabs"
)

// Actions lists every action, in the contract's order: drivers accept
// exactly these.
var Actions = []Action{Navigate, Click, Type, Read, Screenshot, Tabs}

// Check returns nil for one of Actions, and otherwise an error naming the
// ones there are.
func (a Action) Check() error {
	if slices.Contains(Actions, a) {
		return nil
	}
	names := make([]string, len(Actions))
	for i, k := range Actions {
		names[i] = string(k)
	}
	last := len(names) - 1
	return fmt.Errorf("browser: unknown action %q (want %s or %s)", a, strings.Join(names[:last], ", "), names[last])
}

// Command is one browser action. Only the fields its Action uses are set.
type Command struct {
	Action     Action
	URL        string
	Selector   string
	Text       string
	PressEnter bool
	// Timeout is the budget sent to the extension and enforced locally;
	// zero means the driver's default.
	Timeout time.Duration
}

// Result is the outcome of a successful command.
type Result struct {
	// URL and Title describe the controlled tab after the action.
	URL   string
	Title string
	// Content is the text of a read.
	Content string
	// Missing is true when a read found no element: opentask 1.12.1 answers
	// a missing selector with content null rather than an error.
	Missing bool
	// Image and ImageMIME are a screenshot's decoded bytes and type.
	Image     []byte
	ImageMIME string
	// Tabs is the result of a tabs action.
	Tabs []Tab
	// Events are optional browser-initiated notices, as raw JSON values.
	Events []string
}

// Tab is one open tab.
type Tab struct {
	Index      int
	URL        string
	Title      string
	Active     bool // focused in its window
	Controlled bool // the tab the agent drives (when the extension says so)
}

// Driver performs browser commands. Implementations are safe for concurrent
// use, return exactly one outcome per call, and honour ctx cancellation.
type Driver interface {
	Do(ctx context.Context, cmd Command) (Result, error)
}

// ErrNotConnected is returned at once when no extension is connected, so a
// model can relay the problem instead of waiting out a timeout.
var ErrNotConnected = errors.New("no browser extension is connected to infer (run `infer pair` for the pairing steps)")

// ErrDisconnected is returned for commands that were in flight when the
// extension's connection dropped or was replaced.
var ErrDisconnected = errors.New("browser extension disconnected before answering")

// ErrTimeout is returned when the extension did not answer within the
// command's timeout.
var ErrTimeout = errors.New("browser extension did not answer in time")

// ErrFlapping is returned at once, instead of sending the command, while two
// browsers with the extension and the same token keep replacing each
// other's connection (Status.Flapping): a command would reach whichever
// one holds the socket at that instant, and its answer could come from
// the other person's tabs. Commands flow again once the replacements stop.
var ErrFlapping = errors.New("two browsers with the extension and this token keep replacing each other, so browser commands are paused until one of them is closed")

// CommandError is a failure the extension itself reported (its result's
// error field), e.g. a navigation error or an inaccessible page.
type CommandError struct {
	Action  Action
	Message string
}

func (e *CommandError) Error() string {
	return "browser " + string(e.Action) + " failed: " + e.Message
}

// State is the extension connection's state as front ends show it.
type State int

// Connection states.
const (
	// Waiting: no extension has connected since infer started.
	Waiting State = iota
	// Connected: an authenticated extension is live.
	Connected
	// Disconnected: the extension was connected and went away.
	Disconnected
)

func (s State) String() string {
	switch s {
	case Connected:
		return "connected"
	case Disconnected:
		return "disconnected"
	default:
		return "waiting"
	}
}

// Status describes the extension connection at one moment.
type Status struct {
	State            State
	ExtensionVersion string
	// Since is when State last changed.
	Since time.Time
	// RTT is the latest WebSocket ping round trip (zero until measured).
	RTT time.Duration
	// Reason says why the extension disconnected, or why the latest
	// connection attempt was refused (never containing a token).
	Reason string
	// Via names the other infer whose browser this one uses ("infer in
	// ~/src/app (pid 4242)"), empty while this infer holds the bridge
	// itself: front ends say whose browser it is, and show the change when
	// this infer takes the port over.
	Via string
	// Flapping, when not zero, is how many times the live connection was
	// replaced by a newer one within the bridge's flap window: two
	// browsers with the extension and the same token taking turns, each
	// redialing as soon as the other replaces it.
	Flapping int
}

// CommandRecord is a finished browser command, for the browser pane's log.
type CommandRecord struct {
	Action  Action
	Target  string // URL or selector, shortened for display
	Started time.Time
	Latency time.Duration
	Err     string // empty on success
}

// Target is what a command acts on, for a log line: the URL of a
// navigation, the selector otherwise, cut to 80 characters.
func (c Command) Target() string {
	t := c.Selector
	if c.Action == Navigate {
		t = c.URL
	}
	const maxRunes = 80
	if utf8.RuneCountInString(t) <= maxRunes {
		return t
	}
	r := []rune(t)
	return string(r[:maxRunes-1]) + "…"
}
