package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLoadConfigNoFiles(t *testing.T) {
	cfg, warnings, err := LoadConfig(t.TempDir(), t.TempDir())
	if err != nil || len(warnings) != 0 {
		t.Fatalf("err %v, warnings %v", err, warnings)
	}
	if !reflect.DeepEqual(cfg, Config{}.WithDefaults()) {
		t.Errorf("got %+v", cfg)
	}
	if cfg.Agent.Mode != "standard" || cfg.Agent.Effort != "auto" || cfg.Agent.MaxSteps != 50 ||
		cfg.Tools.Timeout.Std() != 2*time.Minute || cfg.Tools.Bash.Timeout.Std() != 2*time.Minute || !cfg.Storage.IsEnabled() {
		t.Errorf("defaults: %+v", cfg)
	}
}

func TestLoadConfigMerge(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	writeFile(t, ConfigPath(home), `
model: openai/gpt-4o
agent:
  mode: auto
  temperature: 0.5
  max_steps: 20
providers:
  openai:
    api_key_env: MY_OPENAI_KEY
    models: [gpt-4o, gpt-4o-mini]
  ollama:
    base_url: http://localhost:11434/v1
tools:
  timeout: 1m
  bash:
    allow: ["git status", "ls *"]
    deny: ["rm -rf *"]
`, 0o600)
	writeFile(t, ProjectConfigPath(project), `
agent:
  mode: plan
  temperature: null   # null leaves the user's value
providers:
  openai:
    models: [o3]
  lmstudio:
    base_url: http://localhost:1234/v1
tools:
  bash:
    allow: ["make test"]
`, 0o600)
	// The layering itself is under test: the folder is trusted, so the
	// project's widening keys apply too (untrusted_test.go covers the rest).
	trust(t, home, project)

	cfg, warnings, err := LoadConfig(home, project)
	if err != nil || len(warnings) != 0 {
		t.Fatalf("err %v, warnings %v", err, warnings)
	}
	if cfg.Model != "openai/gpt-4o" {
		t.Errorf("model = %q (user value should survive)", cfg.Model)
	}
	if cfg.Agent.Mode != "plan" {
		t.Errorf("mode = %q (project should win)", cfg.Agent.Mode)
	}
	if cfg.Agent.Temperature == nil || *cfg.Agent.Temperature != 0.5 {
		t.Errorf("temperature = %v (a project null should not erase it)", cfg.Agent.Temperature)
	}
	if cfg.Agent.MaxSteps != 20 {
		t.Errorf("max_steps = %d", cfg.Agent.MaxSteps)
	}
	openai := cfg.Providers["openai"]
	if openai.APIKeyEnv != "MY_OPENAI_KEY" || !reflect.DeepEqual(openai.Models, []string{"o3"}) || openai.Kind != KindOpenAI {
		t.Errorf("openai = %+v (maps merge by key, lists replace)", openai)
	}
	if p, ok := cfg.Providers["ollama"]; !ok || p.BaseURL != "http://localhost:11434/v1" || p.Kind != KindOpenAICompatible {
		t.Errorf("ollama = %+v, %v (user-only provider should stay)", p, ok)
	}
	if p, ok := cfg.Providers["lmstudio"]; !ok || p.BaseURL != "http://localhost:1234/v1" {
		t.Errorf("lmstudio = %+v, %v (project-only provider should be added)", p, ok)
	}
	if !reflect.DeepEqual(cfg.Tools.Bash.Allow, []string{"make test"}) {
		t.Errorf("allow = %q (lists replace)", cfg.Tools.Bash.Allow)
	}
	if !reflect.DeepEqual(cfg.Tools.Bash.Deny, []string{"rm -rf *"}) {
		t.Errorf("deny = %q", cfg.Tools.Bash.Deny)
	}
	if cfg.Tools.Timeout.Std() != time.Minute {
		t.Errorf("tools.timeout = %v", cfg.Tools.Timeout)
	}
}

func TestLoadConfigProjectOnly(t *testing.T) {
	project := t.TempDir()
	writeFile(t, ProjectConfigPath(project), "agent:\n  mode: auto-with-judge\n", 0o600)
	home := t.TempDir()
	trust(t, home, project)
	cfg, _, err := LoadConfig(home, project)
	if err != nil || cfg.Agent.Mode != "auto-with-judge" {
		t.Fatalf("got %+v, %v", cfg.Agent, err)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	secret := "sk-THIS-IS-A-SECRET-KEY-1234567890"
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"mode", "agent:\n  mode: yolo\n", []string{":2: agent.mode: \"yolo\" is not a mode", "standard, plan, auto, auto-with-judge"}},
		{"effort", "agent:\n  effort: max\n", []string{"agent.effort: \"max\" is not an effort level", "auto, none, low, medium, high"}},
		{"temperature high", "agent:\n  temperature: 3\n", []string{"agent.temperature: 3 is out of range", "from 0 to 2"}},
		{"temperature negative", "agent:\n  temperature: -0.1\n", []string{"agent.temperature: -0.1 is out of range"}},
		{"temperature text", "agent:\n  temperature: hot\n", []string{":2: agent.temperature: expected a number, found text"}},
		{"max steps", "agent:\n  max_steps: -1\n", []string{"agent.max_steps: -1 is negative"}},
		{"max steps fraction", "agent:\n  max_steps: 2.7\n", []string{":2: agent.max_steps: expected a whole number, found \"2.7\""}},
		{"model id", "model: gpt-4o\n", []string{":1: model: \"gpt-4o\" is not a provider/model id", "openai/gpt-4o"}},
		{"judge id", "agent:\n  judge_model: judge\n", []string{"agent.judge_model:"}},
		{"kind", "providers:\n  mine:\n    kind: grpc\n    base_url: http://x\n", []string{":3: providers.mine.kind: \"grpc\" is not a provider kind", "openai, anthropic, openai-compatible"}},
		{"base url scheme", "providers:\n  ollama:\n    base_url: localhost:11434\n", []string{"providers.ollama.base_url: must start with http:// or https://"}},
		{"base url host", "providers:\n  ollama:\n    base_url: http://\n", []string{"providers.ollama.base_url: has no host"}},
		{"base url missing", "providers:\n  lmstudio:\n    models: [x]\n", []string{"providers.lmstudio.base_url: is required for a named OpenAI-compatible server"}},
		{"key in env field", "providers:\n  openai:\n    api_key_env: " + secret + "\n", []string{"providers.openai.api_key_env: is not an environment variable name"}},
		{"key as mapping", "providers:\n  openai:\n    api_key:\n      nested: " + secret + "\n", []string{"providers.openai.api_key: expected text, found nested keys"}},
		{"typo in provider", "providers:\n  openai:\n    apikey: " + secret + "\n", []string{":3: providers.openai.apikey: unknown key", `did you mean "api_key"?`}},
		{"provider name", "providers:\n  \"a/b\":\n    base_url: http://x\n", []string{"providers.a/b: is not a usable provider name"}},
		{"offline reserved", "providers:\n  offline:\n    base_url: http://x\n", []string{"providers.offline: \"offline\" is reserved"}},
		{"empty model", "providers:\n  openai:\n    models: [\"\"]\n", []string{"providers.openai.models[0]: is empty"}},
		{"models not list", "providers:\n  openai:\n    models: gpt-4o\n", []string{"providers.openai.models: expected a list"}},
		{"duration", "tools:\n  timeout: forever\n", []string{":2: tools.timeout: \"forever\" is not a duration"}},
		{"duration fraction", "tools:\n  timeout: 1.5\n", []string{":2: tools.timeout: \"1.5\" has no unit", "1.5s"}},
		{"duration negative", "tools:\n  bash:\n    timeout: -1s\n", []string{"tools.bash.timeout: -1s is out of range", "1s to 24h"}},
		{"duration huge", "tools:\n  timeout: 48h\n", []string{"tools.timeout: 48h is out of range"}},
		{"allow empty", "tools:\n  bash:\n    allow: [\"\"]\n", []string{"tools.bash.allow[0]: is empty"}},
		{"storage type", "storage:\n  enabled: sometimes\n", []string{"storage.enabled: expected true or false"}},
		{"artifacts cap", "storage:\n  artifacts_max_mb: -5\n", []string{"storage.artifacts_max_mb", "-5 is out of range", "from 1 to"}},
		{"unknown top", "modle: openai/gpt-4o\n", []string{"modle: unknown key", `did you mean "model"?`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			writeFile(t, ConfigPath(home), tc.yaml, 0o600)
			_, _, err := LoadConfig(home, "")
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, DisplayPath(ConfigPath(home))) {
				t.Errorf("error does not start with the file: %s", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, secret) {
				t.Errorf("error reveals the API key: %s", msg)
			}
		})
	}
}

func TestLoadConfigNamesTheFileAtFault(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	writeFile(t, ConfigPath(home), "agent:\n  mode: plan\n", 0o600)
	writeFile(t, ProjectConfigPath(project), "agent:\n  mode: nope\n", 0o600)
	_, _, err := LoadConfig(home, project)
	if err == nil {
		t.Fatal("no error")
	}
	if !strings.HasPrefix(err.Error(), DisplayPath(ProjectConfigPath(project))+":2: agent.mode") {
		t.Errorf("error = %v", err)
	}
	if strings.Contains(err.Error(), DisplayPath(ConfigPath(home))) {
		t.Errorf("the valid user file is blamed: %v", err)
	}
}

func TestLoadConfigWarnsAboutLiteralKeys(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	secret := "sk-literal-secret-value"
	writeFile(t, ProjectConfigPath(project), "providers:\n  openai:\n    api_key: "+secret+"\n", 0o644)
	cfg, untrustedWarnings, err := LoadConfig(home, project)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Providers["openai"].APIKey != "" {
		t.Error("an untrusted project's api_key was loaded")
	}
	if joined := strings.Join(untrustedWarnings, "\n"); !strings.Contains(joined, "is set in a project file") || strings.Contains(joined, secret) {
		t.Errorf("untrusted warnings = %q", untrustedWarnings)
	}
	trust(t, home, project)
	cfg, warnings, err := LoadConfig(home, project)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Providers["openai"].APIKey != secret {
		t.Error("api_key not loaded")
	}
	joined := strings.Join(warnings, "\n")
	// The file belongs to the repository, probably committed with mode
	// 0644: the advice is to take the key out of it, not to chmod it.
	for _, want := range []string{"providers.openai.api_key is set in a project file", "remove it from the file", "api_key_env", DisplayPath(ConfigPath(home)), "revoke the key"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %q: %q", want, warnings)
		}
	}
	if strings.Contains(joined, "chmod") {
		t.Errorf("a project file's key gets chmod advice: %q", warnings)
	}
	if strings.Contains(joined, secret) {
		t.Error("a warning reveals the key")
	}
}

// TestHomeConfigKeyOthersCanReadGetsChmod: a literal key in the person's
// own config.yaml is fine where only they can read it, so the advice there
// is the file's mode.
func TestHomeConfigKeyOthersCanReadGetsChmod(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	writeFile(t, ConfigPath(home), "providers:\n  openai:\n    api_key: sk-home-secret\n", 0o644)
	_, warnings, err := LoadConfig(home, project)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(warnings, "\n")
	if !strings.Contains(joined, "chmod 600 "+DisplayPath(ConfigPath(home))) || strings.Contains(joined, "project file") {
		t.Errorf("warnings = %q", warnings)
	}
}

func TestConfigNeverPrintsAPIKey(t *testing.T) {
	secret := "sk-never-print-me"
	cfg := Config{Providers: map[string]ProviderConfig{"openai": {APIKey: secret, Models: []string{"gpt-4o"}}}}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(verb, cfg); strings.Contains(s, secret) {
			t.Errorf("%s reveals the key: %s", verb, s)
		}
	}
	if s := cfg.Providers["openai"].String(); !strings.Contains(s, "set (hidden)") {
		t.Errorf("String() = %q", s)
	}
}

func TestDefaultConfigTemplate(t *testing.T) {
	cfg, err := parseOnly(DefaultConfigYAML(), "template")
	if err != nil {
		t.Fatalf("the template does not load: %v\n%s", err, DefaultConfigYAML())
	}
	if !reflect.DeepEqual(cfg.WithDefaults(), Config{}.WithDefaults()) {
		t.Errorf("the template's values differ from the defaults:\n%+v\n%+v", cfg.WithDefaults(), Config{}.WithDefaults())
	}

	// The provider examples, uncommented, are a valid configuration.
	var b strings.Builder
	b.WriteString("providers:\n")
	for _, line := range strings.Split(providersExample, "\n") {
		b.WriteString("  " + line + "\n")
	}
	examples, err := parseOnly([]byte(b.String()), "providers example")
	if err != nil {
		t.Fatalf("the provider examples do not load: %v", err)
	}
	for _, name := range []string{"openai", "anthropic", "ollama", "lmstudio"} {
		if _, ok := examples.Providers[name]; !ok {
			t.Errorf("no %s example", name)
		}
	}
	if examples.Providers["ollama"].BaseURL != "http://localhost:11434/v1" {
		t.Errorf("ollama example = %+v", examples.Providers["ollama"])
	}

	// Every key of config.yaml is documented in the template.
	text := string(DefaultConfigYAML())
	for _, key := range yamlKeys(reflect.TypeFor[Config](), "") {
		leaf := key[strings.LastIndex(key, ".")+1:]
		if !strings.Contains(text, leaf+":") {
			t.Errorf("the template does not mention %s", key)
		}
	}
}

// yamlKeys lists the dotted keys of a struct type, descending into
// structs and map values.
func yamlKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for name, i := range yamlFields(t) {
		key := joinKey(prefix, name)
		keys = append(keys, key)
		ft := t.Field(i).Type
		switch {
		case ft.Kind() == reflect.Struct && !reflect.PointerTo(ft).Implements(unmarshalerType):
			keys = append(keys, yamlKeys(ft, key)...)
		case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
			keys = append(keys, yamlKeys(ft.Elem(), key+".<name>")...)
		}
	}
	return keys
}

func TestWriteDefaultConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), ConfigFile)
	if err := WriteDefaultConfig(path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v, %v", fi, err)
	}
	writeFile(t, path, "model: mine/model\n", 0o600)
	if err := WriteDefaultConfig(path); err == nil {
		t.Fatal("replaced an existing config.yaml")
	}
	if data, _ := os.ReadFile(path); string(data) != "model: mine/model\n" {
		t.Errorf("existing file changed: %s", data)
	}
}

// TestMisplacedSecretsAreNotEchoed pastes a key or token into each field
// whose error quotes the value back: the message must say what is wrong
// without showing the secret, while ordinary mistakes stay quoted.
func TestMisplacedSecretsAreNotEchoed(t *testing.T) {
	secrets := []string{
		"sk-proj-AbCdEf0123456789AbCdEf0123456789", // OpenAI-style
		"sk-ant-api03-abcdefghijklmnop",            // Anthropic-style, all lower case
		goodToken,                                  // infer's bridge token (base64url)
		"0123456789abcdef0123456789abcdef01234567", // 40 hex digits
		"AIzaSyA-1234567890abcdefghij",             // Google-style
		"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", // AWS secret key
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc", // a JWT
		"hf_abcdefghijklmnopqrstuvwxyzabcdefgh",    // Hugging Face, letters only
		"glpat-abcdefghijklmnopqrst",               // GitLab
		"a1b2c3d4e5f6g7h8i9j0k1l2",                 // one case and digits
		"Q7X2M9K4P8Z3W6R1T5Y0",                     // upper case and digits
	}
	fields := []string{
		"model: %s\n",
		"agent:\n  mode: %s\n",
		"agent:\n  effort: %s\n",
		"agent:\n  judge_model: %s\n",
		"providers:\n  mine:\n    kind: %s\n    base_url: http://x\n",
		"tools:\n  timeout: %s\n",
	}
	for _, secret := range secrets {
		for _, field := range fields {
			home := t.TempDir()
			writeFile(t, ConfigPath(home), fmt.Sprintf(field, secret), 0o600)
			_, _, err := LoadConfig(home, "")
			if err == nil && strings.Contains(secret, "/") && strings.Contains(field, "model") {
				continue // a well-formed provider/model id: nothing to report
			}
			if err == nil {
				t.Fatalf("%q accepted in %q", secret, field)
			}
			msg := err.Error()
			if strings.Contains(msg, secret[:12]) || !strings.Contains(msg, "looks like a key or token (not shown)") {
				t.Errorf("%q in %q: %s", secret, field, msg)
			}
		}
		path := filepath.Join(t.TempDir(), "browser_use.yaml")
		writeFile(t, path, "enabled: true\nextension:\n  token: "+goodToken+"\n  command_timeout: "+secret+"\n", 0o600)
		_, _, err := LoadBrowserUse(path)
		if err == nil || strings.Contains(err.Error(), secret[:12]) {
			t.Errorf("command_timeout %q: %v", secret, err)
		}
	}
	for _, ordinary := range []string{"claude-3-5-sonnet-20241022", "Llama-3.1-70B-Instruct", "yolo-mode-please-thanks", "thirtySecondsOrSo",
		"Meta-Llama-3-70B-Instruct", "DeepSeek-R1-Distill-Llama-70B", "Qwen2.5-Coder-32B-Instruct",
		"gpt-4o-mini-2024-07-18", "gemini-2.0-flash-exp-0827"} {
		home := t.TempDir()
		writeFile(t, ConfigPath(home), "agent:\n  mode: "+ordinary+"\n", 0o600)
		if _, _, err := LoadConfig(home, ""); err == nil || !strings.Contains(err.Error(), strconv.Quote(ordinary)) {
			t.Errorf("%q should be quoted back: %v", ordinary, err)
		}
	}
}

// TestConfigMustBeASmallRegularFile: a cloned project's config.yaml that
// links to /dev/zero, or is huge, is refused before it is read whole.
func TestConfigMustBeASmallRegularFile(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "zero.yaml")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Skip(err)
	}
	if _, err := LoadConfigFile(link); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("/dev/zero: %v", err)
	}
	huge := filepath.Join(dir, "huge.yaml")
	if err := os.WriteFile(huge, []byte("# "+strings.Repeat("x", maxConfigBytes)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfigFile(huge); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a huge file: %v", err)
	}
}

// TestConfigErrorsNameLinesNotValues is what FuzzParseConfig found (issue
// 21): a key indented one level too high became the value the error
// quoted (`providers:\n  api_key: <key>` gave `expected nested keys,
// found "<key>"`). A misplaced value is named by its file, line and key,
// never repeated, however short it is; so is a map name that looks like
// a token.
func TestConfigErrorsNameLinesNotValues(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, secret, want string
	}{
		{"key under providers", "providers:\n  api_key: k3yV4lue9\n", "k3yV4lue9", ":2: providers.api_key: expected nested keys, found text"},
		{"key as a provider", "providers:\n  openai: abcdefgh1234\n", "abcdefgh1234", ":2: providers.openai: expected nested keys, found text"},
		{"key with a colon", "providers:\n  openai: sk:abcdefgh\n", "abcdefgh", "a missing space after the colon"},
		{"key as a list", "tools:\n  bash:\n    allow: s3cr3tvalue\n", "s3cr3tvalue", ":3: tools.bash.allow: expected a list, found text"},
		{"key as a number", "agent:\n  max_steps: zzTopSecret1\n", "zzTopSecret1", "expected a whole number, found text"},
		{"token as a name", "providers:\n  sk-proj-Ab3dEf6hIj9kLm2nOp5q:\n    kind: nope\n", "sk-proj-Ab3dEf6hIj9kLm2nOp5q", "looks like a token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseOnly([]byte(tc.yaml), "config.yaml")
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, tc.secret) {
				t.Errorf("error repeats the value %q: %s", tc.secret, msg)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q lacks %q", msg, tc.want)
			}
		})
	}
}

// TestNetworkAllowIsCheckedWithoutEchoingIt: a network.allow entry that is
// no host is an error naming the key, never the value.
func TestNetworkAllowIsCheckedWithoutEchoingIt(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	writeFile(t, ConfigPath(home), "network:\n  allow: [proxy.golang.org, \"*.npmjs.org\", \"127.0.0.1:8080\"]\n", 0o600)
	cfg, _, err := LoadConfig(home, root)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Network.Allow; len(got) != 3 || got[1] != "*.npmjs.org" {
		t.Fatalf("network.allow = %q", got)
	}
	for _, bad := range []string{"\"*\"", "https://sk-live-secret0123/x", "\"\""} {
		writeFile(t, ConfigPath(home), "network:\n  allow: ["+bad+"]\n", 0o600)
		_, _, err := LoadConfig(home, root)
		if err == nil || !strings.Contains(err.Error(), "network.allow[0]") {
			t.Fatalf("network.allow [%s]: err = %v, want one naming network.allow[0]", bad, err)
		}
		if strings.Contains(err.Error(), "sk-live") {
			t.Fatalf("the error echoes the value: %v", err)
		}
	}
}

// parseOnly decodes and validates config.yaml contents without applying
// defaults, as loading does before it merges; file is the name used in
// errors.
func parseOnly(data []byte, file string) (Config, error) {
	_, cfg, err := parseConfig(data, file)
	return cfg, err
}
