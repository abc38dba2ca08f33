package catalog

import (
	"reflect"
	"strings"
	"testing"

	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/llm"
	lt "github.com/infer-workspace/infer/session/llm/internal/llmtest"
)

const okChunk = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`

func TestPayPerQBuiltIn(t *testing.T) {
	in := newInternet(t, map[string]string{"api.ppq.ai/v1/models": openAIList("auto", "gpt-5", "text-embedding-3-small")})
	c := newCatalog(t, config.Config{}, env{"PPQ_API_KEY": "ppq-key-123456"}, in.client, "")
	// Its router model is offered at once, before the catalog answers.
	if got := c.Models(); !reflect.DeepEqual(got, []string{"payperq/auto", OfflineID}) {
		t.Fatalf("before discovery Models() = %v", got)
	}
	if err := refresh(t, c); err != nil {
		t.Fatal(err)
	}
	if got, want := c.Models(), []string{"payperq/auto", "payperq/gpt-5", OfflineID}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Models() = %v, want %v", got, want)
	}

	// Chat goes to POST /v1/chat/completions with the key as a bearer token.
	srv := lt.New(t, lt.SSE(lt.Event{Data: okChunk}, lt.Event{Data: "[DONE]"}))
	cfg := config.Config{Providers: map[string]config.ProviderConfig{"payperq": {BaseURL: srv.URL}}}
	c = newCatalog(t, cfg, env{"PPQ_API_KEY": "ppq-key-123456"}, srv.Client, "")
	p, model, err := c.Resolve("payperq/auto")
	if err != nil || model != "auto" {
		t.Fatalf("Resolve = %q, %v", model, err)
	}
	if _, comp, err := lt.Collect(t, p, llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}); err != nil || comp.Text != "ok" {
		t.Fatalf("stream: %q %v", comp.Text, err)
	}
	if r := srv.Last(); r.Method != "POST" || r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer ppq-key-123456" || r.Body["model"] != "auto" {
		t.Fatalf("request %s %s auth %q body %v", r.Method, r.Path, r.Header.Get("Authorization"), r.Body)
	}

	// Without the key it says which variable to set.
	c = newCatalog(t, config.Config{}, env{}, in.client, "")
	if _, _, err := c.Resolve("payperq/auto"); llm.KindOf(err) != llm.ErrMissingKey || !strings.Contains(err.Error(), "PPQ_API_KEY") {
		t.Fatalf("without a key: %v", err)
	}
}

func TestPublicCatalogsAreListedWithoutAKey(t *testing.T) {
	for _, name := range []string{"openrouter", "payperq"} {
		t.Run(name, func(t *testing.T) {
			srv := lt.New(t, lt.JSON(openAIList("vendor/model-a")))
			// Configured, with no key in the environment.
			cfg := config.Config{Providers: map[string]config.ProviderConfig{name: {BaseURL: srv.URL + "/api/v1"}}}
			c := newCatalog(t, cfg, env{}, srv.Client, "")
			if err := refresh(t, c); err != nil {
				t.Fatal(err)
			}
			if got := c.Models(); !slicesContain(got, name+"/vendor/model-a") {
				t.Fatalf("Models() = %v", got)
			}
			if r := srv.Last(); r.Path != "/api/v1/models" || r.Header.Get("Authorization") != "" {
				t.Fatalf("catalog request %s with Authorization %q", r.Path, r.Header.Get("Authorization"))
			}
			// With a key, the public catalog still goes without it.
			srv2 := lt.New(t, lt.JSON(openAIList("vendor/model-b")))
			cfg = config.Config{Providers: map[string]config.ProviderConfig{name: {BaseURL: srv2.URL + "/api/v1", APIKey: "secret-key-123456"}}}
			c = newCatalog(t, cfg, env{}, srv2.Client, "")
			if err := refresh(t, c); err != nil {
				t.Fatal(err)
			}
			if h := srv2.Last().Header.Get("Authorization"); h != "" {
				t.Fatalf("the key went to the public catalog: %q", h)
			}
		})
	}
}

func slicesContain(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestBuiltinBaseURLOverrideGetsV1(t *testing.T) {
	srv := lt.New(t, lt.JSON(openAIList("proxy-model")))
	for _, name := range []string{"openai", "openrouter", "payperq"} {
		cfg := config.Config{Providers: map[string]config.ProviderConfig{name: {BaseURL: srv.URL, APIKey: "k-123456"}}}
		c := newCatalog(t, cfg, env{}, srv.Client, "")
		if got := c.by[name].baseURL; got != srv.URL+"/v1" {
			t.Errorf("%s base URL %q, want %q", name, got, srv.URL+"/v1")
		}
		// A path given is kept as written.
		cfg.Providers[name] = config.ProviderConfig{BaseURL: srv.URL + "/gateway/openai", APIKey: "k-123456"}
		if got := newCatalog(t, cfg, env{}, srv.Client, "").by[name].baseURL; got != srv.URL+"/gateway/openai" {
			t.Errorf("%s base URL with a path became %q", name, got)
		}
	}
}

func TestWrongBaseURLIsNotModelNotFound(t *testing.T) {
	// A server with no API under the configured path answers a bare 404.
	srv := lt.New(t, lt.Status(404, "404 page not found"), lt.Status(404, `{"error":{"message":"The model 'gpt-9' does not exist","code":"model_not_found"}}`))
	cfg := config.Config{Providers: map[string]config.ProviderConfig{"openai": {BaseURL: srv.URL + "/wrong", APIKey: "k-123456"}}}
	c := newCatalog(t, cfg, env{}, srv.Client, "")
	p, model, err := c.Resolve("openai/gpt-9")
	if err != nil {
		t.Fatal(err)
	}
	req := llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}
	_, _, err = lt.Collect(t, p, req)
	if llm.KindOf(err) != llm.ErrNotFound || strings.Contains(err.Error(), "model \"gpt-9\" not found") ||
		!strings.Contains(err.Error(), "base_url") || !strings.Contains(err.Error(), srv.URL+"/wrong/chat/completions") {
		t.Fatalf("wrong base URL: %v", err)
	}
	// The provider's own "no such model" is still reported as such.
	_, _, err = lt.Collect(t, p, req)
	if llm.KindOf(err) != llm.ErrNotFound || !strings.Contains(err.Error(), `model "gpt-9" not found`) {
		t.Fatalf("unknown model: %v", err)
	}
}
