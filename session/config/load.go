package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Defaults of config.yaml.
const (
	DefaultMode        = "standard"
	DefaultEffort      = "auto"
	DefaultMaxSteps    = 50
	DefaultToolTimeout = 2 * time.Minute
	// DefaultStreamIdleTimeout is how long a provider may send nothing
	// before infer gives up the request.
	DefaultStreamIdleTimeout = 2 * time.Minute
	// MaxToolTimeout bounds tool timeouts; beyond a day a hung tool is a bug.
	MaxToolTimeout = 24 * time.Hour
)

// Provider kinds: the wire protocol a provider speaks.
const (
	KindOpenAI           = "openai"
	KindAnthropic        = "anthropic"
	KindOpenAICompatible = "openai-compatible"
)

var (
	validModes   = []string{"standard", "plan", "auto", "auto-with-judge"}
	validEfforts = []string{"auto", "none", "low", "medium", "high"}
	validKinds   = []string{KindOpenAI, KindAnthropic, KindOpenAICompatible}
	// builtinProviders need no base_url: their endpoints are known.
	builtinProviders = []string{"openai", "anthropic", "openrouter", "gemini", "ollama", "ollama_cloud"}

	providerNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	envNameRE      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// Loaded is what Load read: the configuration in force, and what the
// project file sets that waits for the person's trust.
type Loaded struct {
	// Config is the configuration in force, with defaults applied.
	Config Config
	// Warnings are problems that did not stop loading, for the person:
	// a literal api_key in a project file, and the settings an untrusted
	// project file sets that were ignored, with how to trust the folder.
	Warnings []string
	// Trust is the project file's trust status (NoProjectConfig when
	// there is none).
	Trust TrustStatus
	// NeedsTrust lists the project file's settings that route secrets or
	// widen what runs without asking, with their values for display:
	// applied when Trust.State is Trusted, ignored otherwise.
	NeedsTrust []Setting
}

// Ignored returns the dotted keys of the project file that were not
// applied because its folder is not trusted; nil when it is trusted.
func (l Loaded) Ignored() []string {
	if l.Trust.State == Trusted {
		return nil
	}
	keys := make([]string, len(l.NeedsTrust))
	for i, s := range l.NeedsTrust {
		keys[i] = s.Key
	}
	return keys
}

// LoadConfig is Load for callers that need only the configuration and
// the warnings, which say what an untrusted project file was not allowed
// to set.
func LoadConfig(home, projectRoot string) (Config, []string, error) {
	l, err := Load(home, projectRoot)
	return l.Config, l.Warnings, err
}

// Load reads <home>/config.yaml and then <projectRoot>/.infer/config.yaml
// (both optional; projectRoot may be empty) and layers the project file over
// the user's: scalars override, maps merge key by key, lists replace, and a
// null leaves the lower value. Each file is checked on its own so errors
// name the file at fault. The result has defaults applied (WithDefaults).
//
// A project file comes with the repository, so unless the person trusted
// its folder (see Trust) only its harmless settings apply; the others
// (see filterUntrusted) are listed in NeedsTrust and named in a warning.
// The file is read once, and the same bytes are hashed for the trust check
// and parsed, so a file swapped in between cannot pass as trusted.
// Warnings, such as a literal api_key in a project file that may be
// committed, do not stop loading.
func Load(home, projectRoot string) (Loaded, error) {
	var (
		out      Loaded
		errs     []error
		userDoc  *document
		userCfg  Config
		projDoc  *document
		projCfg  Config
		projPath = projectConfigFile(home, projectRoot)
	)
	if err := CheckHome(home); err != nil {
		return out, err
	}
	userPath := ConfigPath(home)
	doc, cfg, err := readConfigFile(userPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		errs = append(errs, err)
	default:
		userDoc, userCfg = doc, cfg
		out.Warnings = append(out.Warnings, configWarnings(userPath, doc, cfg, "")...)
	}
	paths := []string{userPath}
	if projPath != "" {
		paths = append(paths, projPath)
		st, data, err := projectFileStatus(home, projectRoot)
		out.Trust = st
		switch {
		case err != nil:
			errs = append(errs, &FieldError{File: DisplayPath(projPath), Problem: "cannot be read: " + unwrapPathError(err), Fix: "check its permissions", Err: err})
		case data != nil:
			if projDoc, projCfg, err = parseConfigOver(data, DisplayPath(projPath), userCfg); err != nil {
				errs = append(errs, err)
				break
			}
			if err := projDoc.locate(projectMCPProblems(projCfg)); err != nil {
				errs = append(errs, err)
				break
			}
			out.Warnings = append(out.Warnings, configWarnings(projPath, projDoc, projCfg, userPath)...)
			if err := lookupTrust(home, &out.Trust); err != nil {
				// Fail closed: a store that cannot be believed trusts nothing.
				out.Warnings = append(out.Warnings, err.Error()+"; until then no project folder is trusted")
			}
		}
	}
	if len(errs) > 0 {
		return out, errors.Join(errs...)
	}
	var merged Config
	if root := mergeNodes(docRoot(userDoc), docRoot(projDoc)); !isNull(root) {
		// Each file already passed the strict decode; the merged tree holds
		// only their keys.
		if err := root.Decode(&merged); err != nil {
			return out, fmt.Errorf("merge %s: %w", strings.Join(displayAll(paths), " and "), err)
		}
	}
	if projDoc != nil {
		filtered, needs := filterUntrusted(userCfg, projCfg, merged)
		out.NeedsTrust = needs
		if out.Trust.State != Trusted {
			merged = filtered
			if len(needs) > 0 {
				out.Warnings = append(out.Warnings, untrustedWarning(out.Trust, needs))
			}
		} else {
			// Lists replace when layered; a project's names add to the
			// person's rather than drop them.
			merged.Sandbox.Env = union(userCfg.Sandbox.Env, projCfg.Sandbox.Env)
			out.Warnings = append(out.Warnings, confineProjectServers(projCfg, &merged, projPath, userPath)...)
			out.Warnings = append(out.Warnings, keepSandboxOn(userCfg, projCfg, &merged, projPath, userPath)...)
		}
	}
	out.Config = merged.WithDefaults()
	return out, nil
}

func docRoot(d *document) *yaml.Node {
	if d == nil {
		return nil
	}
	return d.root
}

// untrustedWarning names what an untrusted project file was not allowed to
// set and how to allow it. It lists keys only: the values are for `infer
// trust`, which shows them before the person decides.
func untrustedWarning(st TrustStatus, ignored []Setting) string {
	keys := make([]string, len(ignored))
	for i, s := range ignored {
		keys[i] = s.Key
	}
	why := "this folder is not trusted"
	if st.State == TrustChanged {
		why = "it changed since you trusted this folder"
	}
	return fmt.Sprintf("%s: ignored %s because %s: %s; read the file, then run `infer trust` in %s to apply them",
		DisplayPath(st.File), plural(len(keys), "setting"), why, strings.Join(keys, ", "), DisplayPath(st.Folder))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// LoadConfigFile reads and validates one config.yaml on its own, with
// defaults applied. A missing file is an error matching fs.ErrNotExist.
func LoadConfigFile(path string) (Config, error) {
	_, cfg, err := readConfigFile(path)
	if err != nil {
		return Config{}, err
	}
	return cfg.WithDefaults(), nil
}

func readConfigFile(path string) (*document, Config, error) {
	shown := DisplayPath(path)
	data, err := readSmallFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, Config{}, &FieldError{File: shown, Problem: "does not exist", Fix: "run `infer init` to create a commented one", Err: err}
		}
		return nil, Config{}, &FieldError{File: shown, Problem: "cannot be read: " + unwrapPathError(err), Fix: "check its permissions", Err: err}
	}
	return parseConfig(data, shown)
}

func parseConfig(data []byte, file string) (*document, Config, error) {
	return parseConfigOver(data, file, Config{})
}

// parseConfigOver is parseConfig for a file layered over lower: a named
// server that lower gives a base_url needs none here, so a project can
// list more models for the person's own server without repeating (and,
// untrusted, without being allowed to change) where it is.
func parseConfigOver(data []byte, file string, lower Config) (*document, Config, error) {
	var cfg Config
	doc, err := parseStrict(data, file, &cfg)
	if err != nil {
		return nil, Config{}, err
	}
	if err := doc.locate(cfg.validateOver(lower)); err != nil {
		return nil, Config{}, err
	}
	return doc, cfg, nil
}

// configWarnings flags literal API keys where they are likely to leak.
// homeConfig is the person's own config.yaml when path is a project's
// file, and "" when path is that file itself.
func configWarnings(path string, doc *document, cfg Config, homeConfig string) []string {
	project := homeConfig != ""
	var names []string
	for name, p := range cfg.Providers {
		if p.APIKey != "" {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	shown := DisplayPath(path)
	var ws []string
	for _, name := range names {
		key := "providers." + name + ".api_key"
		where := shown
		if line := doc.lines[key]; line > 0 {
			where = fmt.Sprintf("%s:%d", shown, line)
		}
		if project {
			ws = append(ws, fmt.Sprintf("%s: %s is set in a project file, which may be (or end up) in version control; remove it from the file and put the key in an environment variable named with api_key_env, or in %s; if the file was ever committed or shared, revoke the key and make a new one", where, key, DisplayPath(homeConfig)))
		}
	}
	// A project file is the repository's, often committed and cloned with
	// the mode git gives every file: tightening its mode protects nothing
	// that a push has not already shared, so the advice above replaces it.
	if project {
		return ws
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 && !isWindows() {
		ws = append(ws, fmt.Sprintf("%s holds an API key but other users can access it (mode %04o); run `chmod 600 %s`", shown, fi.Mode().Perm(), shown))
	}
	return ws
}

func displayAll(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = DisplayPath(p)
	}
	return out
}

// Validate checks the values that are set; unset values mean defaults. The
// errors name the key and the fix but no file, and never an API key.
func (c Config) Validate() error {
	problems := c.validate()
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = p
	}
	return errors.Join(errs...)
}

func (c Config) validate() []*FieldError { return c.validateOver(Config{}) }

// validateOver is validate for a file layered over lower (see
// parseConfigOver).
func (c Config) validateOver(lower Config) []*FieldError {
	var ps []*FieldError
	add := func(key, problem, fix string) {
		ps = append(ps, &FieldError{Key: key, Problem: problem, Fix: fix})
	}
	checkModelID := func(key, id string) {
		if id == "" {
			return
		}
		provider, model, ok := strings.Cut(id, "/")
		if !ok || provider == "" || model == "" {
			add(key, quoteValue(id)+" is not a provider/model id", `write it as provider/model, e.g. "openai/gpt-4o" or "offline/demo"`)
		}
	}
	checkEffort := func(key, effort string) {
		if effort != "" && !slices.Contains(validEfforts, effort) {
			add(key, quoteValue(effort)+" is not an effort level", "use one of: "+strings.Join(validEfforts, ", "))
		}
	}
	checkTemperature := func(key string, t *float64) {
		if t != nil && !(*t >= 0 && *t <= 2) {
			add(key, fmt.Sprintf("%g is out of range", *t), "use a number from 0 to 2, or remove it to keep the provider's default")
		}
	}
	checkTimeoutOr := func(key string, d Duration, def time.Duration) {
		if d < 0 || d.Std() > MaxToolTimeout || (d > 0 && d.Std() < time.Second) {
			add(key, d.String()+" is out of range", fmt.Sprintf("use a duration from 1s to 24h, or remove it for the default (%s)", Duration(def)))
		}
	}
	checkTimeout := func(key string, d Duration) { checkTimeoutOr(key, d, DefaultToolTimeout) }

	checkModelID("model", c.Model)
	if mb := c.Storage.ArtifactsMaxMB; mb < 0 || mb > MaxArtifactsMaxMB {
		add("storage.artifacts_max_mb", fmt.Sprintf("%d is out of range", mb),
			fmt.Sprintf("use a number of megabytes from 1 to %d, or remove it for the default (%d)", MaxArtifactsMaxMB, DefaultArtifactsMaxMB))
	}
	a := c.Agent
	if a.Mode != "" && !slices.Contains(validModes, a.Mode) {
		add("agent.mode", quoteValue(a.Mode)+" is not a mode", "use one of: "+strings.Join(validModes, ", "))
	}
	checkEffort("agent.effort", a.Effort)
	checkTemperature("agent.temperature", a.Temperature)
	checkModelID("agent.judge_model", a.JudgeModel)
	checkTimeoutOr("agent.stream_idle_timeout", a.StreamIdleTimeout, DefaultStreamIdleTimeout)
	if a.MaxSteps < 0 {
		add("agent.max_steps", fmt.Sprintf("%d is negative", a.MaxSteps), fmt.Sprintf("use a positive number, or remove it for the default (%d)", DefaultMaxSteps))
	}

	names := make([]string, 0, len(c.Providers))
	for name := range c.Providers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := c.Providers[name]
		key := "providers." + name
		if !providerNameRE.MatchString(name) {
			add("providers."+shownKey(name), "is not a usable provider name (it becomes the part before / in model ids)", "use letters, digits, '.', '_' or '-', starting with a letter or digit")
			continue
		}
		if name == "offline" {
			add(key, `"offline" is reserved for the built-in offline/demo model`, "choose another name")
			continue
		}
		if p.Kind != "" && !slices.Contains(validKinds, p.Kind) {
			add(key+".kind", quoteValue(p.Kind)+" is not a provider kind", "use one of: "+strings.Join(validKinds, ", "))
		}
		if p.BaseURL != "" {
			if problem := checkBaseURL(p.BaseURL); problem != "" {
				// The URL itself is not echoed: it may carry credentials.
				add(key+".base_url", problem, "write a full URL such as http://localhost:11434/v1")
			}
		} else if p.KindFor(name) == KindOpenAICompatible && !slices.Contains(builtinProviders, name) && lower.Providers[name].BaseURL == "" {
			add(key+".base_url", "is required for a named OpenAI-compatible server", "set it to the server's API root, e.g. http://localhost:1234/v1")
		}
		if p.APIKeyEnv != "" && !envNameRE.MatchString(p.APIKeyEnv) {
			// Not echoed either: people paste the key itself here.
			add(key+".api_key_env", "is not an environment variable name", "name the variable that holds the key (e.g. OPENAI_API_KEY); a literal key belongs in api_key")
		}
		for i, m := range p.Models {
			if strings.TrimSpace(m) == "" {
				add(fmt.Sprintf("%s.models[%d]", key, i), "is empty", "remove it or write the model's name")
			}
		}
		checkEffort(key+".effort", p.Effort)
		checkTemperature(key+".temperature", p.Temperature)
	}

	checkTimeout("tools.timeout", c.Tools.Timeout)
	checkTimeout("tools.bash.timeout", c.Tools.Bash.Timeout)
	for i, pat := range c.Tools.Bash.Allow {
		if strings.TrimSpace(pat) == "" {
			add(fmt.Sprintf("tools.bash.allow[%d]", i), "is empty", "remove it or write a command pattern such as \"git status\"")
		}
	}
	for i, pat := range c.Tools.Bash.Deny {
		if strings.TrimSpace(pat) == "" {
			add(fmt.Sprintf("tools.bash.deny[%d]", i), "is empty", "remove it or write a command pattern such as \"rm -rf *\"")
		}
	}
	sb := c.Sandbox
	if sb.Mode != "" && sb.Mode != SandboxAuto && sb.Mode != SandboxOff {
		add("sandbox.mode", quoteValue(sb.Mode)+" is not a sandbox mode", `use "auto" (the default) or "off"`)
	}
	for i, p := range sb.Writable {
		if strings.TrimSpace(p) == "" {
			add(fmt.Sprintf("sandbox.writable[%d]", i), "is empty", "remove it or write a folder, e.g. ~/.cache/go-build")
		}
	}
	for i, p := range sb.DenyRead {
		if strings.TrimSpace(p) == "" {
			add(fmt.Sprintf("sandbox.deny_read[%d]", i), "is empty", "remove it or write a file or folder, e.g. ~/.config/secrets")
		}
	}
	for i, name := range sb.Env {
		if !envNameRE.MatchString(name) {
			add(fmt.Sprintf("sandbox.env[%d]", i), "is not an environment variable name", "write the variable's name only (e.g. DATABASE_URL), not its value")
		}
	}
	for i, h := range c.Network.Allow {
		if bad := checkAllowHost(h); bad != "" {
			add(fmt.Sprintf("network.allow[%d]", i), bad, `write a host such as "proxy.golang.org", "*.npmjs.org" or "registry.example.com:8443"`)
		}
	}
	c.validateMCP(lower, add)
	return ps
}

func checkBaseURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return "is not a valid URL: " + ue.Err.Error()
		}
		return "is not a valid URL"
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "must start with http:// or https://"
	}
	if u.Host == "" {
		return "has no host"
	}
	return ""
}

// KindFor returns the provider's kind: the configured one, else the kind
// its name implies ("openai", "anthropic"; any other name speaks the
// OpenAI-compatible protocol).
func (p ProviderConfig) KindFor(name string) string {
	switch {
	case p.Kind != "":
		return p.Kind
	case name == "openai":
		return KindOpenAI
	case name == "anthropic":
		return KindAnthropic
	}
	return KindOpenAICompatible
}

// String describes the provider without its API key.
func (p ProviderConfig) String() string {
	key := "unset"
	if p.APIKey != "" {
		key = "set (hidden)"
	}
	return fmt.Sprintf("kind=%s base_url=%s api_key_env=%s api_key=%s models=%v", p.Kind, p.BaseURL, p.APIKeyEnv, key, p.Models)
}

// GoString hides the API key under %#v too.
func (p ProviderConfig) GoString() string { return "config.ProviderConfig{" + p.String() + "}" }

// WithDefaults returns c with unset values filled in: mode standard, effort
// auto, 50 steps, 2m tool, Bash and stream idle timeouts, storage on, a
// 100 MB artifacts cap, and each provider's kind resolved from its name.
// Maps and lists are copied so the result can be changed without touching
// c.
func (c Config) WithDefaults() Config {
	if c.Storage.Enabled == nil {
		on := true
		c.Storage.Enabled = &on
	}
	if c.Storage.ArtifactsMaxMB == 0 {
		c.Storage.ArtifactsMaxMB = DefaultArtifactsMaxMB
	}
	if c.Agent.Mode == "" {
		c.Agent.Mode = DefaultMode
	}
	if c.Agent.Effort == "" {
		c.Agent.Effort = DefaultEffort
	}
	if c.Agent.MaxSteps == 0 {
		c.Agent.MaxSteps = DefaultMaxSteps
	}
	if c.Agent.StreamIdleTimeout == 0 {
		c.Agent.StreamIdleTimeout = Duration(DefaultStreamIdleTimeout)
	}
	if c.Tools.Timeout == 0 {
		c.Tools.Timeout = Duration(DefaultToolTimeout)
	}
	if c.Tools.Bash.Timeout == 0 {
		c.Tools.Bash.Timeout = Duration(DefaultToolTimeout)
	}
	c.Tools.Bash.Allow = append([]string(nil), c.Tools.Bash.Allow...)
	c.Tools.Bash.Deny = append([]string(nil), c.Tools.Bash.Deny...)
	if c.Sandbox.Mode == "" {
		c.Sandbox.Mode = SandboxAuto
	}
	if c.MCP.Standalone.Mode == "" {
		c.MCP.Standalone.Mode = DefaultMode
	}
	if c.Sandbox.Network == nil {
		on := true
		c.Sandbox.Network = &on
	}
	c.Sandbox.Writable = append([]string(nil), c.Sandbox.Writable...)
	c.Sandbox.DenyRead = append([]string(nil), c.Sandbox.DenyRead...)
	c.Sandbox.Env = append([]string(nil), c.Sandbox.Env...)
	c.Network.Allow = append([]string(nil), c.Network.Allow...)
	if c.Providers != nil {
		providers := make(map[string]ProviderConfig, len(c.Providers))
		for name, p := range c.Providers {
			p.Kind = p.KindFor(name)
			p.Models = append([]string(nil), p.Models...)
			providers[name] = p
		}
		c.Providers = providers
	}
	return c
}

// maxConfigBytes bounds a config file: far above any real one, it keeps a
// cloned project's config.yaml that links to /dev/zero (or is a huge
// file) from eating memory before anyone is asked to trust it.
const maxConfigBytes = 1 << 20

// readSmallFile reads a regular file of at most maxConfigBytes. Anything
// else (a device, a FIFO that would block, a socket) is refused: a config
// file is only ever a file.
func readSmallFile(path string) ([]byte, error) {
	// Checked before opening: opening a FIFO would already block.
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("not a regular file")}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxConfigBytes {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d bytes", maxConfigBytes)}
	}
	return data, nil
}

// checkAllowHost says what is wrong with a network.allow entry, or "".
// The message never repeats the entry: it is a value from a file.
func checkAllowHost(h string) string {
	h = strings.TrimSpace(h)
	switch {
	case h == "":
		return "is empty"
	case h == "*" || strings.HasPrefix(h, "*") && !strings.HasPrefix(h, "*."):
		return "is a wildcard for every host; name the hosts instead"
	case strings.Contains(h, "://") || strings.ContainsAny(h, "/ \t@?#"):
		return "is not a host name (a URL or a path?)"
	}
	return ""
}
