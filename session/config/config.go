// Package config resolves infer's home directory and reads, validates and
// writes its configuration files: browser_use.yaml (the bridge and pairing)
// and config.yaml (models, providers, storage, tools), with a project's
// .infer/config.yaml layered over the user's.
//
// Validation errors name the file, the key and the fix, because a person
// reading them should not need to open the source.
package config

import "time"

// Config is config.yaml after merging the project file over the user file.
type Config struct {
	// Model is the default "provider/model" id; empty means the first
	// configured model, else offline/demo.
	Model string `yaml:"model"`
	// Storage controls conversation persistence.
	Storage StorageConfig `yaml:"storage"`
	// Agent holds defaults for turns.
	Agent AgentConfig `yaml:"agent"`
	// Providers maps a provider name ("openai", "anthropic", "openrouter",
	// "gemini", "ollama", "ollama_cloud", or a named OpenAI-compatible server
	// such as "lmstudio") to its settings.
	Providers map[string]ProviderConfig `yaml:"providers"`
	// Tools configures the tool pipeline.
	Tools ToolsConfig `yaml:"tools"`
	// Sandbox confines commands that no person approved at that moment.
	Sandbox SandboxConfig `yaml:"sandbox"`
	// MCP lists the person's MCP servers and the policy of `infer mcp`.
	MCP MCPConfig `yaml:"mcp"`
	// Network says which hosts sandboxed commands may reach through
	// infer's proxy without asking.
	Network NetworkConfig `yaml:"network"`
}

// NetworkConfig configures infer's network proxy, the only way out for
// sandboxed commands and MCP servers (when sandbox.network is true).
type NetworkConfig struct {
	// Allow lists hosts reached without asking: "example.com",
	// "*.example.com" (its subdomains), either with ":port", or an
	// address. A service on the person's own machine (localhost, 127.x)
	// is allowed only by an entry naming that very host. A project's
	// list counts only once its folder is trusted.
	Allow []string `yaml:"allow"`
}

// Sandbox modes.
const (
	// SandboxAuto confines commands with the best sandbox this system has,
	// and makes every Bash command ask when it has none (fail closed).
	SandboxAuto = "auto"
	// SandboxOff runs every command unconfined: for people who already run
	// infer inside a container or VM. infer warns loudly about it.
	SandboxOff = "off"
)

// SandboxConfig configures the kernel sandbox around commands that run
// without a person's approval at that moment.
type SandboxConfig struct {
	// Mode is "auto" (the default) or "off".
	Mode string `yaml:"mode"`
	// Writable lists more folders commands may write, e.g. build caches
	// (~/.cache/go-build). A leading ~ is the person's home.
	Writable []string `yaml:"writable"`
	// DenyRead lists more files or folders commands may not read, beside
	// the built-in secret stores.
	DenyRead []string `yaml:"deny_read"`
	// Network defaults to true; false cuts sandboxed commands off the
	// network.
	Network *bool `yaml:"network"`
	// Env names environment variables commands inherit beside the
	// built-in list (PATH, HOME, locale, terminal, toolchains, proxy);
	// every other variable is dropped, since a secret's name need not
	// look like one. A project file's list adds to the person's once its
	// folder is trusted.
	Env []string `yaml:"env"`
}

// NetworkAllowed reports whether sandboxed commands keep the network
// (default true).
func (s SandboxConfig) NetworkAllowed() bool { return s.Network == nil || *s.Network }

// StorageConfig controls conversation persistence and the artifacts
// folder.
type StorageConfig struct {
	// Enabled defaults to true; false keeps conversations in memory only.
	Enabled *bool `yaml:"enabled"`
	// ArtifactsMaxMB caps a project's artifacts folder (screenshots and
	// MCP images): past it, the oldest files go when a new one is saved.
	// 0 means DefaultArtifactsMaxMB. A benchmark once left 1,139 files
	// nobody would look at again, so there is no "unlimited".
	ArtifactsMaxMB int `yaml:"artifacts_max_mb"`
}

// DefaultArtifactsMaxMB is the artifacts cap when none is set: some
// hundreds of screenshots, enough for any conversation a person still has
// open.
const DefaultArtifactsMaxMB = 100

// MaxArtifactsMaxMB bounds the setting so that a typo cannot turn the cap
// off by making it larger than any disk.
const MaxArtifactsMaxMB = 100_000

// ArtifactsMaxBytes is the artifacts cap in bytes, the default filled in.
func (s StorageConfig) ArtifactsMaxBytes() int64 {
	mb := s.ArtifactsMaxMB
	if mb <= 0 {
		mb = DefaultArtifactsMaxMB
	}
	return int64(mb) << 20
}

// IsEnabled reports whether conversations are persisted (default true).
func (s StorageConfig) IsEnabled() bool { return s.Enabled == nil || *s.Enabled }

// AgentConfig holds turn defaults.
type AgentConfig struct {
	// Mode is the starting agent mode: standard, plan, auto, auto-with-judge.
	Mode string `yaml:"mode"`
	// Effort is the reasoning effort: auto, none, low, medium, high.
	Effort string `yaml:"effort"`
	// Temperature is 0..2; nil leaves the provider's default.
	Temperature *float64 `yaml:"temperature"`
	// JudgeModel is the model auto-with-judge asks; empty means the current.
	JudgeModel string `yaml:"judge_model"`
	// MaxSteps bounds model calls per turn (default 50).
	MaxSteps int `yaml:"max_steps"`
	// SystemPrompt replaces the built-in system prompt when set.
	SystemPrompt string `yaml:"system_prompt"`
	// StreamIdleTimeout gives up a model request when the provider sends
	// nothing for this long (default 2m): a stalled connection otherwise
	// holds the turn until the person interrupts it.
	StreamIdleTimeout Duration `yaml:"stream_idle_timeout"`
}

// ProviderConfig configures one provider.
type ProviderConfig struct {
	// Kind is "openai", "anthropic" or "openai-compatible". Built-in names
	// imply it; named servers default to openai-compatible.
	Kind string `yaml:"kind"`
	// BaseURL overrides the provider's endpoint.
	BaseURL string `yaml:"base_url"`
	// APIKeyEnv names the environment variable holding the key (built-in
	// providers have a default, e.g. OPENAI_API_KEY).
	APIKeyEnv string `yaml:"api_key_env"`
	// APIKey is a literal key. Discouraged (prefer APIKeyEnv); never logged.
	APIKey string `yaml:"api_key"`
	// Models are ids offered without discovery (the provider's own names).
	Models []string `yaml:"models"`
	// Discover asks the provider's models endpoint for more (default true
	// where the provider has one).
	Discover *bool `yaml:"discover"`
	// Effort and Temperature override the agent defaults for this provider.
	Effort      string   `yaml:"effort"`
	Temperature *float64 `yaml:"temperature"`
}

// ToolsConfig configures the tool pipeline.
type ToolsConfig struct {
	Bash BashConfig `yaml:"bash"`
	// Timeout is the default per-tool timeout (default 2m).
	Timeout Duration `yaml:"timeout"`
}

// BashConfig configures the Bash tool and its guard.
type BashConfig struct {
	// Allow adds whole-command patterns that run without asking in
	// standard mode, e.g. "gh api *" or "git status".
	Allow []string `yaml:"allow"`
	// Deny lists patterns that never run without asking, even in auto mode.
	Deny []string `yaml:"deny"`
	// Timeout bounds one command (default 2m).
	Timeout Duration `yaml:"timeout"`
}

// Duration is a time.Duration written as "30s" or "2m" in YAML.
type Duration time.Duration
