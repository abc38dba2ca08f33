package tools

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/infer-workspace/infer/session/tools/grants"
)

// extTool is an external tool whose runs are counted.
type extTool struct {
	name, server string
	readOnly     bool
	ran          *int
}

func (t extTool) Name() string            { return t.name }
func (t extTool) Description() string     { return "an external tool" }
func (t extTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object","oneOf":[{}]}`) }
func (t extTool) Timeout() time.Duration  { return time.Second }
func (t extTool) ReadOnly() bool          { return t.readOnly }
func (t extTool) Provider() string        { return t.server }
func (t extTool) Run(context.Context, *Env, json.RawMessage) (Output, error) {
	*t.ran++
	return Output{Text: "ran " + t.name, Success: true}, nil
}

type fixedSource []Tool

func (s fixedSource) Tools() []Tool { return s }
func (s fixedSource) Lookup(_ context.Context, name string) (Tool, bool) {
	for _, t := range s {
		if t.Name() == name {
			return t, true
		}
	}
	return nil, false
}

func TestExternalToolsFollowThePolicy(t *testing.T) {
	t.Parallel()
	var ran int
	write := extTool{name: "mcp__srv__write", server: "srv", ran: &ran}
	read := extTool{name: "mcp__srv__read", server: "srv", readOnly: true, ran: &ran}
	other := extTool{name: "mcp__other__x", server: "other", readOnly: true, ran: &ran}
	gs, err := grants.Open(filepath.Join(t.TempDir(), "grants.json"))
	if err != nil {
		t.Fatal(err)
	}
	appr := &scriptedApprover{decision: Decision{Kind: AllowAlways, Option: 1}}
	judge := &fakeJudge{verdict: Verdict{Approve: false, Reason: "unsure"}}
	p := NewPipeline(PipelineConfig{Env: newEnv(t), Grants: gs, Approver: appr, Judge: judge, Sources: []Source{fixedSource{write, read, other}}})

	// The model sees them beside the built-in tools.
	var names []string
	for _, s := range p.Specs() {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); !strings.Contains(got, "Bash") || !strings.HasSuffix(got, "mcp__srv__write,mcp__srv__read,mcp__other__x") {
		t.Fatalf("specs = %s", got)
	}

	// Plan mode refuses what does not claim to only read, and asks for the rest.
	if perm := p.Check(Call{Name: write.name, Args: "{}"}, Plan); perm.Kind != Refuse || !strings.Contains(perm.Why, "plan mode") {
		t.Fatalf("plan write: %+v", perm)
	}
	if perm := p.Check(Call{Name: read.name, Args: "{}"}, Plan); perm.Kind != Ask {
		t.Fatalf("plan read-only: %+v", perm)
	}
	// Auto runs them; auto-with-judge puts them to the judge first.
	if perm := p.Check(Call{Name: write.name, Args: "{}"}, Auto); perm.Kind != Allow {
		t.Fatalf("auto: %+v", perm)
	}
	if perm := p.Check(Call{Name: write.name, Args: "{}"}, AutoWithJudge); perm.Kind != Ask || !perm.Judge {
		t.Fatalf("auto-with-judge: %+v", perm)
	}
	// Arguments must be an object; the schema is the server's business.
	if o := p.Run(context.Background(), Call{Name: read.name, Args: "[1]"}, Standard); o.Ran || !strings.Contains(o.Output, "JSON object") {
		t.Fatalf("bad args: %+v", o)
	}

	// Standard asks even for a read-only claim; "always" for the server
	// (option 1) then covers its other tools, not another server's.
	o := p.Run(context.Background(), Call{ID: "1", Name: read.name, Args: `{"a":1}`}, Standard)
	if !o.Success || ran != 1 || appr.count() != 1 || len(appr.last().Options) != 2 {
		t.Fatalf("first call: %+v, ran %d, asked %d", o, ran, appr.count())
	}
	if perm := p.Check(Call{Name: write.name, Args: "{}"}, Standard); perm.Kind != Allow || !strings.Contains(perm.Why, "MCP server srv") {
		t.Fatalf("server grant: %+v", perm)
	}
	if perm := p.Check(Call{Name: other.name, Args: "{}"}, Standard); perm.Kind != Ask {
		t.Fatalf("other server: %+v", perm)
	}
	// The judge saw the call in auto-with-judge and passed it on.
	appr.decision = Decision{Kind: Deny, Reason: "no"}
	o = p.Run(context.Background(), Call{ID: "2", Name: other.name, Args: "{}"}, AutoWithJudge)
	if o.Ran || !o.Denied || judge.calls != 1 || !strings.Contains(appr.last().JudgeReason, "unsure") {
		t.Fatalf("judged call: %+v, judge calls %d", o, judge.calls)
	}
	// A per-tool grant covers that tool only.
	appr.decision = Decision{Kind: AllowAlways, Option: 0}
	if o := p.Run(context.Background(), Call{ID: "3", Name: other.name, Args: "{}"}, Standard); !o.Success {
		t.Fatalf("tool grant call: %+v", o)
	}
	list, _ := gs.List()
	if len(list) != 2 || list[0].Kind != grants.KindServer || list[1].Kind != grants.KindTool || list[1].Tool != other.name {
		t.Fatalf("grants = %+v", list)
	}
	if o := p.Run(context.Background(), Call{Name: "mcp__nope__x", Args: "{}"}, Standard); !strings.Contains(o.Output, "mcp__other__x") {
		t.Fatalf("unknown tool error should list the MCP tools: %s", o.Output)
	}
}
