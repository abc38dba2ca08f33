package openai

import (
	"context"
	"reflect"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
)

func TestWebSearchOpenAIUsesResponsesWebSearch(t *testing.T) {
	t.Parallel()
	f := newFake(t, status(200, `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-5","output":[
		{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"go 1.26"}},
		{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Go 1.26 is out.","annotations":[
			{"type":"url_citation","url":"https://go.dev/doc/go1.26","title":"Go 1.26 Release Notes","start_index":0,"end_index":5},
			{"type":"url_citation","url":"https://go.dev/doc/go1.26","title":"again","start_index":6,"end_index":9}]}]}]}`))
	p := f.provider(FlavorOpenAI, nil)
	res, err := p.WebSearch(context.Background(), "gpt-5", "go 1.26")
	if err != nil {
		t.Fatal(err)
	}
	want := llm.SearchResult{Text: "Go 1.26 is out.", Sources: []llm.SearchSource{{Title: "Go 1.26 Release Notes", URL: "https://go.dev/doc/go1.26"}}}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("got %+v", res)
	}
	r := f.last()
	if r.Path != "/v1/responses" || at(r.Body, "tools", 0, "type") != "web_search" || at(r.Body, "model") != "gpt-5" || r.Body["stream"] != nil {
		t.Fatalf("request %s %v", r.Path, r.Body)
	}
}

func TestWebSearchChatFlavors(t *testing.T) {
	t.Parallel()
	answer := `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"It is sunny.","annotations":[
		{"type":"url_citation","url_citation":{"url":"https://weather.example/nyc","title":"NYC weather","content":"Sunny, 22C","start_index":0,"end_index":3}}]}}]}`
	want := llm.SearchResult{Text: "It is sunny.", Sources: []llm.SearchSource{{Title: "NYC weather", URL: "https://weather.example/nyc", Snippet: "Sunny, 22C"}}}
	for _, c := range []struct {
		flavor Flavor
		tool   string
	}{{FlavorOpenRouter, "openrouter:web_search"}, {FlavorPayPerQ, "web_search"}} {
		f := newFake(t, status(200, answer))
		p := f.provider(c.flavor, nil)
		if !llm.CanWebSearch(p) {
			t.Fatalf("flavor %d: search not available", c.flavor)
		}
		res, err := p.WebSearch(context.Background(), "auto", "weather nyc")
		if err != nil || !reflect.DeepEqual(res, want) {
			t.Fatalf("flavor %d: %+v %v", c.flavor, res, err)
		}
		r := f.last()
		if r.Path != "/v1/chat/completions" || at(r.Body, "tools", 0, "type") != c.tool || len(r.Body["tools"].([]any)) != 1 {
			t.Fatalf("flavor %d: request %s %v", c.flavor, r.Path, r.Body)
		}
	}
}

func TestWebSearchFailsClosedOnCompatibleServers(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	p := f.provider(FlavorCompatible, nil)
	if llm.CanWebSearch(p) {
		t.Fatal("a compatible server claims hosted search")
	}
	_, err := p.WebSearch(context.Background(), "m", "x")
	if err == nil || len(f.requests()) != 0 {
		t.Fatalf("err %v after %d requests", err, len(f.requests()))
	}
}
