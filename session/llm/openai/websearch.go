package openai

import (
	"context"
	"encoding/json"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/internal/call"
)

// searchPrompt asks the model to search and report what it found.
func searchPrompt(query string) string {
	return "Search the web for: " + query + "\nAnswer with what the results say, briefly, and cite the pages."
}

// HasWebSearch reports whether the flavor's server runs web searches
// itself: OpenAI (the Responses API's web_search tool), OpenRouter
// (openrouter:web_search) and PayPerQ (web_search). Other compatible
// servers have no hosted search, and WebSearch fails closed on them.
func HasWebSearch(f Flavor) bool {
	return f == FlavorOpenAI || f == FlavorOpenRouter || f == FlavorPayPerQ
}

// WebSearchAvailable implements llm.WebSearchAvailability.
func (p *Provider) WebSearchAvailable() bool { return HasWebSearch(p.cfg.Flavor) }

// WebSearch implements llm.WebSearcher with the provider's hosted search:
// one model call with the search tool, whose answer and cited pages are
// returned. A server without hosted search fails closed.
func (p *Provider) WebSearch(ctx context.Context, model, query string) (llm.SearchResult, error) {
	if err := p.check(llm.Request{Model: model}); err != nil {
		return llm.SearchResult{}, err
	}
	if !HasWebSearch(p.cfg.Flavor) {
		return llm.SearchResult{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: p.cfg.Name, Model: model,
			Message: "this server has no hosted web search; nothing was searched (OpenAI, Anthropic, Gemini, OpenRouter, PayPerQ and Ollama have one)"}
	}
	if strings.TrimSpace(query) == "" {
		return llm.SearchResult{}, p.badRequest(model, errEmptyQuery)
	}
	var out llm.SearchResult
	_, err := p.cfg.Policy.Run(ctx, p.ep.Target(model), func(ctx context.Context, _ call.Adjust) (call.Result, error) {
		var raw string
		if p.cfg.Flavor == FlavorOpenAI {
			params := responses.ResponseNewParams{
				Model: shared.ResponsesModel(model),
				Input: responses.ResponseNewParamsInputUnion{OfString: sdk.String(searchPrompt(query))},
				Tools: []responses.ToolUnionParam{{OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}}},
				Store: sdk.Bool(false),
			}
			resp, err := p.responses.New(ctx, params)
			if err != nil {
				return call.Result{}, err
			}
			raw = resp.RawJSON()
			out = responsesSearchResult(raw)
		} else {
			tool := map[string]any{"type": "web_search"}
			if p.cfg.Flavor == FlavorOpenRouter {
				tool = map[string]any{"type": "openrouter:web_search"}
			}
			params := sdk.ChatCompletionNewParams{Model: model, Messages: []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage(searchPrompt(query))}}
			resp, err := p.chat.New(ctx, params, option.WithJSONSet("tools", []any{tool}))
			if err != nil {
				return call.Result{}, err
			}
			raw = resp.RawJSON()
			out = chatSearchResult(raw)
		}
		return call.Result{}, nil
	})
	if err != nil {
		return llm.SearchResult{}, err
	}
	return out, nil
}

type searchError string

func (e searchError) Error() string { return string(e) }

const errEmptyQuery = searchError("the web search has no query")

// responsesSearchResult reads a Responses API answer: the output_text
// parts and their url_citation annotations.
func responsesSearchResult(raw string) llm.SearchResult {
	var r struct {
		Output []struct {
			Type    string `json:"type"`
			Content []struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				Annotations []struct {
					Type  string `json:"type"`
					URL   string `json:"url"`
					Title string `json:"title"`
				} `json:"annotations"`
			} `json:"content"`
		} `json:"output"`
	}
	var out llm.SearchResult
	if json.Unmarshal([]byte(raw), &r) != nil {
		return out
	}
	var text []string
	seen := map[string]bool{}
	for _, item := range r.Output {
		if item.Type != "message" {
			continue
		}
		for _, c := range item.Content {
			if c.Type != "output_text" {
				continue
			}
			text = append(text, c.Text)
			for _, a := range c.Annotations {
				if a.Type == "url_citation" && a.URL != "" && !seen[a.URL] {
					seen[a.URL] = true
					out.Sources = append(out.Sources, llm.SearchSource{Title: a.Title, URL: a.URL})
				}
			}
		}
	}
	out.Text = strings.Join(text, "\n")
	return out
}

// chatSearchResult reads a Chat Completions answer with url_citation
// annotations (OpenRouter's and PayPerQ's hosted search).
func chatSearchResult(raw string) llm.SearchResult {
	var r struct {
		Choices []struct {
			Message struct {
				Content     string `json:"content"`
				Annotations []struct {
					Type        string `json:"type"`
					URLCitation struct {
						URL     string `json:"url"`
						Title   string `json:"title"`
						Content string `json:"content"`
					} `json:"url_citation"`
				} `json:"annotations"`
			} `json:"message"`
		} `json:"choices"`
	}
	var out llm.SearchResult
	if json.Unmarshal([]byte(raw), &r) != nil || len(r.Choices) == 0 {
		return out
	}
	m := r.Choices[0].Message
	out.Text = m.Content
	seen := map[string]bool{}
	for _, a := range m.Annotations {
		u := a.URLCitation
		if a.Type == "url_citation" && u.URL != "" && !seen[u.URL] {
			seen[u.URL] = true
			out.Sources = append(out.Sources, llm.SearchSource{Title: u.Title, URL: u.URL, Snippet: u.Content})
		}
	}
	return out
}
