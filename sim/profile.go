package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
)

// Profile is how a particular extension uses the protocol: what its panel
// sends on its own, which frames it never sends, which it ignores, and how
// its panel shows approvals. The client, the panel commands and the
// scenario runner all consult the same Profile, so a simulated session
// behaves like the extension it names from the first frame to the last.
//
// Profiles are values; the two known ones are Contract and OpenTask.
type Profile struct {
	// Name is what --profile takes ("" for Contract).
	Name string
	// ExtensionVersion is sent in browser_hello unless the client options
	// set one.
	ExtensionVersion string
	// Origin is the upgrade request's Origin unless the options set one.
	Origin string
	// AfterHello are sent at once, in order, after every browser_hello_ack.
	AfterHello []wire.Frame
	// ResumeOnReconnect re-sends resume_conversation with the last resumed
	// id after every reconnection.
	ResumeOnReconnect bool
	// FixedCommandTimeout, when set, replaces every command's timeout_ms.
	FixedCommandTimeout time.Duration
	// NeverSends are frame types the extension does not send; the client
	// refuses them with a *RefusedError instead of putting them on the wire.
	NeverSends []string
	// Ignores are frame types the extension drops on arrival: they reach
	// no subscription, panel or waiting call (a recording still has them).
	Ignores []string
	// SingleApproval shows one approval at a time: a new request replaces
	// the one shown, so only the latest can be answered.
	SingleApproval bool
	// NewChat is what the panel's New chat button sends: "" for
	// new_session, otherwise a user_message with this content.
	NewChat string
	// Browser is the fake browser's profile that matches this extension.
	Browser string
}

// Contract is the full bridge contract (docs/protocol.md):
// every frame may be sent, none is ignored, approvals queue up, and nothing
// is sent unprompted after the hello.
var Contract = &Profile{
	ExtensionVersion: "infer-sim",
	Origin:           "chrome-extension://infer-sim",
}

// OpenTask is the real extension, opentask 1.12.1, as recorded in
// sim/recording/testdata/opentask-1.12.1.jsonl.
var OpenTask = &Profile{
	Name:             "opentask-1.12.1",
	ExtensionVersion: "1.12.1",
	Origin:           "chrome-extension://pldlmnnoajphnolpalndfdodmojkjalc",
	AfterHello:       []wire.Frame{wire.ListConversations{}, wire.ListSkills{}},

	ResumeOnReconnect:   true,
	FixedCommandTimeout: 30 * time.Second,
	NeverSends: typesOf(
		wire.NewSession{}, wire.Interrupt{}, wire.ListHistory{}, wire.ListModels{},
		wire.SelectModel{}, wire.SetMode{}, wire.ToolRequest{},
	),
	Ignores: typesOf(
		wire.Mode{}, wire.History{}, wire.Models{}, wire.Interrupted{}, wire.ToolResult{},
	),
	SingleApproval: true,
	NewChat:        "/clear",
	Browser:        "opentask-1.12.1",
}

// typesOf names the frames' types, so that a profile lists frames by their
// Go types rather than by spelling their names again.
func typesOf(frames ...wire.Frame) []string {
	names := make([]string, len(frames))
	for i, f := range frames {
		names[i] = f.FrameType()
	}
	return names
}

// Profiles lists the known profiles by name.
var Profiles = []*Profile{Contract, OpenTask}

// ProfileByName finds a profile; "" and "contract" name Contract.
func ProfileByName(name string) (*Profile, error) {
	if name == "" || name == "contract" {
		return Contract, nil
	}
	for _, p := range Profiles {
		if p.Name == name {
			return p, nil
		}
	}
	names := []string{"contract"}
	for _, p := range Profiles[1:] {
		names = append(names, p.Name)
	}
	return nil, fmt.Errorf("unknown profile %q: use one of %s", name, strings.Join(names, ", "))
}

// String is the profile's name as --profile takes it.
func (p *Profile) String() string {
	if p == nil || p.Name == "" {
		return "contract"
	}
	return p.Name
}

// Sends reports whether the extension ever sends frames of type typ.
func (p *Profile) Sends(typ string) bool {
	return p == nil || !slices.Contains(p.NeverSends, typ)
}

// Ignored reports whether the extension drops frames of type typ.
func (p *Profile) Ignored(typ string) bool {
	return p != nil && slices.Contains(p.Ignores, typ)
}

// RefusedError is a frame the profile's extension never sends.
type RefusedError struct {
	Profile string
	Type    string
}

// Error says which profile refused which frame and how to send it anyway.
func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s never sends %s frames, so the simulated panel does not either (use --profile contract for the full protocol)", e.Profile, e.Type)
}
