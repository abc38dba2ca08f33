package catalog

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/llm"
	lt "github.com/infer-workspace/infer/session/llm/internal/llmtest"
)

// env is a fake environment.
type env map[string]string

func (e env) get(k string) string { return e[k] }

// offline is a stand-in for the demo model.
type offline struct{}

func (offline) Stream(context.Context, llm.Request, func(llm.Delta)) (llm.Completion, error) {
	return llm.Completion{Text: "offline"}, nil
}

// internet is one TLS server that answers for every remote host: the test
// client dials it whatever the address, so the built-in providers' real
// base URLs (https://openrouter.ai/api/v1, …) reach it and the test sees
// which host and path each request was for.
type internet struct {
	srv    *httptest.Server
	client *http.Client
	mu     sync.Mutex
	hits   []string // host + path
	routes map[string]string
	hang   map[string]bool
}

func newInternet(t *testing.T, routes map[string]string) *internet {
	in := &internet{routes: routes, hang: map[string]bool{}}
	in.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		where := r.Host + r.URL.Path
		in.mu.Lock()
		in.hits = append(in.hits, where)
		body, ok := in.routes[where]
		hang := in.hang[where]
		in.mu.Unlock()
		if hang {
			<-r.Context().Done()
			return
		}
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":{"message":"no route %s"}}`, where)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	addr := in.srv.Listener.Addr().String()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, to string) (net.Conn, error) {
			var d net.Dialer
			// Only HTTPS hosts are the internet. Anything else, such as
			// the local Ollama probe sent to closedURL, is dialled as
			// addressed: sending it here instead reached this TLS server
			// in plain HTTP, which logged a handshake error and failed the
			// probe for the wrong reason.
			if _, port, err := net.SplitHostPort(to); err != nil || port != "443" {
				return d.DialContext(ctx, network, to)
			}
			return d.DialContext(ctx, network, addr)
		},
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}
	in.client = &http.Client{Transport: tr}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		in.srv.Close()
	})
	return in
}

func (in *internet) requests() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]string(nil), in.hits...)
}

func openAIList(ids ...string) string {
	var parts []string
	for _, id := range ids {
		parts = append(parts, `{"id":"`+id+`","object":"model","created":0,"owned_by":"x"}`)
	}
	return `{"object":"list","data":[` + strings.Join(parts, ",") + `]}`
}

// closedURL is an address where nothing listens, so the tests never reach
// a real Ollama on this machine.
func closedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}

func newCatalog(t *testing.T, cfg config.Config, e env, client *http.Client, cacheDir string) *Catalog {
	t.Helper()
	c := New(cfg, Options{Getenv: e.get, HTTPClient: client, CacheDir: cacheDir, Offline: offline{}, DiscoveryTimeout: 5 * time.Second})
	if s := c.by["ollama"]; !s.configured {
		s.baseURL = closedURL(t)
	}
	return c
}

func refresh(t *testing.T, c *Catalog) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Refresh(ctx)
}

func TestModelsOrderWithoutDiscovery(t *testing.T) {
	cfg := config.Config{
		Model: "anthropic/claude-sonnet-4-5",
		Providers: map[string]config.ProviderConfig{
			"lmstudio": {BaseURL: "http://127.0.0.1:1234", Models: []string{"qwen3-8b"}},
			"openai":   {Models: []string{"gpt-4o", "gpt-4.1"}},
			"aaa":      {BaseURL: "http://127.0.0.1:9", Models: []string{"m1", "gpt-4o"}},
		},
	}
	c := newCatalog(t, cfg, env{}, nil, "")
	want := []string{"anthropic/claude-sonnet-4-5", "openai/gpt-4o", "openai/gpt-4.1", "aaa/m1", "aaa/gpt-4o", "lmstudio/qwen3-8b", OfflineID}
	if got := c.Models(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Models() = %v\nwant %v", got, want)
	}
	if c.Default() != "anthropic/claude-sonnet-4-5" {
		t.Fatalf("Default() = %q", c.Default())
	}
}

func TestNothingConfigured(t *testing.T) {
	c := newCatalog(t, config.Config{}, env{}, nil, "")
	if got := c.Models(); !reflect.DeepEqual(got, []string{OfflineID}) {
		t.Fatalf("Models() = %v", got)
	}
	if c.Default() != OfflineID {
		t.Fatalf("Default() = %q", c.Default())
	}
	p, model, err := c.Resolve(OfflineID)
	if err != nil || model != "demo" || p != (offline{}) {
		t.Fatalf("Resolve(offline/demo) = %v, %q, %v", p, model, err)
	}
}

func TestDefaultIsFirstConfiguredModel(t *testing.T) {
	cfg := config.Config{Providers: map[string]config.ProviderConfig{
		"zeta":   {BaseURL: "http://127.0.0.1:9", Models: []string{"z"}},
		"gemini": {Models: []string{"gemini-2.5-flash"}},
	}}
	c := newCatalog(t, cfg, env{}, nil, "")
	if c.Default() != "gemini/gemini-2.5-flash" || c.Models()[0] != "gemini/gemini-2.5-flash" {
		t.Fatalf("Default() = %q, Models() = %v", c.Default(), c.Models())
	}
}

func TestDiscoveryAndPresenceByEnvironment(t *testing.T) {
	in := newInternet(t, map[string]string{
		"api.openai.com/v1/models":                        openAIList("gpt-4o", "text-embedding-3-small", "gpt-5"),
		"openrouter.ai/api/v1/models":                     openAIList("openai/gpt-4o", "anthropic/claude-sonnet-4.5"),
		"api.anthropic.com/v1/models":                     `{"data":[{"type":"model","id":"claude-sonnet-4-5","display_name":"S","created_at":"2025-01-01T00:00:00Z"}],"has_more":false}`,
		"generativelanguage.googleapis.com/v1beta/models": `{"models":[{"name":"models/gemini-2.5-flash","supportedGenerationMethods":["generateContent"]},{"name":"models/text-embedding-004","supportedGenerationMethods":["embedContent"]}]}`,
		"ollama.com/api/tags":                             `{"models":[{"name":"gpt-oss:120b","model":"gpt-oss:120b"}]}`,
	})
	e := env{"OPENAI_API_KEY": "sk-o-123456", "OPENROUTER_API_KEY": "sk-r-123456", "ANTHROPIC_API_KEY": "sk-a-123456",
		"GEMINI_API_KEY": "g-123456", "OLLAMA_API_KEY": "ol-123456"}
	c := newCatalog(t, config.Config{}, e, in.client, "")
	if got := c.Models(); !reflect.DeepEqual(got, []string{OfflineID}) {
		t.Fatalf("before discovery Models() = %v", got)
	}
	updated := c.Updated()
	if err := refresh(t, c); err != nil {
		t.Fatal(err)
	}
	select {
	case <-updated:
	default:
		t.Fatal("Updated was not signalled")
	}
	want := []string{
		"openai/gpt-4o", "openai/gpt-5",
		"anthropic/claude-sonnet-4-5",
		"openrouter/anthropic/claude-sonnet-4.5", "openrouter/openai/gpt-4o",
		"gemini/gemini-2.5-flash",
		"ollama_cloud/gpt-oss:120b",
		OfflineID,
	}
	if got := c.Models(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Models() = %v\nwant %v", got, want)
	}
	// Nothing discovered is made the default.
	if c.Default() != OfflineID {
		t.Fatalf("Default() = %q", c.Default())
	}

	// Without the keys, the same providers are absent and not asked.
	c2 := newCatalog(t, config.Config{}, env{}, in.client, "")
	n := len(in.requests())
	if err := refresh(t, c2); err != nil {
		t.Fatal(err)
	}
	if got := c2.Models(); !reflect.DeepEqual(got, []string{OfflineID}) || len(in.requests()) != n {
		t.Fatalf("without keys: Models() = %v, %d new requests", got, len(in.requests())-n)
	}
}

func TestBaseURLFromEnvironment(t *testing.T) {
	oa := lt.New(t, lt.JSON(openAIList("proxy-model")), lt.SSE(lt.Event{Data: `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"via proxy"},"finish_reason":"stop"}]}`}, lt.Event{Data: "[DONE]"}))
	an := lt.New(t, lt.JSON(`{"data":[{"type":"model","id":"claude-proxy","display_name":"P","created_at":"2025-01-01T00:00:00Z"}],"has_more":false}`))
	e := env{"OPENAI_API_KEY": "sk-o-123456", "OPENAI_BASE_URL": oa.URL + "/v1", "ANTHROPIC_API_KEY": "sk-a-123456", "ANTHROPIC_BASE_URL": an.URL}
	c := newCatalog(t, config.Config{}, e, oa.Client, "")
	if err := refresh(t, c); err != nil {
		t.Fatal(err)
	}
	want := []string{"openai/proxy-model", "anthropic/claude-proxy", OfflineID}
	if got := c.Models(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Models() = %v, want %v", got, want)
	}
	p, model, err := c.Resolve("openai/proxy-model")
	if err != nil {
		t.Fatal(err)
	}
	_, comp, err := lt.Collect(t, p, llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
	if err != nil || comp.Text != "via proxy" {
		t.Fatalf("stream through OPENAI_BASE_URL: %q, %v", comp.Text, err)
	}
	if r := oa.Last(); r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-o-123456" {
		t.Fatalf("request %s with %q", r.Path, r.Header.Get("Authorization"))
	}
	if an.Last().Path != "/v1/models" {
		t.Fatalf("anthropic path = %s", an.Last().Path)
	}

	// A base_url in config.yaml wins over the environment.
	other := lt.New(t, lt.JSON(openAIList("configured-model")))
	cfg := config.Config{Providers: map[string]config.ProviderConfig{"openai": {BaseURL: other.URL + "/v1"}}}
	c = newCatalog(t, cfg, e, oa.Client, "")
	if err := refresh(t, c); err != nil {
		t.Fatal(err)
	}
	if got := c.Models(); got[0] != "openai/configured-model" {
		t.Fatalf("Models() = %v", got)
	}
}

func TestDiscoveryTimeoutDoesNotBlock(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	release := make(chan struct{})
	asked := make(chan struct{})
	var askedOnce sync.Once
	slow := lt.New(t, func(w http.ResponseWriter, r *http.Request) {
		askedOnce.Do(func() { close(asked) })
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	// Deferred, so that the servers are gone before the leak check even
	// when the test fails (t.Cleanup would run after it).
	defer slow.Close()
	defer close(release)
	fast := lt.New(t, lt.JSON(openAIList("fast-1", "fast-2")))
	defer fast.Close()
	cfg := config.Config{Providers: map[string]config.ProviderConfig{
		"slow": {BaseURL: slow.URL + "/v1", Models: []string{"configured"}},
		"fast": {BaseURL: fast.URL + "/v1"},
	}}
	// The timeout is the window in which the fast provider must answer
	// for its models to be kept: milliseconds, but a loaded machine under
	// -race can stall for longer than the 150ms this once had. The
	// hanging provider shows that the timeout ends Refresh whatever its
	// length.
	c := New(cfg, Options{Getenv: env{}.get, HTTPClient: fast.Client, DiscoveryTimeout: 2 * time.Second, Offline: offline{}})
	c.by["ollama"].baseURL = closedURL(t)

	done := make(chan error, 1)
	go func() { done <- c.Refresh(context.Background()) }()

	// Once the slow provider holds its request, discovery is under way,
	// and it stays so until the timeout: Models must answer meanwhile, so
	// Refresh must not have ended when it does.
	select {
	case <-asked:
	case <-time.After(time.Minute):
		t.Fatal("Refresh never asked the slow provider")
	}
	listed := make(chan []string, 1)
	go func() { listed <- c.Models() }()
	select {
	case got := <-listed:
		if got[0] != "slow/configured" || got[len(got)-1] != OfflineID {
			t.Fatalf("Models() during discovery = %v", got)
		}
	case <-time.After(time.Minute):
		t.Fatal("Models() blocked on discovery")
	}
	select {
	case <-done:
		t.Fatal("Models() answered only once discovery had ended")
	default:
	}

	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Refresh did not respect its timeout")
	}
	if err == nil || !strings.Contains(err.Error(), "slow") || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("Refresh error = %v", err)
	}
	want := []string{"slow/configured", "fast/fast-1", "fast/fast-2", OfflineID}
	if got := c.Models(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Models() = %v, want %v", got, want)
	}
}

func TestCacheAndTTL(t *testing.T) {
	in := newInternet(t, map[string]string{"openrouter.ai/api/v1/models": openAIList("a/one", "b/two")})
	dir := t.TempDir()
	e := env{"OPENROUTER_API_KEY": "sk-or-secret-999"}
	c := newCatalog(t, config.Config{}, e, in.client, dir)
	if err := refresh(t, c); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, cacheName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "sk-or-secret-999") || !strings.Contains(string(raw), "a/one") {
		t.Fatalf("cache file = %s", raw)
	}

	// A new catalog lists the cached models before any network call, and
	// does not ask again within the TTL.
	c2 := newCatalog(t, config.Config{}, e, in.client, dir)
	want := []string{"openrouter/a/one", "openrouter/b/two", OfflineID}
	if got := c2.Models(); !reflect.DeepEqual(got, want) {
		t.Fatalf("cached Models() = %v", got)
	}
	n := len(in.requests())
	if err := refresh(t, c2); err != nil {
		t.Fatal(err)
	}
	if len(in.requests()) != n {
		t.Fatal("a fresh cache entry was fetched again")
	}
	// The cached list is offered only while the provider is present: once
	// its key is gone, so are its models.
	if got := newCatalog(t, config.Config{}, env{}, in.client, dir).Models(); !reflect.DeepEqual(got, []string{OfflineID}) {
		t.Fatalf("without the key Models() = %v", got)
	}
	// Past the TTL it asks again.
	c2.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	in.mu.Lock()
	in.routes["openrouter.ai/api/v1/models"] = openAIList("c/three")
	in.mu.Unlock()
	if err := refresh(t, c2); err != nil {
		t.Fatal(err)
	}
	if got := c2.Models(); !reflect.DeepEqual(got, []string{"openrouter/c/three", OfflineID}) || len(in.requests()) != n+1 {
		t.Fatalf("after TTL Models() = %v, %d new requests", got, len(in.requests())-n)
	}

	// A cache for another address is not used.
	cfg := config.Config{Providers: map[string]config.ProviderConfig{"openrouter": {BaseURL: "https://gateway.example/v1"}}}
	c3 := newCatalog(t, cfg, e, in.client, dir)
	if got := c3.Models(); !reflect.DeepEqual(got, []string{OfflineID}) {
		t.Fatalf("cache for another base URL used: %v", got)
	}

	// A corrupt cache is an empty cache.
	if err := os.WriteFile(filepath.Join(dir, cacheName), []byte("{garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := newCatalog(t, config.Config{}, e, in.client, dir).Models(); !reflect.DeepEqual(got, []string{OfflineID}) {
		t.Fatalf("corrupt cache: %v", got)
	}
}

func TestDiscoveryFailureKeepsPreviousList(t *testing.T) {
	in := newInternet(t, map[string]string{"api.openai.com/v1/models": openAIList("gpt-4o")})
	e := env{"OPENAI_API_KEY": "sk-o-secret-777"}
	c := newCatalog(t, config.Config{}, e, in.client, "")
	if err := refresh(t, c); err != nil {
		t.Fatal(err)
	}
	c.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	in.mu.Lock()
	delete(in.routes, "api.openai.com/v1/models")
	in.mu.Unlock()
	err := refresh(t, c)
	if err == nil || strings.Contains(err.Error(), "sk-o-secret-777") {
		t.Fatalf("Refresh error = %v", err)
	}
	if got := c.Models(); !reflect.DeepEqual(got, []string{"openai/gpt-4o", OfflineID}) {
		t.Fatalf("Models() after a failed refresh = %v", got)
	}
}

func TestLocalOllamaProbe(t *testing.T) {
	oll := lt.New(t, lt.JSON(`{"models":[{"name":"llama3.2:latest"},{"name":"nomic-embed-text:latest"}]}`))
	c := newCatalog(t, config.Config{}, env{}, oll.Client, t.TempDir())
	c.by["ollama"].baseURL = oll.URL
	if err := refresh(t, c); err != nil {
		t.Fatal(err)
	}
	if got := c.Models(); !reflect.DeepEqual(got, []string{"ollama/llama3.2:latest", OfflineID}) {
		t.Fatalf("Models() = %v", got)
	}
	if oll.Last().Path != "/api/tags" || oll.Last().Header.Get("Authorization") != "" {
		t.Fatal("a key was sent to local Ollama")
	}
	// Ollama stops: the next refresh (local lists are never taken from the
	// cache) drops it, and that is not an error.
	updated := c.Updated()
	oll.Close()
	if err := refresh(t, c); err != nil {
		t.Fatalf("an absent local Ollama is not an error: %v", err)
	}
	if got := c.Models(); !reflect.DeepEqual(got, []string{OfflineID}) {
		t.Fatalf("Models() after Ollama stopped = %v", got)
	}
	select {
	case <-updated:
	default:
		t.Fatal("Updated was not signalled")
	}
}

func TestNamedServer(t *testing.T) {
	srv := lt.New(t, lt.JSON(openAIList("qwen3-8b")), lt.SSE(
		lt.Event{Data: `{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}`},
		lt.Event{Data: "[DONE]"}))
	cfg := config.Config{Providers: map[string]config.ProviderConfig{"lmstudio": {BaseURL: srv.URL, APIKeyEnv: "LMSTUDIO_KEY"}}}
	c := newCatalog(t, cfg, env{"LMSTUDIO_KEY": "lm-key-123456"}, srv.Client, "")
	if err := refresh(t, c); err != nil {
		t.Fatal(err)
	}
	if srv.Last().Path != "/v1/models" {
		t.Fatalf("/v1 not added to a bare address: %s", srv.Last().Path)
	}
	p, model, err := c.Resolve("lmstudio/qwen3-8b")
	if err != nil || model != "qwen3-8b" {
		t.Fatalf("Resolve = %q, %v", model, err)
	}
	if _, comp, err := lt.Collect(t, p, llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}); err != nil || comp.Text != "hi" {
		t.Fatalf("stream: %q %v", comp.Text, err)
	}
	if srv.Last().Header.Get("Authorization") != "Bearer lm-key-123456" {
		t.Fatalf("key not sent: %v", srv.Last().Header)
	}
	if p2, _, _ := c.Resolve("lmstudio/other"); p2 != p {
		t.Fatal("the provider was built twice")
	}
}

func TestResolveErrors(t *testing.T) {
	cfg := config.Config{Providers: map[string]config.ProviderConfig{
		"nowhere": {Models: []string{"m"}},
		"keyed":   {BaseURL: "http://127.0.0.1:9/v1", APIKeyEnv: "KEYED_TOKEN"},
	}}
	c := newCatalog(t, cfg, env{}, nil, "")
	rows := []struct {
		id   string
		kind llm.ErrorKind
		want []string
	}{
		{"gpt-4o", llm.ErrOther, []string{`"gpt-4o" is not provider/model`, "openai/gpt-4o"}},
		{"/x", llm.ErrOther, []string{"is not provider/model"}},
		{"openai/", llm.ErrOther, []string{"is not provider/model"}},
		{"mystery/m", llm.ErrOther, []string{`unknown provider "mystery"`, "anthropic, gemini, keyed, nowhere, offline, ollama, ollama_cloud, openai, openrouter", "providers.mystery.base_url"}},
		{"offline/other", llm.ErrOther, []string{OfflineID}},
		{"nowhere/m", llm.ErrOther, []string{"providers.nowhere.base_url"}},
		{"openai/gpt-4o", llm.ErrMissingKey, []string{"no API key", "OPENAI_API_KEY or providers.openai.api_key_env in ~/.infer/config.yaml"}},
		{"anthropic/claude-sonnet-4-5", llm.ErrMissingKey, []string{"ANTHROPIC_API_KEY"}},
		{"openrouter/a/b", llm.ErrMissingKey, []string{"OPENROUTER_API_KEY"}},
		{"gemini/gemini-2.5-flash", llm.ErrMissingKey, []string{"GEMINI_API_KEY"}},
		{"ollama_cloud/gpt-oss:120b", llm.ErrMissingKey, []string{"OLLAMA_API_KEY"}},
		{"keyed/m", llm.ErrMissingKey, []string{"KEYED_TOKEN (named by providers.keyed.api_key_env"}},
	}
	for _, r := range rows {
		_, _, err := c.Resolve(r.id)
		if err == nil {
			t.Errorf("Resolve(%q) succeeded", r.id)
			continue
		}
		if llm.KindOf(err) != r.kind {
			t.Errorf("Resolve(%q) kind = %v, want %v: %v", r.id, llm.KindOf(err), r.kind, err)
		}
		for _, w := range r.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Resolve(%q) = %q, missing %q", r.id, err, w)
			}
		}
	}
	// Local Ollama needs no key; model names may contain slashes and tags.
	p, model, err := c.Resolve("ollama/library/llama3.2:latest")
	if err != nil || p == nil || model != "library/llama3.2:latest" {
		t.Fatalf("Resolve(ollama/…) = %v, %q, %v", p, model, err)
	}
	var le *llm.Error
	_, _, err = c.Resolve("openai/gpt-4o")
	if !errors.As(err, &le) || le.Provider != "openai" || le.Model != "gpt-4o" {
		t.Fatalf("missing-key error = %#v", err)
	}
}

func TestWithV1(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:1234":            "http://localhost:1234/v1",
		"http://localhost:1234/":           "http://localhost:1234/v1",
		"http://localhost:1234/v1":         "http://localhost:1234/v1",
		"https://gw.example.com/openai/v1": "https://gw.example.com/openai/v1",
		"https://gw.example.com/api":       "https://gw.example.com/api",
		"":                                 "",
	} {
		if got := withV1(in); got != want {
			t.Errorf("withV1(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOverrides(t *testing.T) {
	hot, bad := 1.3, 7.0
	cfg := config.Config{Providers: map[string]config.ProviderConfig{
		"openai":   {Effort: "high", Temperature: &hot},
		"lmstudio": {BaseURL: "http://127.0.0.1:9", Effort: "extreme", Temperature: &bad},
	}}
	c := newCatalog(t, cfg, env{}, nil, "")
	if e, temp := c.Overrides("openai/gpt-5"); e != llm.EffortHigh || temp == nil || *temp != 1.3 {
		t.Fatalf("openai overrides = %q, %v", e, temp)
	}
	if e, temp := c.Overrides("lmstudio/m"); e != llm.EffortAuto || temp != nil {
		t.Fatalf("invalid overrides = %q, %v", e, temp)
	}
	if e, temp := c.Overrides("anthropic/x"); e != llm.EffortAuto || temp != nil {
		t.Fatalf("unset overrides = %q, %v", e, temp)
	}
}

// Gemini and Ollama resolve to their native adapters: a base_url written
// for the old compatible endpoints still works, Ollama Cloud never turns
// into a local server, and both offer hosted web search.
func TestGeminiAndOllamaGoNative(t *testing.T) {
	gem := lt.New(t, lt.SSE(lt.Event{Data: `{"candidates":[{"content":{"role":"model","parts":[{"text":"native"}]},"finishReason":"STOP","index":0}]}`}))
	oll := lt.New(t, lt.JSON(`{"message":{"role":"assistant","content":"local"},"done":true,"done_reason":"stop"}`+"\n"))
	cfg := config.Config{Providers: map[string]config.ProviderConfig{
		"gemini": {BaseURL: gem.URL + "/v1beta/openai/"},
		"ollama": {BaseURL: oll.URL + "/v1"},
	}}
	e := env{"GEMINI_API_KEY": "g-key-123456", "OLLAMA_API_KEY": "ol-key-123456"}
	c := newCatalog(t, cfg, e, gem.Client, "")
	req := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}

	p, model, err := c.Resolve("gemini/gemini-3.8-flash")
	if err != nil {
		t.Fatal(err)
	}
	req.Model = model
	if _, comp, err := lt.Collect(t, p, req); err != nil || comp.Text != "native" {
		t.Fatalf("gemini: %q %v", comp.Text, err)
	}
	if r := gem.Last(); r.Path != "/v1beta/models/gemini-3.8-flash:streamGenerateContent" || r.Header.Get("x-goog-api-key") != "g-key-123456" {
		t.Fatalf("gemini request %s", r.Path)
	}
	if _, ok := p.(llm.WebSearcher); !ok {
		t.Fatal("gemini has no hosted search")
	}

	p, model, err = c.Resolve("ollama/llama3.2")
	if err != nil {
		t.Fatal(err)
	}
	req.Model = model
	if _, comp, err := lt.Collect(t, p, req); err != nil || comp.Text != "local" {
		t.Fatalf("ollama: %q %v", comp.Text, err)
	}
	if r := oll.Last(); r.Path != "/api/chat" || r.Header.Get("Authorization") != "" {
		t.Fatalf("ollama request %s with %q: the account key is for search only", r.Path, r.Header.Get("Authorization"))
	}
	if _, ok := p.(llm.WebSearcher); !ok {
		t.Fatal("ollama has no hosted search")
	}

	// Ollama Cloud without its key fails; it does not fall back to local.
	c = newCatalog(t, config.Config{}, env{}, gem.Client, "")
	if _, _, err := c.Resolve("ollama_cloud/gpt-oss:120b"); llm.KindOf(err) != llm.ErrMissingKey {
		t.Fatalf("cloud without key: %v", err)
	}
	if n := len(oll.Requests()); n != 1 {
		t.Fatalf("local Ollama asked %d times", n)
	}
}
