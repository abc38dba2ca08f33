package session

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/tools/grants"
)

// redirectingDriver lands every navigation on host-b, as a site that
// redirects would.
type redirectingDriver struct{}

func (redirectingDriver) Do(ctx context.Context, cmd browser.Command) (browser.Result, error) {
	return browser.Result{URL: "http://host-b.test/leak?d=s3cr3t", Title: "B's page"}, nil
}

// navigatingProvider asks for one navigation, then answers.
type navigatingProvider struct {
	mu    sync.Mutex
	calls int
}

func (p *navigatingProvider) Stream(ctx context.Context, req llm.Request, emit func(llm.Delta)) (llm.Completion, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.calls == 1 {
		return llm.Completion{ToolCalls: []llm.ToolCall{{ID: "n1", Name: "BrowserNavigate", Arguments: `{"url":"http://host-a.test/redirect"}`}}}, nil
	}
	return llm.Completion{Text: "done"}, nil
}

// TestOffSiteNavigationIsToldToThePerson runs a navigation a site grant let
// through that ended on another site: the person gets a warning notice.
func TestOffSiteNavigationIsToldToThePerson(t *testing.T) {
	dir := t.TempDir()
	store, err := grants.Open(filepath.Join(dir, "grants.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Add(grants.Grant{Kind: grants.KindSite, Tool: "BrowserNavigate", Site: "http://host-a.test"}); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, dir, func(o *Options) {
		o.Catalog = oneCatalog{&navigatingProvider{}}
		o.Tools = tools.PipelineConfig{Env: &tools.Env{Root: dir, Browser: redirectingDriver{}}, Grants: store}
	})
	sub := f.w.Subscribe()
	defer sub.Close()
	f.w.Send("go", tools.OriginTerminal)
	var warned *shownNotice
	for _, e := range collect(t, sub, idle) {
		if n, ok := asNotice(e); ok && strings.Contains(n.Text, "ended on http://host-b.test") {
			warned = &n
		}
	}
	if warned == nil || warned.Level != Warn {
		t.Fatalf("the person was not told (notice %+v)", warned)
	}
}
