package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/infer-workspace/infer/session/tools/grants"
)

// Source is a changing set of tools that other programs provide, such as
// the tools of the person's MCP servers. Unlike the Registry it changes
// while infer runs (a server finishes starting, crashes, lists new tools),
// so the pipeline asks it afresh for every model request and every call.
type Source interface {
	// Tools lists the tools callable now, for model requests.
	Tools() []Tool
	// Lookup finds a tool by name. It may wait, bounded by ctx and the
	// source's own start timeout, for a provider that is still starting,
	// so that a call made right after infer starts is not refused.
	Lookup(ctx context.Context, name string) (Tool, bool)
}

// A Source may also say why a name it would offer cannot be called now
// (its server failed, say), with a method Unavailable(name string) string
// returning "" when it has nothing to say; the pipeline then gives the
// model that reason instead of "unknown tool".

// ExternalTool is implemented by tools another program provides. infer
// cannot know what they do: their schema is the provider's, who validates
// the arguments, and ReadOnly is the provider's claim (an MCP server's
// readOnlyHint), which the policy believes only to refuse: plan mode
// refuses a tool that does not claim to be read-only, and every call asks
// unless a saved grant covers it or the mode is auto.
type ExternalTool interface {
	Tool
	// Provider names the program that offers the tool (the MCP server's
	// configured name), for grants that cover all of its tools.
	Provider() string
}

// lookup finds a built-in tool, else one of the sources' tools.
func (p *Pipeline) lookup(ctx context.Context, name string) (Tool, bool) {
	if t, ok := p.reg.Lookup(name); ok {
		return t, true
	}
	for _, s := range p.sources {
		if t, ok := s.Lookup(ctx, name); ok {
			return t, true
		}
	}
	return nil, false
}

// validate checks call's arguments: against the compiled schema for a
// built-in tool; for an external tool only that they are a JSON object,
// because its provider checks the rest and its schema may use keywords
// this package does not compile.
func (p *Pipeline) validate(t Tool, name, args string) error {
	if _, ok := t.(ExternalTool); !ok {
		return p.reg.Validate(name, args)
	}
	if strings.TrimSpace(args) == "" {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &obj); err != nil || obj == nil {
		return fmt.Errorf("%s: the arguments must be a JSON object", name)
	}
	return nil
}

// unknown is the error for a tool name nobody offers, listing every tool
// that is offered now.
func (p *Pipeline) unknown(name string) error {
	for _, s := range p.sources {
		if e, ok := s.(interface{ Unavailable(string) string }); ok {
			if why := e.Unavailable(name); why != "" {
				return errors.New(why)
			}
		}
	}
	err := p.reg.unknown(name)
	var more []string
	for _, s := range p.sources {
		for _, t := range s.Tools() {
			more = append(more, t.Name())
		}
	}
	if len(more) == 0 {
		return err
	}
	return fmt.Errorf("%v, and from MCP servers %s", err, strings.Join(more, ", "))
}

// externalDecision is the policy for a tool another program provides (see
// ExternalTool): auto runs it, plan refuses it unless it claims to only
// read, and otherwise a saved grant for it or its provider runs it, else
// the person (or in auto-with-judge the judge first) is asked.
func (p *policy) externalDecision(t ExternalTool, mode Mode) Permission {
	switch mode {
	case Auto:
		return Permission{Kind: Allow, Why: "auto mode"}
	case Plan:
		if !t.ReadOnly() {
			return Permission{Kind: Refuse, Why: fmt.Sprintf("plan mode: %s is a tool of the MCP server %s that does not say it only reads, so it is not allowed while planning; describe what it would do instead, or ask the person to switch mode", t.Name(), t.Provider())}
		}
	}
	if g, err := p.externalGrant(t); err != nil {
		return Permission{Kind: Ask, Why: err.Error()}
	} else if g != nil {
		return Permission{Kind: Allow, Why: "saved permission: " + g.String()}
	}
	claim := "it does not say it only reads"
	if t.ReadOnly() {
		claim = "it says it only reads, which infer cannot check"
	}
	perm := Permission{
		Kind: Ask, Judge: mode == AutoWithJudge,
		Why: fmt.Sprintf("%s is a tool of the MCP server %s (%s); tools of MCP servers ask before they run", t.Name(), t.Provider(), claim),
	}
	if p.grants != nil {
		perm.Options = []GrantOption{
			{Grant: grants.Grant{Kind: grants.KindTool, Tool: t.Name()}, Label: "Always allow " + t.Name() + " in this project"},
			{Grant: grants.Grant{Kind: grants.KindServer, Tool: ServerToolPrefix(t.Provider()) + "*", Server: t.Provider()}, Label: "Always allow every tool of the MCP server " + t.Provider() + " in this project"},
		}
	}
	return perm
}

// externalGrant returns the saved grant covering t, if any.
func (p *policy) externalGrant(t ExternalTool) (*grants.Grant, error) {
	if p.grants == nil {
		return nil, nil
	}
	list, err := p.grants.List()
	if err != nil {
		return nil, fmt.Errorf("%s needs approval because saved permissions could not be read: %v", t.Name(), err)
	}
	for i, g := range list {
		switch {
		case g.Kind == grants.KindTool && g.Tool == t.Name():
			return &list[i], nil
		case g.Kind == grants.KindServer && g.Server == t.Provider():
			return &list[i], nil
		}
	}
	return nil, nil
}

// ServerToolPrefix is how the names of an MCP server's tools start:
// mcp__<server>__, as Claude Code and Codex name them, so that a person
// who uses those recognises them and the model can tell them apart.
func ServerToolPrefix(server string) string { return "mcp__" + server + "__" }

// SaveArtifact writes data to a new file under env's artifacts directory,
// in dir, with the extension ext (".png"), and returns its path relative
// to the artifacts directory (served at /artifacts/<rel>) and its
// absolute path: for tools outside this package whose results carry
// pictures the chat should show.
func SaveArtifact(env *Env, dir, ext string, data []byte) (rel, abs string, err error) {
	if env == nil || env.ArtifactsDir == "" {
		return "", "", fmt.Errorf("no artifacts directory is configured")
	}
	return saveArtifact(env, dir, ext, data)
}
