package catalog

import (
	"slices"
	"testing"

	"github.com/infer-workspace/infer/session/config"
)

func TestKeyVariablesCoverBuiltinsAndConfiguredNames(t *testing.T) {
	cfg := config.Config{Providers: map[string]config.ProviderConfig{
		"lmstudio": {BaseURL: "http://localhost:1234/v1", APIKeyEnv: "LMSTUDIO_KEY"},
		"openai":   {APIKeyEnv: "OPENAI_API_KEY"},
	}}
	got := KeyVariables(cfg)
	want := []string{"ANTHROPIC_API_KEY", "GEMINI_API_KEY", "LMSTUDIO_KEY", "OLLAMA_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "PPQ_API_KEY"}
	if !slices.Equal(got, want) {
		t.Fatalf("KeyVariables = %v, want %v", got, want)
	}
}
