package session

import (
	"testing"

	"github.com/infer-workspace/infer/session/llm/demo"
	"github.com/infer-workspace/infer/session/store"
	"github.com/infer-workspace/infer/session/tools"
)

// TestNewLeavesTheGivenEnvAlone: the Env a composition root built is used
// as given; New once filled in its web search, so the Env assemble handed
// over was not the one the tools ran with.
func TestNewLeavesTheGivenEnvAlone(t *testing.T) {
	env := &tools.Env{Root: t.TempDir()}
	w, err := New(Options{Store: store.OpenMemory(), Catalog: demoOnlyCatalog{&demo.Model{}}, Tools: tools.PipelineConfig{Env: env}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if env.WebSearch != nil || env.Browser != nil {
		t.Errorf("New wrote into the Env it was given: web search %v, browser %v", env.WebSearch != nil, env.Browser)
	}
	if w.Pipeline() == nil {
		t.Fatal("no pipeline")
	}
}
