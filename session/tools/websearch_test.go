package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
)

type recordingApprover struct {
	asked []ApprovalRequest
	yes   bool
}

func (a *recordingApprover) Approve(_ context.Context, req ApprovalRequest) (Decision, error) {
	a.asked = append(a.asked, req)
	if a.yes {
		return Decision{Kind: AllowOnce}, nil
	}
	return Decision{Kind: Deny}, nil
}

func TestWebSearchAsksAndKeepsSources(t *testing.T) {
	t.Parallel()
	var queries []string
	env := &Env{WebSearch: func(_ context.Context, q string) (llm.SearchResult, error) {
		queries = append(queries, q)
		return llm.SearchResult{Text: "Go 1.26 shipped in February.", Sources: []llm.SearchSource{
			{Title: "Go 1.26 Release Notes", URL: "https://go.dev/doc/go1.26", Snippet: "range over func"},
			{URL: "https://go.dev/blog/go1.26"},
		}}, nil
	}}
	ap := &recordingApprover{yes: true}
	p := NewPipeline(PipelineConfig{Env: env, Approver: ap})
	call := Call{ID: "c1", Name: NameWebSearch, Args: `{"query":"go 1.26"}`, Origin: OriginAgent}
	for _, m := range []Mode{Standard, Plan} {
		if perm := p.Check(call, m); perm.Kind != Ask || !strings.Contains(perm.Why, "web search") {
			t.Fatalf("%s: %+v", m, perm)
		}
	}
	if perm := p.Check(call, Auto); perm.Kind != Allow {
		t.Fatalf("auto: %+v", perm)
	}
	o := p.Run(context.Background(), call, Standard)
	if !o.Success || len(ap.asked) != 1 || len(queries) != 1 || queries[0] != "go 1.26" {
		t.Fatalf("outcome %+v, asked %d, queries %v", o, len(ap.asked), queries)
	}
	for _, want := range []string{"Go 1.26 shipped in February.", "1. Go 1.26 Release Notes — https://go.dev/doc/go1.26", "range over func", "2. https://go.dev/blog/go1.26 — https://go.dev/blog/go1.26"} {
		if !strings.Contains(o.Output, want) {
			t.Fatalf("output lacks %q:\n%s", want, o.Output)
		}
	}
	// Refused: nothing is sent.
	ap.yes = false
	if o := p.Run(context.Background(), call, Standard); !o.Denied || len(queries) != 1 {
		t.Fatalf("denied search ran: %+v", o)
	}
}

func TestWebSearchFailsClosed(t *testing.T) {
	t.Parallel()
	ap := &recordingApprover{yes: true}
	// No search wired at all.
	p := NewPipeline(PipelineConfig{Env: &Env{}, Approver: ap})
	o := p.Run(context.Background(), Call{ID: "c1", Name: NameWebSearch, Args: `{"query":"x"}`}, Auto)
	if o.Success || !strings.Contains(o.Output, "web search is not available") {
		t.Fatalf("outcome %+v", o)
	}
	// A provider without hosted search: its error reaches the model.
	env := &Env{WebSearch: func(context.Context, string) (llm.SearchResult, error) {
		return llm.SearchResult{}, fmt.Errorf("%w: openai-compatible server lmstudio has no hosted web search", ErrNoWebSearch)
	}}
	p = NewPipeline(PipelineConfig{Env: env, Approver: ap})
	o = p.Run(context.Background(), Call{ID: "c2", Name: NameWebSearch, Args: `{"query":"x"}`}, Auto)
	if o.Success || !strings.Contains(o.Output, "lmstudio has no hosted web search") {
		t.Fatalf("outcome %+v", o)
	}
	if !errors.Is(fmt.Errorf("%w", ErrNoWebSearch), ErrNoWebSearch) {
		t.Fatal("sentinel")
	}
}
