package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/infer-workspace/infer/session/llm"
)

// NameWebSearch is the web search tool's name. The workspace offers it to
// the model only when the current provider runs searches itself (see
// llm.WebSearcher).
const NameWebSearch = "WebSearch"

// ErrNoWebSearch is what Env.WebSearch returns when the current provider
// has no hosted search: the tool fails closed instead of letting the
// model answer from memory as if it had searched.
var ErrNoWebSearch = errors.New("web search is not available")

const webSearchTimeout = 2 * time.Minute

type webSearchTool struct{}

// webSearchArgs: a search has no show of its own, so its calls show
// generically ("query=…"), as they always have.
type webSearchArgs struct {
	Query string `json:"query" limits:"minLength=1" jsonschema:"What to search the web for."`
}

var webSearchSchema = schemaOf[webSearchArgs]()

func (webSearchTool) Name() string { return NameWebSearch }

func (webSearchTool) Description() string {
	return `Search the web with the model provider's own hosted search and return what it found, with the source links.

The query is sent to the provider (which may charge for searches), so the person approves each search unless they allowed WebSearch for the project. Use it for current facts the project and the open pages cannot tell you; cite the sources you use.

Example:
{"query": "Go 1.26 release notes range over func"}`
}

func (webSearchTool) Schema() json.RawMessage { return webSearchSchema() }

func (webSearchTool) Timeout() time.Duration { return webSearchTimeout }

// ReadOnly: a search changes no file or page; what it sends out is why it
// asks (see external).
func (webSearchTool) ReadOnly() bool { return true }

// external says why the call asks although it changes nothing here: the
// query leaves the machine for a third party.
func (webSearchTool) external() string {
	return "WebSearch sends the query to the model provider's web search (which may charge for it)"
}

func (webSearchTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (Output, error) {
	var a webSearchArgs
	if err := decode(raw, &a); err != nil {
		return Output{}, err
	}
	q := strings.TrimSpace(a.Query)
	if q == "" {
		return Output{}, fmt.Errorf("query is empty: say what to search for")
	}
	if env.WebSearch == nil {
		return Output{}, fmt.Errorf("%w: infer was started without a model provider to search with", ErrNoWebSearch)
	}
	res, err := env.WebSearch(ctx, q)
	if err != nil {
		return Output{}, err
	}
	return Output{Text: formatSearch(q, res), Success: true}, nil
}

// formatSearch lays out a search result for the model: the provider's
// answer, then every source as a numbered link, so they can be cited.
func formatSearch(query string, r llm.SearchResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Web search: %s\n\n", query)
	text := strings.TrimSpace(r.Text)
	if text == "" {
		text = "(the search returned no summary)"
	}
	b.WriteString(text)
	if len(r.Sources) > 0 {
		b.WriteString("\n\nSources:\n")
		for i, s := range r.Sources {
			title := strings.TrimSpace(s.Title)
			if title == "" {
				title = s.URL
			}
			fmt.Fprintf(&b, "%d. %s — %s\n", i+1, title, s.URL)
			if sn := strings.TrimSpace(s.Snippet); sn != "" {
				fmt.Fprintf(&b, "   %s\n", sn)
			}
		}
	} else {
		b.WriteString("\n\n(no source links were returned)")
	}
	return strings.TrimRight(b.String(), "\n")
}
