package catalog

import (
	"net"
	"net/url"
	"sort"
	"strings"

	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/llm/anthropic"
	"github.com/infer-workspace/infer/session/llm/gemini"
	"github.com/infer-workspace/infer/session/llm/ollama"
	"github.com/infer-workspace/infer/session/llm/openai"
)

// Provider kinds.
const (
	kindOpenAI    = "openai"
	kindAnthropic = "anthropic"
	kindCompat    = "openai-compatible"
	kindGemini    = "gemini" // Gemini's native API (session/llm/gemini)
	kindOllama    = "ollama" // Ollama's native API (session/llm/ollama)
)

// builtin describes a provider infer knows without configuration.
type builtin struct {
	name       string
	kind       string
	flavor     openai.Flavor
	baseURL    string
	baseURLEnv string // the SDK's base URL variable, honoured as it does
	keyEnv     string // "" for providers that need no key
	probe      bool   // looked for during discovery even when not configured
	// defaultModel is listed for the provider as soon as it is present,
	// before (or without) discovery: the provider's own router model.
	defaultModel string
}

// builtins, in the order their models are listed.
var builtins = []builtin{
	{name: "openai", kind: kindOpenAI, flavor: openai.FlavorOpenAI, baseURL: openai.DefaultBaseURL, baseURLEnv: "OPENAI_BASE_URL", keyEnv: "OPENAI_API_KEY"},
	{name: "anthropic", kind: kindAnthropic, baseURL: anthropic.DefaultBaseURL, baseURLEnv: "ANTHROPIC_BASE_URL", keyEnv: "ANTHROPIC_API_KEY"},
	{name: "openrouter", kind: kindOpenAI, flavor: openai.FlavorOpenRouter, baseURL: openai.OpenRouterBaseURL, keyEnv: "OPENROUTER_API_KEY"},
	{name: "payperq", kind: kindOpenAI, flavor: openai.FlavorPayPerQ, baseURL: openai.PayPerQBaseURL, keyEnv: "PPQ_API_KEY", defaultModel: "auto"},
	{name: "gemini", kind: kindGemini, baseURL: gemini.DefaultBaseURL, keyEnv: "GEMINI_API_KEY"},
	{name: "ollama", kind: kindOllama, baseURL: ollama.DefaultBaseURL, probe: true},
	{name: "ollama_cloud", kind: kindOllama, baseURL: ollama.CloudBaseURL, keyEnv: "OLLAMA_API_KEY"},
}

// spec is one provider as configured: a built-in (configured or not) or a
// named server from config.yaml.
type spec struct {
	name       string
	kind       string
	flavor     openai.Flavor
	baseURL    string // "" for a named server without base_url
	keyEnv     string // the variable holding the key, "" if none
	keyNeeded  bool
	configured bool
	probe      bool
	// defaultModel: see builtin.defaultModel.
	defaultModel string
	pc           config.ProviderConfig
}

// specs builds the provider list: built-ins first in their fixed order,
// then named servers sorted by name.
func specs(cfg config.Config, getenv func(string) string) []*spec {
	var out []*spec
	isBuiltin := map[string]bool{}
	for _, b := range builtins {
		isBuiltin[b.name] = true
		pc, configured := cfg.Providers[b.name]
		s := &spec{name: b.name, kind: b.kind, flavor: b.flavor, keyEnv: b.keyEnv, keyNeeded: b.keyEnv != "",
			configured: configured, probe: b.probe, defaultModel: b.defaultModel, pc: pc}
		switch {
		case pc.BaseURL != "" && b.kind == kindOpenAI:
			// Normalised as a named server's is: a bare address gets /v1.
			s.baseURL = withV1(pc.BaseURL)
		case pc.BaseURL != "":
			s.baseURL = pc.BaseURL
		case b.baseURLEnv != "" && getenv(b.baseURLEnv) != "":
			s.baseURL = getenv(b.baseURLEnv)
		default:
			s.baseURL = b.baseURL
		}
		if pc.APIKeyEnv != "" {
			s.keyEnv, s.keyNeeded = pc.APIKeyEnv, true
		}
		out = append(out, s)
	}
	var named []string
	for name := range cfg.Providers {
		if !isBuiltin[name] && name != offlineProvider {
			named = append(named, name)
		}
	}
	sort.Strings(named)
	for _, name := range named {
		pc := cfg.Providers[name]
		s := &spec{name: name, kind: kindCompat, flavor: openai.FlavorCompatible, configured: true, pc: pc,
			keyEnv: pc.APIKeyEnv, keyNeeded: pc.APIKeyEnv != ""}
		switch strings.ToLower(pc.Kind) {
		case kindAnthropic:
			s.kind = kindAnthropic
			s.baseURL = pc.BaseURL
		case kindOpenAI:
			s.kind, s.flavor = kindOpenAI, openai.FlavorOpenAI
			s.baseURL = withV1(pc.BaseURL)
		default:
			s.baseURL = withV1(pc.BaseURL)
		}
		out = append(out, s)
	}
	return out
}

// withV1 appends /v1 to a server address given without a path
// (http://localhost:1234), where OpenAI-style servers serve their API;
// any path given is kept as written.
func withV1(base string) string {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return base
	}
	u.Path = "/v1"
	return u.String()
}

// keyHint tells a person where the key for s comes from.
func (s *spec) keyHint(configPath string) string {
	switch {
	case s.pc.APIKeyEnv != "":
		return s.pc.APIKeyEnv + " (named by providers." + s.name + ".api_key_env in " + configPath + ")"
	case s.keyEnv != "":
		return s.keyEnv + " or providers." + s.name + ".api_key_env in " + configPath
	}
	return "providers." + s.name + ".api_key_env in " + configPath
}

// local reports whether the provider runs on this machine, where asking
// for its models is cheap and the answer changes often.
func (s *spec) local() bool {
	u, err := url.Parse(s.baseURL)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// publicCatalog reports whether the provider's models endpoint answers
// without a key (see openai.PublicCatalog).
func (s *spec) publicCatalog() bool {
	return s.kind == kindOpenAI && openai.PublicCatalog(s.flavor)
}

// discovers reports whether the provider's models endpoint is asked.
func (s *spec) discovers() bool {
	return s.baseURL != "" && (s.pc.Discover == nil || *s.pc.Discover)
}

// KeyVariables names every environment variable that may hold a provider
// key under cfg: the built-in providers' variables and each api_key_env,
// sorted and without repeats. infer reads them; the commands it runs for
// the agent must not see them (see tools.Env.SecretEnv).
func KeyVariables(cfg config.Config) []string {
	seen := map[string]bool{}
	var out []string
	add := func(name string) {
		if name != "" && !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	for _, b := range builtins {
		add(b.keyEnv)
	}
	for _, p := range cfg.Providers {
		add(p.APIKeyEnv)
	}
	sort.Strings(out)
	return out
}
