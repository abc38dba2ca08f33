// Package catalog implements llm.Catalog: it knows which providers are
// usable (configured in config.yaml, or a built-in whose key is in the
// environment, or a local Ollama that answers), lists their "provider/model"
// ids and resolves an id to the adapter that serves it.
//
// Models are listed from configuration at once and from each provider's
// models endpoint in the background: Refresh asks the endpoints with a
// timeout and caches the answers on disk, and Updated signals when the list
// changed, so startup never waits for the network.
package catalog

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/llm/anthropic"
	"github.com/infer-workspace/infer/session/llm/gemini"
	"github.com/infer-workspace/infer/session/llm/ollama"
	"github.com/infer-workspace/infer/session/llm/openai"
)

// OfflineID is the built-in offline model, always listed last.
const OfflineID = offlineProvider + "/demo"

const offlineProvider = "offline"

// Options are the catalog's dependencies; zero values get defaults.
type Options struct {
	// Getenv looks up environment variables (default os.Getenv).
	Getenv func(string) string
	// HTTPClient carries model requests and discovery (default: a client
	// without timeout; contexts bound every call).
	HTTPClient *http.Client
	// DiscoveryTimeout bounds one Refresh (default 5s).
	DiscoveryTimeout time.Duration
	// CacheDir holds models.json, the discovered lists; "" disables the
	// disk cache.
	CacheDir string
	// CacheTTL is how long a remote provider's list is reused before
	// Refresh asks again (default 1h). Local servers are always asked.
	CacheTTL time.Duration
	// Offline serves OfflineID.
	Offline llm.Provider
	// ConfigPath is the config file named in messages (default
	// "~/.infer/config.yaml").
	ConfigPath string
}

// Catalog implements llm.Catalog. It is safe for concurrent use.
type Catalog struct {
	cfg   config.Config
	opts  Options
	specs []*spec
	by    map[string]*spec
	now   func() time.Time

	refreshing sync.Mutex // one Refresh at a time

	mu         sync.Mutex
	discovered map[string][]string
	reachable  map[string]bool // probed providers that answered
	cache      cacheFile
	providers  map[string]resolved
	updated    chan struct{}
}

type resolved struct {
	key string
	p   llm.Provider
}

var _ llm.Catalog = (*Catalog)(nil)

// New builds a catalog for cfg. It reads the disk cache but does not touch
// the network; call Refresh for that.
func New(cfg config.Config, opts Options) *Catalog {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	if opts.DiscoveryTimeout <= 0 {
		opts.DiscoveryTimeout = 5 * time.Second
	}
	if opts.CacheTTL <= 0 {
		opts.CacheTTL = time.Hour
	}
	if opts.ConfigPath == "" {
		opts.ConfigPath = "~/.infer/config.yaml"
	}
	c := &Catalog{
		cfg: cfg, opts: opts, now: time.Now,
		by: map[string]*spec{}, discovered: map[string][]string{}, reachable: map[string]bool{},
		providers: map[string]resolved{}, updated: make(chan struct{}),
	}
	c.specs = specs(cfg, opts.Getenv)
	for _, s := range c.specs {
		c.by[s.name] = s
	}
	c.cache = loadCache(opts.CacheDir)
	for _, s := range c.specs {
		if e, ok := c.cache.Providers[s.name]; ok && e.BaseURL == s.baseURL && s.discovers() {
			c.discovered[s.name] = e.Models
			if s.probe {
				c.reachable[s.name] = true
			}
		}
	}
	return c
}

// key returns the API key for s ("" if none).
func (c *Catalog) key(s *spec) string {
	if s.pc.APIKey != "" {
		return s.pc.APIKey
	}
	if s.keyEnv != "" {
		return strings.TrimSpace(c.opts.Getenv(s.keyEnv))
	}
	return ""
}

// present reports whether s's models are offered: it is configured, or its
// key is set, or (a probed local server) it answered discovery.
func (c *Catalog) present(s *spec) bool {
	switch {
	case s.configured:
		return true
	case s.keyNeeded && c.key(s) != "":
		return true
	case s.probe:
		return c.reachable[s.name]
	}
	return false
}

// Models lists every usable id: the configured default first, then
// configured models, then discovered ones, and OfflineID last.
func (c *Catalog) Models() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.modelsLocked()
}

func (c *Catalog) modelsLocked() []string {
	var out []string
	seen := map[string]bool{}
	add := func(id string) {
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	add(c.cfg.Model)
	for _, s := range c.specs {
		if c.present(s) {
			for _, m := range s.pc.Models {
				add(s.name + "/" + m)
			}
		}
	}
	for _, s := range c.specs {
		if c.present(s) && s.defaultModel != "" {
			add(s.name + "/" + s.defaultModel)
		}
	}
	for _, s := range c.specs {
		if c.present(s) {
			for _, m := range c.discovered[s.name] {
				add(s.name + "/" + m)
			}
		}
	}
	add(OfflineID)
	return out
}

// Default is the model a new conversation uses: the configured default,
// else the first configured model, else OfflineID. Discovered models are
// never chosen silently: a key in the environment offers its models, but
// picking one (and paying for it) is the person's decision.
func (c *Catalog) Default() string {
	if c.cfg.Model != "" {
		return c.cfg.Model
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.specs {
		if c.present(s) && len(s.pc.Models) > 0 {
			return s.name + "/" + s.pc.Models[0]
		}
	}
	return OfflineID
}

// Updated returns a channel that is closed the next time Models changes.
// Call it again after each change for the next one.
func (c *Catalog) Updated() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.updated
}

// Resolve returns the provider serving id and the provider's own model
// name, or an error that says how to configure it.
func (c *Catalog) Resolve(id string) (llm.Provider, string, error) {
	name, model, ok := strings.Cut(strings.TrimSpace(id), "/")
	if !ok || name == "" || model == "" {
		return nil, "", fmt.Errorf("model id %q is not provider/model: use for example openai/gpt-4o, ollama/llama3.2 or %s", id, OfflineID)
	}
	if name == offlineProvider {
		if model != "demo" || c.opts.Offline == nil {
			return nil, "", fmt.Errorf("unknown offline model %q: the only offline model is %s", id, OfflineID)
		}
		return c.opts.Offline, model, nil
	}
	s := c.by[name]
	if s == nil {
		return nil, "", fmt.Errorf("unknown provider %q in %q: known providers are %s; to add an OpenAI-compatible server, set providers.%s.base_url in %s",
			name, id, strings.Join(c.knownNames(), ", "), name, c.opts.ConfigPath)
	}
	if s.baseURL == "" {
		return nil, "", fmt.Errorf("provider %q has no address: set providers.%s.base_url in %s", name, name, c.opts.ConfigPath)
	}
	key := c.key(s)
	if s.keyNeeded && key == "" {
		return nil, "", &llm.Error{Kind: llm.ErrMissingKey, Provider: name, Model: model,
			Message: "no API key: set " + s.keyHint(c.opts.ConfigPath)}
	}
	return c.provider(s, key), model, nil
}

func (c *Catalog) knownNames() []string {
	names := []string{offlineProvider}
	for _, s := range c.specs {
		names = append(names, s.name)
	}
	sort.Strings(names)
	return names
}

// provider returns the adapter for s, built once per key.
func (c *Catalog) provider(s *spec, key string) llm.Provider {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.providers[s.name]; ok && r.key == key {
		return r.p
	}
	var p llm.Provider
	hint := s.keyHint(c.opts.ConfigPath)
	idle := c.cfg.Agent.StreamIdleTimeout.Std()
	switch s.kind {
	case kindAnthropic:
		p = anthropic.New(anthropic.Config{Name: s.name, BaseURL: s.baseURL, APIKey: key, RequireKey: s.keyNeeded,
			KeyHint: hint, HTTPClient: c.opts.HTTPClient, IdleTimeout: idle})
	case kindGemini:
		p = gemini.New(gemini.Config{Name: s.name, BaseURL: s.baseURL, APIKey: key, KeyHint: hint,
			HTTPClient: c.opts.HTTPClient, IdleTimeout: idle})
	case kindOllama:
		// A local Ollama searches the web through ollama.com when an
		// account key is in the environment; chat never uses that key.
		p = ollama.New(ollama.Config{Name: s.name, BaseURL: s.baseURL, APIKey: key, RequireKey: s.keyNeeded,
			KeyHint: hint, SearchKey: strings.TrimSpace(c.opts.Getenv("OLLAMA_API_KEY")),
			HTTPClient: c.opts.HTTPClient, IdleTimeout: idle})
	default:
		p = openai.New(openai.Config{Name: s.name, Flavor: s.flavor, BaseURL: s.baseURL, APIKey: key, RequireKey: s.keyNeeded,
			KeyHint: hint, HTTPClient: c.opts.HTTPClient, IdleTimeout: c.cfg.Agent.StreamIdleTimeout.Std()})
	}
	c.providers[s.name] = resolved{key: key, p: p}
	return p
}

// Overrides returns the reasoning effort and temperature that config.yaml
// sets for the provider of id (providers.<name>.effort and .temperature):
// EffortAuto and nil where it sets none. Invalid values are left to the
// config validator and read as unset here.
func (c *Catalog) Overrides(id string) (llm.Effort, *float64) {
	name, _, _ := strings.Cut(id, "/")
	s := c.by[name]
	if s == nil {
		return llm.EffortAuto, nil
	}
	effort, err := llm.ParseEffort(s.pc.Effort)
	if err != nil {
		effort = llm.EffortAuto
	}
	var temp *float64
	if t := s.pc.Temperature; t != nil && llm.ValidateTemperature(*t) == nil {
		v := *t
		temp = &v
	}
	return effort, temp
}

// lister is what discovery needs from an adapter.
type lister interface {
	ListModels(ctx context.Context) ([]string, error)
}

// Refresh asks the models endpoint of every provider whose list is stale
// (older than the cache TTL, or local), all at once and within the
// discovery timeout, then updates the list, the disk cache and Updated.
// It blocks until done, so run it on a goroutine at startup; Models never
// waits for it. Providers that failed keep their previous list; the
// failures are returned joined (a local Ollama that is simply not running
// is not a failure).
func (c *Catalog) Refresh(ctx context.Context) error {
	c.refreshing.Lock()
	defer c.refreshing.Unlock()
	ctx, cancel := context.WithTimeout(ctx, c.opts.DiscoveryTimeout)
	defer cancel()

	type job struct {
		s   *spec
		p   lister
		ids []string
		err error
	}
	var jobs []*job
	c.mu.Lock()
	now := c.now()
	for _, s := range c.specs {
		if !s.discovers() || !(c.present(s) || s.probe) {
			continue
		}
		key := c.key(s)
		if s.keyNeeded && key == "" && !s.publicCatalog() {
			continue
		}
		if e, ok := c.cache.Providers[s.name]; ok && e.BaseURL == s.baseURL && !s.local() && now.Sub(e.FetchedAt) < c.opts.CacheTTL {
			continue
		}
		c.mu.Unlock()
		p, _ := c.provider(s, key).(lister)
		c.mu.Lock()
		if p != nil {
			jobs = append(jobs, &job{s: s, p: p})
		}
	}
	c.mu.Unlock()

	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j.ids, j.err = j.p.ListModels(ctx)
		}()
	}
	wg.Wait()

	var errs []error
	c.mu.Lock()
	before := strings.Join(c.modelsLocked(), "\n")
	for _, j := range jobs {
		name := j.s.name
		if j.err != nil {
			if j.s.probe && !j.s.configured {
				delete(c.reachable, name)
				delete(c.discovered, name)
				continue
			}
			if errors.Is(j.err, context.DeadlineExceeded) || ctx.Err() != nil {
				errs = append(errs, fmt.Errorf("%s: listing models took longer than %s", name, c.opts.DiscoveryTimeout))
			} else {
				errs = append(errs, fmt.Errorf("listing models: %w", j.err))
			}
			continue
		}
		c.discovered[name] = j.ids
		if j.s.probe {
			c.reachable[name] = true
		}
		c.cache.put(name, cacheEntry{BaseURL: j.s.baseURL, FetchedAt: now, Models: j.ids})
	}
	changed := before != strings.Join(c.modelsLocked(), "\n")
	if changed {
		close(c.updated)
		c.updated = make(chan struct{})
	}
	snapshot := c.cache.clone()
	c.mu.Unlock()

	if len(jobs) > 0 {
		if err := saveCache(c.opts.CacheDir, snapshot); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
