package anthropic

import (
	"context"
	"encoding/json"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/internal/call"
)

var _ llm.WebSearcher = (*Provider)(nil)

// searchMaxTokens bounds a search's answer: a short report with citations.
const searchMaxTokens = 4096

// WebSearch implements llm.WebSearcher with the Messages API's server tool
// web_search_20250305: one model call in which Anthropic runs the searches,
// whose answer and cited pages (and the results it read) are returned.
func (p *Provider) WebSearch(ctx context.Context, model, query string) (llm.SearchResult, error) {
	if p.cfg.RequireKey && p.cfg.APIKey == "" {
		return llm.SearchResult{}, &llm.Error{Kind: llm.ErrMissingKey, Provider: p.cfg.Name, Model: model, Message: "no API key: set " + p.cfg.KeyHint}
	}
	if strings.TrimSpace(query) == "" {
		return llm.SearchResult{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: p.cfg.Name, Model: model, Message: "the web search has no query"}
	}
	params := sdk.MessageNewParams{
		Model:     sdk.Model(model),
		MaxTokens: min(searchMaxTokens, defaultMaxTokens(model)),
		Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock(
			"Search the web for: " + query + "\nAnswer with what the results say, briefly, and cite the pages."))},
		Tools: []sdk.ToolUnionParam{{OfWebSearchTool20250305: &sdk.WebSearchTool20250305Param{MaxUses: sdk.Int(3)}}},
	}
	var out llm.SearchResult
	_, err := p.cfg.Policy.Run(ctx, p.ep.Target(model), func(ctx context.Context, _ call.Adjust) (call.Result, error) {
		msg, err := p.client.Messages.New(ctx, params)
		if err != nil {
			return call.Result{}, err
		}
		out = searchResult(msg.RawJSON())
		return call.Result{}, nil
	})
	if err != nil {
		return llm.SearchResult{}, err
	}
	return out, nil
}

// searchResult reads the answer's text blocks, their web citations, and
// the web_search_tool_result blocks (pages read but not cited come last).
func searchResult(raw string) llm.SearchResult {
	var m struct {
		Content []struct {
			Type      string `json:"type"`
			Text      string `json:"text"`
			Citations []struct {
				Type      string `json:"type"`
				URL       string `json:"url"`
				Title     string `json:"title"`
				CitedText string `json:"cited_text"`
			} `json:"citations"`
			Content json.RawMessage `json:"content"`
		} `json:"content"`
	}
	var out llm.SearchResult
	if json.Unmarshal([]byte(raw), &m) != nil {
		return out
	}
	var text strings.Builder
	seen := map[string]bool{}
	var read []llm.SearchSource
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
			for _, c := range b.Citations {
				if c.Type == "web_search_result_location" && c.URL != "" && !seen[c.URL] {
					seen[c.URL] = true
					out.Sources = append(out.Sources, llm.SearchSource{Title: c.Title, URL: c.URL, Snippet: c.CitedText})
				}
			}
		case "web_search_tool_result":
			var results []struct {
				Type  string `json:"type"`
				URL   string `json:"url"`
				Title string `json:"title"`
			}
			// An error result is an object, not a list: nothing to keep.
			if json.Unmarshal(b.Content, &results) == nil {
				for _, r := range results {
					if r.Type == "web_search_result" && r.URL != "" {
						read = append(read, llm.SearchSource{Title: r.Title, URL: r.URL})
					}
				}
			}
		}
	}
	for _, r := range read {
		if !seen[r.URL] {
			seen[r.URL] = true
			out.Sources = append(out.Sources, r)
		}
	}
	out.Text = strings.TrimSpace(text.String())
	return out
}
