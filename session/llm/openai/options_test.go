package openai

import (
	"testing"

	"github.com/infer-workspace/infer/session/llm"
)

func TestEffortValueTable(t *testing.T) {
	t.Parallel()
	rows := []struct {
		flavor Flavor
		model  string
		effort llm.Effort
		want   string
	}{
		// auto and empty leave the provider's default everywhere.
		{FlavorOpenAI, "gpt-5.1", llm.EffortAuto, ""},
		{FlavorOpenAI, "gpt-5.1", "", ""},
		{FlavorOpenRouter, "openai/gpt-5", llm.EffortAuto, ""},

		// none: per model family.
		{FlavorOpenAI, "gpt-5.1", llm.EffortNone, "none"},
		{FlavorOpenAI, "gpt-5.2-2025-12-11", llm.EffortNone, "none"},
		{FlavorOpenAI, "gpt-5.6-sol", llm.EffortNone, "none"},
		{FlavorOpenAI, "gpt-6.1-terra", llm.EffortNone, "none"},
		{FlavorOpenAI, "gpt-6-sol", llm.EffortNone, "none"},
		{FlavorOpenAI, "gpt-6-luna", llm.EffortNone, "none"},
		{FlavorOpenAI, "gpt-5", llm.EffortNone, "minimal"},
		{FlavorOpenAI, "gpt-5-mini", llm.EffortNone, "minimal"},
		{FlavorOpenAI, "gpt-5-nano-2025-08-07", llm.EffortNone, "minimal"},
		{FlavorOpenAI, "gpt-6-astra", llm.EffortNone, "low"},
		{FlavorOpenAI, "gpt-6.1-sol", llm.EffortNone, "low"},
		{FlavorOpenAI, "o3", llm.EffortNone, "low"},
		{FlavorOpenAI, "o4-mini-2025-04-16", llm.EffortNone, "low"},
		{FlavorOpenAI, "gpt-4.1", llm.EffortNone, ""},
		{FlavorOpenAI, "gpt-4o", llm.EffortNone, ""},
		{FlavorOpenAI, "gpt-4o-mini", llm.EffortNone, ""},
		{FlavorOpenAI, "gpt-3.5-turbo", llm.EffortNone, ""},
		{FlavorOpenRouter, "openai/gpt-5-mini", llm.EffortNone, "minimal"},
		{FlavorOpenRouter, "openai/gpt-4o", llm.EffortNone, ""},
		{FlavorOpenRouter, "deepseek/deepseek-r1", llm.EffortNone, "none"},
		{FlavorCompatible, "qwen3-32b", llm.EffortNone, "none"},

		// low / medium / high: the matching value, except models without
		// the parameter.
		{FlavorOpenAI, "gpt-5", llm.EffortLow, "low"},
		{FlavorOpenAI, "gpt-5.1", llm.EffortMedium, "medium"},
		{FlavorOpenAI, "gpt-6-astra", llm.EffortHigh, "high"},
		{FlavorOpenAI, "o3", llm.EffortHigh, "high"},
		{FlavorOpenAI, "gpt-4.1", llm.EffortHigh, ""},
		{FlavorOpenRouter, "anthropic/claude-sonnet-4.5", llm.EffortHigh, "high"},
		{FlavorCompatible, "llama-3.3-70b", llm.EffortMedium, "medium"},
	}
	for _, r := range rows {
		if got := EffortValue(r.model, r.effort); got != r.want {
			t.Errorf("EffortValue(%q, %q) = %q, want %q", r.model, r.effort, got, r.want)
		}
	}
}

func TestTemperatureValueTable(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	rows := []struct {
		flavor Flavor
		model  string
		in     *float64
		want   *float64
	}{
		{FlavorOpenAI, "gpt-4o", nil, nil},
		{FlavorOpenAI, "gpt-4o", f(0), f(0)},
		{FlavorOpenAI, "gpt-4o", f(1.5), f(1.5)},
		{FlavorOpenAI, "gpt-5", f(2), f(2)},
		{FlavorOpenRouter, "x/y", f(0.7), f(0.7)},
		{FlavorCompatible, "m", f(0.0), f(0.0)},
	}
	for _, r := range rows {
		got := TemperatureValue(r.in)
		if (got == nil) != (r.want == nil) || (got != nil && *got != *r.want) {
			t.Errorf("TemperatureValue(%v) = %v, want %v", r.in, got, r.want)
		}
	}
}

func TestUsesResponsesTable(t *testing.T) {
	t.Parallel()
	rows := []struct {
		flavor Flavor
		model  string
		want   bool
	}{
		{FlavorOpenAI, "gpt-4o", false},
		{FlavorOpenAI, "gpt-5", false},
		{FlavorOpenAI, "gpt-5.1", false},
		{FlavorOpenAI, "o3", false},
		{FlavorOpenAI, "o3-pro", true},
		{FlavorOpenAI, "o1-pro-2025-03-19", true},
		{FlavorOpenAI, "gpt-5-pro", true},
		{FlavorOpenAI, "gpt-5.5-pro-2026-04-23", true},
		{FlavorOpenAI, "gpt-5-codex", true},
		{FlavorOpenAI, "gpt-5.1-codex-max", true},
		{FlavorOpenAI, "codex-mini-latest", false},
		{FlavorOpenAI, "o3-deep-research", true},
		{FlavorOpenAI, "computer-use-preview", true},
		{FlavorOpenAI, "gpt-6-astra", true},
		{FlavorOpenAI, "gpt-6.1-terra", true},
		{FlavorOpenAI, "gpt-6-cyber", true},
		// Only OpenAI has the Responses API.
		{FlavorOpenRouter, "openai/o3-pro", false},
		{FlavorCompatible, "gpt-5-pro", false},
	}
	for _, r := range rows {
		if got := UsesResponses(r.flavor, r.model); got != r.want {
			t.Errorf("UsesResponses(%v, %q) = %v, want %v", r.flavor, r.model, got, r.want)
		}
	}
}

func TestChatCapable(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]bool{
		"gpt-4o": true, "text-embedding-3-small": false, "whisper-1": false, "tts-1": false,
		"dall-e-3": false, "gpt-4o-realtime-preview": false, "gemini-2.5-flash": true,
		"nomic-embed-text:latest": false, "llama3.2:latest": true, "omni-moderation-latest": false,
	} {
		if got := chatCapable(id); got != want {
			t.Errorf("chatCapable(%q) = %v, want %v", id, got, want)
		}
	}
}
