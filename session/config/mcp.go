package config

import (
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// MCPConfig lists the person's MCP servers, whose tools infer's agent may
// call, and how `infer mcp` decides when no person is there to ask.
//
// A project file's mcp section applies only once the person trusts its
// folder (see filterUntrusted): a server is a program infer would start.
type MCPConfig struct {
	// Servers maps a server's name (letters, digits, '-' and '_', no
	// "__") to how to reach it; its tools are offered to the model as
	// mcp__<name>__<tool>.
	Servers map[string]MCPServerConfig `yaml:"servers"`
	// Standalone is the policy of `infer mcp` when no infer workspace runs
	// for this home to ask the person in.
	Standalone MCPStandaloneConfig `yaml:"standalone"`
}

// MCPServerConfig is one MCP server: a command infer starts and talks to
// over stdio, or a streamable HTTP endpoint.
type MCPServerConfig struct {
	// Command and Args start a stdio server, in the project folder.
	Command string   `yaml:"command"`
	Args    []string `yaml:"args"`
	// Env adds variables to the stdio server's environment (which is
	// infer's, without provider keys and the bridge token). ${VAR} in a
	// value is replaced by infer's own VAR.
	Env map[string]string `yaml:"env"`
	// URL is a streamable HTTP server's endpoint.
	URL string `yaml:"url"`
	// Headers are sent with every HTTP request; ${VAR} in a value is
	// replaced by the environment's VAR. A project file may only use
	// such references, never literal values: it is shared with the
	// repository, and headers carry credentials.
	Headers map[string]string `yaml:"headers"`
	// Sandbox defaults to true: a stdio server runs in the sandbox that
	// confines unapproved commands (the network only through infer's
	// proxy). false runs it with the person's full permissions, for
	// servers that need their files; only the person's own config.yaml
	// can say so (confineProjectServers).
	Sandbox *bool `yaml:"sandbox"`
	// Timeout bounds one tool call (default tools.timeout).
	Timeout Duration `yaml:"timeout"`
	// StartTimeout bounds starting and listing tools (default 30s).
	StartTimeout Duration `yaml:"start_timeout"`
	// Disabled keeps the server configured but not started.
	Disabled bool `yaml:"disabled"`
}

// MCPStandaloneConfig is `infer mcp`'s policy without a person.
type MCPStandaloneConfig struct {
	// Mode is "standard" (the default: read-only browser tools run,
	// others only with a saved grant), "plan" (read-only tools only) or
	// "auto" (every browser tool runs).
	Mode string `yaml:"mode"`
}

// DefaultMCPStartTimeout bounds starting an MCP server and listing its
// tools.
const DefaultMCPStartTimeout = 30 * time.Second

// Confined reports whether a stdio server runs in the sandbox (default
// true).
func (s MCPServerConfig) Confined() bool { return s.Sandbox == nil || *s.Sandbox }

// Transport is "stdio" or "http".
func (s MCPServerConfig) Transport() string {
	if s.URL != "" {
		return "http"
	}
	return "stdio"
}

var (
	mcpNameRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$`)
	envRefRE    = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	mcpModes    = []string{"standard", "plan", "auto"}
	headerKeyRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// ExpandEnv replaces each ${VAR} in s with lookup(VAR). It fails, naming
// the variable and never a value, when one is not set.
func ExpandEnv(s string, lookup func(string) (string, bool)) (string, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var missing []string
	out := envRefRE.ReplaceAllStringFunc(s, func(ref string) string {
		name := envRefRE.FindStringSubmatch(ref)[1]
		v, ok := lookup(name)
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("the environment variable %s is not set", strings.Join(missing, ", "))
	}
	return out, nil
}

// validateMCP adds the problems of the mcp section.
// A server lower defines may be given more settings without repeating
// its command or url.
func (c Config) validateMCP(lower Config, add func(key, problem, fix string)) {
	if m := c.MCP.Standalone.Mode; m != "" && !slices.Contains(mcpModes, m) {
		add("mcp.standalone.mode", quoteValue(m)+" is not a mode for infer mcp", "use one of: "+strings.Join(mcpModes, ", "))
	}
	names := make([]string, 0, len(c.MCP.Servers))
	for name := range c.MCP.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := c.MCP.Servers[name]
		under := lower.MCP.Servers[name]
		key := "mcp.servers." + shownKey(name)
		if !mcpNameRE.MatchString(name) || strings.Contains(name, "__") {
			add(key, "is not a usable server name (it becomes part of tool names, mcp__<name>__<tool>)", "use up to 32 letters, digits, '-' or '_' (no \"__\"), starting with a letter or digit")
			continue
		}
		switch {
		case s.Command == "" && s.URL == "" && under.Command == "" && under.URL == "":
			add(key, "has neither command nor url", "set command (and args) for a server infer starts, or url for a streamable HTTP server")
		case s.Command != "" && s.URL != "":
			add(key, "has both command and url", "keep command for a stdio server or url for an HTTP one")
		}
		if s.URL != "" {
			if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				add(key+".url", "is not an http(s) URL", "write the server's endpoint, e.g. https://example.com/mcp")
			}
		}
		if s.URL != "" || under.URL != "" && s.Command == "" {
			if len(s.Args) > 0 || len(s.Env) > 0 {
				add(key, "sets args or env, which only stdio servers use", "remove them, or use command instead of url")
			}
		}
		if (s.Command != "" || under.Command != "" && s.URL == "") && len(s.Headers) > 0 {
			add(key+".headers", "is only for HTTP servers", "remove it, or pass credentials to a stdio server through env")
		}
		for k := range s.Env {
			if !envNameRE.MatchString(k) {
				add(key+".env."+shownKey(k), "is not an environment variable name", "use letters, digits and '_', not starting with a digit")
			}
		}
		for k, v := range s.Headers {
			if !headerKeyRE.MatchString(k) {
				add(key+".headers."+shownKey(k), "is not an HTTP header name", "write a header name such as Authorization")
			}
			if strings.ContainsAny(v, "\r\n") {
				add(key+".headers."+shownKey(k), "holds a line break", "write the value on one line")
			}
		}
		checkDur := func(k string, d Duration) {
			if d < 0 || d.Std() > MaxToolTimeout || (d > 0 && d.Std() < time.Second) {
				add(key+"."+k, d.String()+" is out of range", "use a duration from 1s to 24h, or remove it for the default")
			}
		}
		checkDur("timeout", s.Timeout)
		checkDur("start_timeout", s.StartTimeout)
	}
}

// projectMCPProblems rejects literal header values in a project file: a
// file that travels with the repository must name environment variables
// (${TOKEN}) rather than hold the credentials headers carry.
func projectMCPProblems(c Config) []*FieldError {
	var ps []*FieldError
	names := make([]string, 0, len(c.MCP.Servers))
	for name := range c.MCP.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		hs := c.MCP.Servers[name].Headers
		keys := make([]string, 0, len(hs))
		for k := range hs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !envRefRE.MatchString(hs[k]) {
				ps = append(ps, &FieldError{
					Key:     "mcp.servers." + shownKey(name) + ".headers." + shownKey(k),
					Problem: "holds a literal value in a project file, which is shared with the repository",
					Fix:     "put the value in an environment variable and write ${VARIABLE} (e.g. \"Bearer ${GITHUB_TOKEN}\"), or move the server to your own ~/.infer/config.yaml",
				})
			}
		}
	}
	return ps
}

// confineProjectServers makes every stdio server that a project file
// starts or changes run in the sandbox, whatever the files say, and
// returns a warning for each one that asked otherwise. Trust pins the
// project file's bytes, not the program it names: a confined command can
// rewrite ./tools/devserver.sh, and the next start would run it with the
// person's full rights. So only the person's own config.yaml may set
// sandbox: false, and only for a server whose command, args and env a
// project does not touch.
func confineProjectServers(project Config, merged *Config, projectFile, userFile string) []string {
	names := make([]string, 0, len(project.MCP.Servers))
	for name := range project.MCP.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	var ws []string
	for _, name := range names {
		s, ok := merged.MCP.Servers[name]
		if !ok || s.Confined() {
			continue
		}
		p := project.MCP.Servers[name]
		why := "sets sandbox: false"
		if p.Sandbox == nil || *p.Sandbox {
			if p.Command == "" && len(p.Args) == 0 && len(p.Env) == 0 {
				continue // the person's own server, untouched
			}
			why = "changes the command, args or env of a server your config.yaml runs outside the sandbox"
		}
		on := true
		s.Sandbox = &on
		merged.MCP.Servers[name] = s
		ws = append(ws, fmt.Sprintf("%s: mcp.servers.%s %s, which only your own %s may do, so the server runs in the sandbox; to run it with your full permissions, move it to %s",
			DisplayPath(projectFile), shownKey(name), why, DisplayPath(userFile), DisplayPath(userFile)))
	}
	return ws
}

// keepSandboxOn undoes a trusted project file's sandbox.mode: off unless the
// person's own config.yaml already says off. Trust pins the file's bytes,
// but turning the sandbox off would run every later command the model
// writes with the person's full permissions: like an MCP server outside
// the sandbox (confineProjectServers), that is the person's call alone.
func keepSandboxOn(user, project Config, merged *Config, projectFile, userFile string) []string {
	if project.Sandbox.Mode != SandboxOff || user.Sandbox.Mode == SandboxOff {
		return nil
	}
	merged.Sandbox.Mode = user.Sandbox.Mode
	return []string{fmt.Sprintf("%s: sandbox.mode: off is ignored, because only your own %s may turn the sandbox off; commands stay confined",
		DisplayPath(projectFile), DisplayPath(userFile))}
}
