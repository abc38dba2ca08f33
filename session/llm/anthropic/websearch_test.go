package anthropic

import (
	"context"
	"reflect"
	"testing"

	"github.com/infer-workspace/infer/session/llm"
	lt "github.com/infer-workspace/infer/session/llm/internal/llmtest"
)

func TestWebSearchUsesTheServerTool(t *testing.T) {
	s := lt.New(t, lt.JSON(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":20},"content":[
		{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"go 1.26"}},
		{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[
			{"type":"web_search_result","url":"https://go.dev/doc/go1.26","title":"Go 1.26 Release Notes","encrypted_content":"x","page_age":null},
			{"type":"web_search_result","url":"https://go.dev/blog","title":"The Go Blog","encrypted_content":"y","page_age":null}]},
		{"type":"text","text":"Go 1.26 is out.","citations":[{"type":"web_search_result_location","url":"https://go.dev/doc/go1.26","title":"Go 1.26 Release Notes","encrypted_index":"z","cited_text":"Go 1.26 is released"}]}]}`))
	p := provider(s, nil)
	res, err := p.WebSearch(context.Background(), "claude-sonnet-4-5", "go 1.26")
	if err != nil {
		t.Fatal(err)
	}
	want := llm.SearchResult{Text: "Go 1.26 is out.", Sources: []llm.SearchSource{
		{Title: "Go 1.26 Release Notes", URL: "https://go.dev/doc/go1.26", Snippet: "Go 1.26 is released"},
		{Title: "The Go Blog", URL: "https://go.dev/blog"},
	}}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("got %+v", res)
	}
	r := s.Last()
	if r.Path != "/v1/messages" || lt.At(r.Body, "tools", 0, "type") != "web_search_20250305" || lt.At(r.Body, "tools", 0, "name") != "web_search" ||
		r.Header.Get("X-Api-Key") != testKey {
		t.Fatalf("request %s %v", r.Path, r.Body)
	}
}
