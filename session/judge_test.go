package session

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/demo"
	"github.com/infer-workspace/infer/session/tools"
)

func TestParseVerdict(t *testing.T) {
	cases := []struct {
		in      string
		approve bool
		ok      bool
	}{
		{`{"decision":"approve","reason":"reads a file"}`, true, true},
		{"```json\n{\"decision\":\"reject\",\"reason\":\"deletes data\"}\n```", false, true},
		{`Sure! {"decision":"APPROVE","reason":"x"}`, true, true},
		{`{"decision":"maybe","reason":"x"}`, false, false},
		{`{"decision":"approve","reason":"x","extra":1}`, false, false},
		{`approve`, false, false},
		{``, false, false},
	}
	for _, c := range cases {
		v, err := ParseVerdict(c.in)
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v", c.in, err)
			continue
		}
		if c.ok && v.Approve != c.approve {
			t.Errorf("%q: approve %v", c.in, v.Approve)
		}
	}
}

func TestDemoJudgeIsDeterministic(t *testing.T) {
	j := Judge{Catalog: demoOnlyCatalog{&demo.Model{}}, Model: func() string { return demo.ID }}
	cases := map[string]bool{
		`BrowserNavigate|{"url":"http://demo.infer.localhost/"}`: true,
		`BrowserNavigate|{"url":"https://bank.example/"}`:        false,
		`BrowserClick|{"selector":"a"}`:                          true,
		`Bash|{"command":"rm -rf x"}`:                            false,
	}
	for in, want := range cases {
		var name, args string
		for i := range in {
			if in[i] == '|' {
				name, args = in[:i], in[i+1:]
				break
			}
		}
		v, err := j.Judge(context.Background(), tools.Call{Name: name, Args: args}, "why")
		if err != nil || v.Approve != want || v.Reason == "" {
			t.Errorf("%s: %+v %v", in, v, err)
		}
	}
}

// cannedProvider answers every request with fixed text or an error.
type cannedProvider struct {
	text string
	err  error
}

func (p cannedProvider) Stream(ctx context.Context, req llm.Request, emit func(llm.Delta)) (llm.Completion, error) {
	return llm.Completion{Text: p.text}, p.err
}

type oneProviderCatalog struct{ p llm.Provider }

func (c oneProviderCatalog) Models() []string { return []string{"x/judge"} }
func (c oneProviderCatalog) Resolve(id string) (llm.Provider, string, error) {
	return c.p, "judge", nil
}

func TestModelJudgeFailsClosed(t *testing.T) {
	call := tools.Call{Name: "Bash", Args: `{"command":"ls"}`}
	model := func() string { return "x/judge" }
	ok := Judge{Catalog: oneProviderCatalog{cannedProvider{text: `{"decision":"approve","reason":"lists files"}`}}, Model: model}
	if v, err := ok.Judge(context.Background(), call, ""); err != nil || !v.Approve {
		t.Fatalf("%+v %v", v, err)
	}
	for _, p := range []cannedProvider{{text: "I think it is fine"}, {err: errors.New("boom")}} {
		j := Judge{Catalog: oneProviderCatalog{p}, Model: model}
		if v, err := j.Judge(context.Background(), call, ""); err == nil || v.Approve {
			t.Fatalf("judge failure must be an error, got %+v %v", v, err)
		}
	}
}

func TestCleanTitle(t *testing.T) {
	cases := map[string]string{
		`"Fixing the flaky test."`:      "Fixing the flaky test",
		"Title: Browser research\nmore": "Browser research",
		"## **Demo site tour**":         "Demo site tour",
		"  Plain  ":                     "Plain",
	}
	for in, want := range cases {
		if got := CleanTitle(in); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}

// namedCatalog serves one provider under one id, so a test can put the
// offline model behind another id and a real-looking one behind
// offline/demo's.
type namedCatalog struct {
	id string
	p  llm.Provider
}

func (c namedCatalog) Models() []string { return []string{c.id} }
func (c namedCatalog) Resolve(id string) (llm.Provider, string, error) {
	if id != c.id {
		return nil, "", errors.New("unknown model " + id)
	}
	return c.p, "m", nil
}

// TestJudgeAndTitlesFollowWhatTheProviderDeclares: what makes the judge
// apply its rule and titles come without a model call is the provider
// saying so (llm.RuleJudged, llm.LocalTitler), not the id it is offered
// under: the offline model keeps its behaviour under any id, and a model
// that can answer is asked even under offline/demo's.
func TestJudgeAndTitlesFollowWhatTheProviderDeclares(t *testing.T) {
	bash := tools.Call{Name: "Bash", Args: `{"command":"ls"}`}
	offline := namedCatalog{id: "lab/offline", p: &demo.Model{}}
	j := Judge{Catalog: offline, Model: func() string { return offline.id }}
	if v, err := j.Judge(context.Background(), bash, "why"); err != nil || v.Approve || !strings.HasPrefix(v.Reason, "offline judge:") {
		t.Errorf("the offline model under another id: %+v %v, want the rule's refusal", v, err)
	}
	title, err := ModelTitler(offline)(context.Background(), offline.id, "open the demo site and read it", "Done.")
	if err != nil || title != demo.Title("open the demo site and read it") {
		t.Errorf("the offline model's title under another id: %q %v", title, err)
	}

	answering := namedCatalog{id: demo.ID, p: cannedProvider{text: `{"decision":"approve","reason":"lists files"}`}}
	j = Judge{Catalog: answering, Model: func() string { return demo.ID }}
	if v, err := j.Judge(context.Background(), bash, "why"); err != nil || !v.Approve || v.Reason != "lists files" {
		t.Errorf("a model that answers, under offline/demo's id: %+v %v, want its verdict", v, err)
	}
	titling := namedCatalog{id: demo.ID, p: cannedProvider{text: "Listing the files"}}
	if title, err := ModelTitler(titling)(context.Background(), demo.ID, "ls", "a b"); err != nil || title != "Listing the files" {
		t.Errorf("a model that answers, under offline/demo's id, titled %q %v", title, err)
	}
}
