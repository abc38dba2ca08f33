package tools

import (
	"encoding/json"
	"fmt"

	"github.com/infer-workspace/infer/internal/termtext"
	"github.com/infer-workspace/infer/session/sandbox"
	"github.com/infer-workspace/infer/session/tools/bashguard"
	"github.com/infer-workspace/infer/session/tools/grants"
)

// Origin says where a call came from, for display and logs. It never
// changes the permission decision: a `!cmd` typed by the person needs the
// same approval as the agent's Bash call, and the panel's tool_request
// goes through the same policy because a web page could drive the
// extension.
type Origin string

// Origins.
const (
	OriginAgent    Origin = "agent"    // the model's tool call
	OriginPanel    Origin = "panel"    // the extension's tool_request
	OriginTerminal Origin = "terminal" // the person, from the TUI
	OriginShell    Origin = "shell"    // a `!cmd` message
	OriginHeadless Origin = "headless" // `infer headless`
	// OriginMCP is another agent calling through `infer mcp`; the value
	// reads well in "The MCP client asked to run …".
	OriginMCP Origin = "MCP client"
)

// Label is how people read an origin ("answered in the browser panel").
func (o Origin) Label() string {
	switch o {
	case OriginAgent:
		return "agent"
	case OriginPanel:
		return "browser panel"
	case OriginTerminal:
		return "terminal"
	case OriginShell:
		return "shell (!command)"
	case OriginHeadless:
		return "headless"
	case "":
		return "unknown"
	}
	// An origin from elsewhere is drawn on terminals: made safe like any
	// other foreign string.
	return termtext.Line(string(o))
}

// Call is one request to run a tool.
type Call struct {
	ID   string
	Name string
	// Args is the raw JSON text of the arguments object.
	Args   string
	Origin Origin
}

// PermissionKind is the policy's answer for a call.
type PermissionKind int

// Permission kinds.
const (
	// Allow: run without asking.
	Allow PermissionKind = iota
	// Ask: run only if the person (or, first, the judge) approves.
	Ask
	// Refuse: do not run and do not ask; the reason goes to the model.
	Refuse
)

// String returns "allow", "ask" or "refuse".
func (k PermissionKind) String() string {
	switch k {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	default:
		return "refuse"
	}
}

// Permission is the policy's decision for one call in one mode.
type Permission struct {
	Kind PermissionKind
	// Why explains the decision: what allowed it ("on the read-only
	// allowlist (git log *)"), or why it asks or is refused ("Bash command
	// is not allowlisted: pipes are never auto-approved").
	Why string
	// Judge is set on Ask in auto-with-judge mode when the judge should see
	// the call before the person does. Deny-list matches and paths outside
	// the project go straight to the person.
	Judge bool
	// Options are the grants an "always allow" answer may save, narrowest
	// first; empty when none applies (e.g. outside the project).
	Options []GrantOption
	// LocalOnly is set on Ask when only an answer at infer itself counts:
	// the browser panel (a web page) cannot approve the call. Writes to
	// .git and .infer run in-process, where no sandbox could hold them.
	LocalOnly bool
	// Site is set on Allow when a site grant let the call through: the
	// grant covers the call only while the page stays on this site (see
	// offsite.go).
	Site string
}

// GrantOption is one "always allow" choice offered with an approval.
type GrantOption struct {
	Grant grants.Grant
	// Label describes the choice for people, e.g. "Always allow Bash
	// commands starting with `git commit` in this project".
	Label string
}

// pathTool is implemented by tools that touch files, for the outside-the-
// project rule.
type pathTool interface {
	paths(args json.RawMessage) []string
}

// siteTool is implemented by browser tools that act on a page, for site
// grants.
type siteTool interface {
	site(env *Env, args json.RawMessage) string
}

func (readTool) paths(raw json.RawMessage) []string  { return pathArg(raw, "") }
func (writeTool) paths(raw json.RawMessage) []string { return pathArg(raw, "") }
func (editTool) paths(raw json.RawMessage) []string  { return pathArg(raw, "") }
func (grepTool) paths(raw json.RawMessage) []string  { return pathArg(raw, ".") }
func (treeTool) paths(raw json.RawMessage) []string  { return pathArg(raw, ".") }

func pathArg(raw json.RawMessage, def string) []string {
	var a pathArgs
	_ = decode(raw, &a)
	if a.Path == "" {
		a.Path = def
	}
	if a.Path == "" {
		return nil
	}
	return []string{a.Path}
}

func (navigateTool) site(_ *Env, raw json.RawMessage) string {
	var a navigateArgs
	_ = decode(raw, &a)
	return siteOf(a.URL)
}

// Click and Type act on whatever the controlled tab shows, so their site
// is the tab's current URL (see Env.CurrentURL).
func (clickTool) site(env *Env, _ json.RawMessage) string { return siteOf(env.pageURL()) }
func (typeTool) site(env *Env, _ json.RawMessage) string  { return siteOf(env.pageURL()) }

// externalTool is implemented by read-only tools that still ask in
// standard and plan mode because they send something out of the machine;
// external says what.
type externalTool interface {
	external() string
}

// policy decides permissions; it holds no state of its own beyond its
// inputs, and re-reads grants on every decision so revokes apply at once.
type policy struct {
	env    *Env
	guard  *bashguard.Guard
	grants *grants.Store
}

// decide applies the mode to a validated call of t.
func (p *policy) decide(t Tool, call Call, args json.RawMessage, mode Mode) Permission {
	return p.decideOn(resolvePaths(p.env, t, args), t, call, args, mode)
}

// decideOn is decide on paths already resolved, the ones the tool will
// then open.
func (p *policy) decideOn(j resolvedPaths, t Tool, call Call, args json.RawMessage, mode Mode) Permission {
	if et, ok := t.(ExternalTool); ok {
		return p.externalDecision(et, mode)
	}
	if perm, ok := p.offSitePage(t); ok {
		return perm
	}
	if isBrowser(t) && p.env.Browser == nil && p.env.BrowserOff != "" {
		// With browser use off the tool fails before it does anything, so
		// asking the person first would only make them approve a failure.
		return Permission{Kind: Allow, Why: "no browser is available, so the call fails without acting"}
	}
	if outside := p.outsidePath(j, t, args); outside != "" {
		if mode == Plan && !t.ReadOnly() {
			return p.planRefusal(t, args)
		}
		// Read, Write and the rest run in infer's own process, where no
		// sandbox holds them: only a person at infer may let them out of
		// the project, not the panel (Bash, confined when the panel
		// allows it, may be).
		return Permission{Kind: Ask, LocalOnly: !isBash(t), Why: fmt.Sprintf("%s would touch %s, which is outside the project (%s)", t.Name(), outside, p.env.Root)}
	}
	if hidden := p.hiddenPath(j, t, args); hidden != "" {
		if mode == Plan && !t.ReadOnly() {
			return p.planRefusal(t, args)
		}
		// What the sandbox keeps from every command (the bridge token,
		// ~/.ssh, …) is inside the project only when the project holds
		// the home folder; the file tools, outside the sandbox, ask a
		// person at infer for it each time, never the panel.
		return Permission{Kind: Ask, LocalOnly: true, Why: fmt.Sprintf("%s would touch %s, which infer hides from every command (its own files, a secret store or sandbox.deny_read): a person approves it at infer itself", t.Name(), hidden)}
	}
	if isBash(t) && !p.env.unaskedBashOK() {
		if mode == Plan {
			if ok, _ := p.guard.Allowed(bashCommand(args), true); !ok {
				return p.planRefusal(t, args)
			}
		}
		// Fail closed: with nothing to confine it, no command runs
		// without a person, and nothing is offered that would let later
		// ones through unconfined.
		return Permission{Kind: Ask, Why: "no sandbox is available (" + p.env.Sandbox.Problem().Error() + "), so every Bash command asks"}
	}
	if prot := p.protectedPath(j, t, args); prot != "" {
		if mode == Plan {
			return p.planRefusal(t, args)
		}
		// Never the judge, never "always": a change here would let the
		// next git command or infer start run what the agent wrote.
		return Permission{Kind: Ask, LocalOnly: true, Why: fmt.Sprintf("%s would change %s, which infer protects (git's repository folder, infer's project settings): a person approves each change at infer itself", t.Name(), prot)}
	}
	switch mode {
	case Plan:
		return p.plan(t, args)
	case Auto:
		return p.auto(t, args)
	case AutoWithJudge:
		if a := p.auto(t, args); a.Kind != Allow {
			return a
		}
		s := p.standard(t, args)
		if s.Kind == Ask {
			s.Judge = true
		}
		return s
	default:
		return p.standard(t, args)
	}
}

// hiddenPath returns the first path of the call that the sandbox hides
// from commands (see Env.hiddenPaths), or "".
func (p *policy) hiddenPath(j resolvedPaths, t Tool, args json.RawMessage) string {
	pt, ok := t.(pathTool)
	if !ok || len(p.env.Confine.DenyRead) == 0 {
		return ""
	}
	hidden := p.env.hiddenPaths()
	for _, raw := range pt.paths(args) {
		abs, err := resolve(p.env, raw)
		if err != nil {
			continue
		}
		if real, ok := j.real[abs]; ok && hiddenBy(hidden, real) != "" {
			return real
		}
	}
	return ""
}

func (p *policy) outsidePath(j resolvedPaths, t Tool, args json.RawMessage) string {
	pt, ok := t.(pathTool)
	if !ok {
		return ""
	}
	for _, raw := range pt.paths(args) {
		abs, err := resolve(p.env, raw)
		if err != nil {
			continue // the tool reports the bad path itself
		}
		real := j.real[abs]
		if !j.inside(real) {
			// Name the real file too: a link inside the project is
			// approved for what it reaches, not for where it sits.
			if real != abs {
				return abs + " (really " + real + ")"
			}
			return abs
		}
	}
	return ""
}

// protectedPath returns the first path a file-changing tool would touch
// that is one of the project's protected paths (sandbox.ProtectedPaths),
// links resolved, or "".
func (p *policy) protectedPath(j resolvedPaths, t Tool, args json.RawMessage) string {
	pt, ok := t.(pathTool)
	if !ok || t.ReadOnly() || j.root == "" {
		return ""
	}
	for _, raw := range pt.paths(args) {
		abs, err := resolve(p.env, raw)
		if err != nil {
			continue
		}
		if real := j.real[abs]; sandbox.IsProtected(j.root, real) {
			return real
		}
	}
	return ""
}

func bashCommand(args json.RawMessage) string {
	var a bashArgs
	_ = decode(args, &a)
	return a.Command
}

func isBash(t Tool) bool { _, ok := t.(bashTool); return ok }

func (p *policy) standard(t Tool, args json.RawMessage) Permission {
	if isBash(t) {
		cmd := bashCommand(args)
		if ok, why := p.guard.CheckAuto(cmd); !ok {
			return Permission{Kind: Ask, Why: "Bash command needs approval in every mode: " + why}
		}
		ok, why := p.guard.Allowed(cmd, false)
		if ok {
			return Permission{Kind: Allow, Why: why}
		}
		g, err := p.grantFor(t, args)
		switch {
		case err != nil:
			return Permission{Kind: Ask, Why: err.Error()}
		case g != nil:
			return Permission{Kind: Allow, Why: "saved permission: " + g.String()}
		}
		return Permission{Kind: Ask, Why: "Bash command is not allowlisted: " + why, Options: p.options(t, args)}
	}
	if et, ok := t.(externalTool); ok {
		return p.askExternal(t, et, args)
	}
	if t.ReadOnly() {
		return Permission{Kind: Allow, Why: "read-only tool"}
	}
	g, err := p.grantFor(t, args)
	switch {
	case err != nil:
		return Permission{Kind: Ask, Why: err.Error()}
	case g != nil:
		return Permission{Kind: Allow, Why: "saved permission: " + g.String(), Site: grantSite(g)}
	}
	what := "changes files"
	if st, ok := t.(siteTool); ok {
		what = "acts on a web page"
		if site := st.site(p.env, args); site != "" {
			what += " (" + site + ")"
		}
	}
	return Permission{Kind: Ask, Why: fmt.Sprintf("%s %s, which needs approval in standard mode", t.Name(), what), Options: p.options(t, args)}
}

func (p *policy) plan(t Tool, args json.RawMessage) Permission {
	if isBash(t) {
		if ok, why := p.guard.Allowed(bashCommand(args), true); ok {
			return Permission{Kind: Allow, Why: why}
		}
		return p.planRefusal(t, args)
	}
	if et, ok := t.(externalTool); ok {
		return p.askExternal(t, et, args)
	}
	if t.ReadOnly() {
		return Permission{Kind: Allow, Why: "read-only tool"}
	}
	return p.planRefusal(t, args)
}

// askExternal asks for a call that sends something out, unless a saved
// grant covers the tool.
func (p *policy) askExternal(t Tool, et externalTool, args json.RawMessage) Permission {
	g, err := p.grantFor(t, args)
	switch {
	case err != nil:
		return Permission{Kind: Ask, Why: err.Error()}
	case g != nil:
		return Permission{Kind: Allow, Why: "saved permission: " + g.String()}
	}
	return Permission{Kind: Ask, Why: et.external() + ", which needs approval", Options: p.options(t, args)}
}

func (p *policy) planRefusal(t Tool, args json.RawMessage) Permission {
	if isBash(t) {
		_, why := p.guard.Allowed(bashCommand(args), true)
		return Permission{Kind: Refuse, Why: "plan mode: only read-only Bash commands run while planning, and " + why + "; describe the command instead, or ask the person to switch mode"}
	}
	return Permission{Kind: Refuse, Why: fmt.Sprintf("plan mode: %s is not allowed while planning; describe the change instead, or ask the person to switch mode", t.Name())}
}

func (p *policy) auto(t Tool, args json.RawMessage) Permission {
	if isBash(t) {
		if ok, why := p.guard.CheckAuto(bashCommand(args)); !ok {
			return Permission{Kind: Ask, Why: "Bash command needs approval in every mode: " + why}
		}
	}
	return Permission{Kind: Allow, Why: "auto mode"}
}

// grantFor returns the saved grant covering the call, if any. A tool-wide
// grant never covers Bash: Bash grants are prefixes, so that structurally
// unsafe commands always ask.
func (p *policy) grantFor(t Tool, args json.RawMessage) (*grants.Grant, error) {
	if p.grants == nil {
		return nil, nil
	}
	list, err := p.grants.List()
	if err != nil {
		return nil, fmt.Errorf("%s needs approval because saved permissions could not be read: %v", t.Name(), err)
	}
	name := t.Name()
	var cmd, site string
	if isBash(t) {
		cmd = bashCommand(args)
	}
	if st, ok := t.(siteTool); ok {
		site = st.site(p.env, args)
	}
	for i, g := range list {
		if g.Tool != name {
			continue
		}
		switch g.Kind {
		case grants.KindTool:
			if !isBash(t) {
				return &list[i], nil
			}
		case grants.KindBash:
			if isBash(t) && bashguard.Covers(g.Prefix, cmd) {
				return &list[i], nil
			}
		case grants.KindSite:
			if site != "" && g.Site == site {
				return &list[i], nil
			}
		}
	}
	return nil, nil
}

// options lists what "always allow" may save for a call that asks.
func (p *policy) options(t Tool, args json.RawMessage) []GrantOption {
	if p.grants == nil {
		return nil
	}
	name := t.Name()
	if isBash(t) {
		prefix := bashguard.Prefix(bashCommand(args))
		if prefix == "" {
			return nil
		}
		return []GrantOption{{
			Grant: grants.Grant{Kind: grants.KindBash, Tool: name, Prefix: prefix},
			Label: "Always allow Bash commands starting with `" + prefix + "` in this project",
		}}
	}
	var out []GrantOption
	if st, ok := t.(siteTool); ok {
		if site := st.site(p.env, args); site != "" {
			out = append(out, GrantOption{
				Grant: grants.Grant{Kind: grants.KindSite, Tool: name, Site: site},
				Label: "Always allow " + name + " on " + site,
			})
		}
		return append(out, GrantOption{
			Grant: grants.Grant{Kind: grants.KindTool, Tool: name},
			Label: "Always allow " + name + " on every site",
		})
	}
	label := "Always allow " + name + " in this project (paths outside it still ask)"
	if _, ok := t.(externalTool); ok {
		label = "Always allow " + name + " in this project"
	}
	return []GrantOption{{Grant: grants.Grant{Kind: grants.KindTool, Tool: name}, Label: label}}
}
