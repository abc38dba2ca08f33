package session

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/demo"
	"github.com/infer-workspace/infer/session/tools"
)

// searchingDemo is the demo model behind a provider with hosted search.
type searchingDemo struct {
	*demo.Model
	mu      sync.Mutex
	queries []string
	tools   [][]string
}

func (s *searchingDemo) Stream(ctx context.Context, req llm.Request, emit func(llm.Delta)) (llm.Completion, error) {
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	s.mu.Lock()
	s.tools = append(s.tools, names)
	s.mu.Unlock()
	return s.Model.Stream(ctx, req, emit)
}

func (s *searchingDemo) WebSearch(_ context.Context, model, query string) (llm.SearchResult, error) {
	s.mu.Lock()
	s.queries = append(s.queries, model+": "+query)
	s.mu.Unlock()
	return llm.SearchResult{Text: "Found it.", Sources: []llm.SearchSource{{Title: "Example", URL: "https://example.com/a"}}}, nil
}

func TestWebSearchToolGoesThroughTheProviderAfterApproval(t *testing.T) {
	sd := &searchingDemo{Model: &demo.Model{}}
	var f *fixture
	f = newFixture(t, "", func(o *Options) {
		o.Catalog = oneCatalog{sd}
		// Bound as assemble binds it, to the workspace New returns: New
		// never writes into the Env it is given.
		o.Tools.Env.WebSearch = func(ctx context.Context, query string) (llm.SearchResult, error) {
			return f.w.WebSearch(ctx, query)
		}
	})
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("search infer workspace", tools.OriginTerminal)
	evs := collect(t, sub, opened)
	a := evs[len(evs)-1].(ApprovalOpened).Approval
	if a.Call.Name != tools.NameWebSearch {
		t.Fatalf("approval for %+v", a.Call)
	}
	f.w.Answer(a.ID, tools.Decision{Kind: tools.AllowOnce}, tools.OriginTerminal)
	collect(t, sub, idle)
	snap := f.w.Snapshot()
	if len(messagesOf(snap)) < 3 || !strings.Contains(messagesOf(snap)[2].Content, "Found it.") || !strings.Contains(messagesOf(snap)[2].Content, "https://example.com/a") {
		t.Fatalf("messages %+v", messagesOf(snap))
	}
	sd.mu.Lock()
	defer sd.mu.Unlock()
	if len(sd.queries) != 1 || sd.queries[0] != "m: infer workspace" {
		t.Fatalf("queries %v", sd.queries)
	}
	if !strings.Contains(strings.Join(sd.tools[0], ","), tools.NameWebSearch) {
		t.Fatalf("WebSearch not offered: %v", sd.tools[0])
	}
}

func TestWebSearchIsNotOfferedWithoutHostedSearch(t *testing.T) {
	f := newFixture(t, "")
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("search infer workspace", tools.OriginTerminal)
	evs := collect(t, sub, idle)
	if !strings.Contains(chatText(evs), "no hosted web search") || len(f.w.PendingApprovals()) != 0 {
		t.Fatalf("answer %q", chatText(evs))
	}
	// Should a call reach the tool anyway, it fails closed.
	_, err := f.w.webSearch(context.Background(), "x")
	if err == nil || !strings.Contains(err.Error(), "has no hosted web search") || !strings.Contains(fmt.Sprint(err), demo.ID) {
		t.Fatalf("err %v", err)
	}
}

// rejectingProvider reports a remembered rejection, as the adapters do.
type rejectingProvider struct{ recordingProvider }

func (*rejectingProvider) Rejections(model string) []string {
	if model == "m" {
		return []string{"temperature rejected: left out"}
	}
	return nil
}

func TestRejectionsComeFromTheModelsProvider(t *testing.T) {
	f := newFixture(t, "", func(o *Options) { o.Catalog = oneCatalog{&rejectingProvider{}} })
	if got := f.w.Rejections("x/m"); len(got) != 1 || got[0] != "temperature rejected: left out" {
		t.Fatalf("Rejections = %v", got)
	}
	if got := f.w.Rejections("nope/x"); got != nil {
		t.Fatalf("unknown model: %v", got)
	}
}
