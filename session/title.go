package session

import (
	"context"
	"strings"
	"unicode"

	"github.com/infer-workspace/infer/session/llm"
)

// ModelTitler returns a Titler that asks the conversation's own model for a
// short title, unless its provider titles conversations itself
// (llm.LocalTitler, as offline/demo does). A failure returns the error, and
// the first-message preview stays.
func ModelTitler(catalog llm.Catalog) func(ctx context.Context, model, firstUser, firstAnswer string) (string, error) {
	return func(ctx context.Context, model, firstUser, firstAnswer string) (string, error) {
		p, name, err := catalog.Resolve(model)
		if err != nil {
			return "", err
		}
		if lt, ok := p.(llm.LocalTitler); ok {
			return lt.LocalTitle(firstUser, firstAnswer), nil
		}
		req := llm.Request{
			Model:  name,
			System: "You name conversations. Reply with a title of at most six words that says what the conversation is about. No quotes, no trailing punctuation, nothing else.",
			Messages: []llm.Message{{Role: llm.RoleUser, Content: "First message:\n" + clip(firstUser, 2000) +
				"\n\nFirst answer:\n" + clip(firstAnswer, 2000)}},
			Effort: llm.EffortNone,
		}
		comp, err := p.Stream(ctx, req, func(llm.Delta) {})
		if err != nil {
			return "", err
		}
		return CleanTitle(comp.Text), nil
	}
}

// CleanTitle trims a model's title: the first line, without quotes, markup
// or trailing punctuation, at most 80 characters.
func CleanTitle(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(strings.TrimLeft(s, "#*> "))
	s = strings.TrimPrefix(s, "Title:")
	s = strings.Trim(strings.TrimSpace(s), "\"'`*“”‘’")
	s = strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsPunct(r) && r != ')' })
	return clip(strings.TrimSpace(s), 80)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
