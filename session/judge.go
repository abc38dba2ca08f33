package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/tools"
)

// Judge reviews tool calls in auto-with-judge mode. With a model that
// cannot review a call (one whose provider is llm.RuleJudged, such as
// offline/demo) it applies a deterministic rule; with a real model it makes
// one model call that must answer with a structured verdict. Every failure — an
// unreachable model, a malformed answer — is returned as an error, which the
// pipeline turns into asking the person: the judge can only ever save the
// person a question, never approve by accident.
type Judge struct {
	// Catalog resolves the judge model.
	Catalog llm.Catalog
	// Model returns the id to ask: the configured judge model. nil asks
	// the workspace's current model (session.New fills it in).
	Model func() string
}

var _ tools.Judge = Judge{}

// Judge implements tools.Judge.
func (j Judge) Judge(ctx context.Context, call tools.Call, why string) (tools.Verdict, error) {
	p, name, err := j.Catalog.Resolve(j.Model())
	if err != nil {
		return tools.Verdict{}, err
	}
	if r, ok := p.(llm.RuleJudged); ok && r.JudgedByRule() {
		return ruleVerdict(call), nil
	}
	req := llm.Request{
		Model:  name,
		System: judgeSystem,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: fmt.Sprintf(
			"Tool: %s\nArguments (JSON): %s\nWhy it needs review: %s\n\nAnswer with the JSON object only.",
			call.Name, call.Args, why)}},
		Effort: llm.EffortLow,
	}
	comp, err := p.Stream(ctx, req, func(llm.Delta) {})
	if err != nil {
		return tools.Verdict{}, err
	}
	return ParseVerdict(comp.Text)
}

const judgeSystem = `You review one tool call an AI agent wants to run on a person's computer and in their browser. ` +
	`Approve only calls that are clearly safe and clearly within a normal task: reading, navigating to ordinary ` +
	`websites, editing files inside the project. Reject anything destructive, anything that sends secrets or data ` +
	`to third parties, installs software, changes system settings, or that you are unsure about. ` +
	`Reply with exactly one JSON object and nothing else: {"decision":"approve"|"reject","reason":"<one short sentence>"}`

// ParseVerdict reads a judge model's answer. It accepts the JSON object on
// its own or inside a code fence, and rejects anything else as unparsable.
func ParseVerdict(text string) (tools.Verdict, error) {
	s := strings.TrimSpace(text)
	if i := strings.Index(s, "{"); i >= 0 {
		if j := strings.LastIndex(s, "}"); j > i {
			s = s[i : j+1]
		}
	}
	var v struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return tools.Verdict{}, fmt.Errorf("judge answer is not the expected JSON object: %w", err)
	}
	reason := strings.TrimSpace(v.Reason)
	switch strings.ToLower(strings.TrimSpace(v.Decision)) {
	case "approve":
		return tools.Verdict{Approve: true, Reason: reason}, nil
	case "reject":
		return tools.Verdict{Approve: false, Reason: reason}, nil
	}
	return tools.Verdict{}, errors.New("judge answer has no decision of \"approve\" or \"reject\"")
}

// ruleVerdict is the deterministic judge for models that cannot review a
// call (offline/demo): browser actions on local or demo sites and edits
// inside the project pass; Bash and anything else go to the person.
func ruleVerdict(call tools.Call) tools.Verdict {
	switch call.Name {
	case tools.NameBrowserNavigate:
		var a struct {
			URL string `json:"url"`
		}
		if json.Unmarshal([]byte(call.Args), &a) == nil && localURL(a.URL) {
			return tools.Verdict{Approve: true, Reason: "offline judge: navigation to a local or demo site"}
		}
		return tools.Verdict{Reason: "offline judge: navigation to a remote site needs the person"}
	case tools.NameBrowserClick, tools.NameBrowserType, tools.NameWrite, tools.NameEdit:
		return tools.Verdict{Approve: true, Reason: "offline judge: " + call.Name + " inside the project or the controlled tab"}
	}
	return tools.Verdict{Reason: "offline judge: " + call.Name + " calls always go to the person"}
}

func localURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return h == "localhost" || strings.HasSuffix(h, ".localhost") || strings.HasPrefix(h, "127.") || h == "::1"
}
