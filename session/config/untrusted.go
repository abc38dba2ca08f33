package config

import (
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A project's .infer/config.yaml arrives with every repository the person
// clones, so until they trust its folder it may only set what cannot send
// their keys elsewhere or let more run without asking. The rest waits.
//
// Applied from an untrusted project file:
//
//	model                          when its provider is a built-in, offline, or
//	                               one the person's own config.yaml defines
//	storage.enabled                unless it turns on storage the person turned off
//	agent.effort, agent.temperature, agent.max_steps, agent.stream_idle_timeout
//	providers.<p>.models, .effort, .temperature
//	                               for built-in providers and those the person's
//	                               config.yaml defines
//	tools.bash.deny                added to the person's list (it only narrows)
//	sandbox.deny_read              added to the person's list (it only narrows)
//	sandbox.network                when false (it only narrows)
//	sandbox.mode                   when "auto" (it only narrows)
//
// Everything else waits for trust: any provider's base_url, api_key_env,
// api_key, kind and discover, providers the person does not define,
// agent.mode, agent.judge_model, agent.system_prompt, tools.timeout,
// tools.bash.allow, tools.bash.timeout, sandbox.writable, sandbox.env (it
// lets variables into confined commands), network.allow,
// storage.artifacts_max_mb (a tiny cap would delete the person's
// screenshots as soon as they are taken), and any key added
// to Config later (filterUntrusted starts from the person's own file, so a
// new section is ignored until someone decides otherwise). The mcp section
// waits for trust on purpose: a server is a program infer would start; and
// even trusted, a project's servers run in the sandbox (see
// confineProjectServers), and its sandbox.mode: off is ignored
// (keepSandboxOn).

// Setting is one key a project file sets, as shown to a person deciding
// whether to trust it.
type Setting struct {
	// Key is the dotted key, e.g. "providers.openai.base_url".
	Key string
	// Value is the value as text: strings quoted with control and
	// formatting characters escaped (the file may be hostile and the text
	// goes to a terminal), long text cut, and secrets hidden: api_key,
	// credentials and query values in URLs, and anything that looks like
	// a key or token.
	Value string
}

// filterUntrusted returns the configuration in force while the project
// file is untrusted, and the settings of the project file it leaves out.
// user and project are the two files decoded on their own (no defaults);
// merged is the project layered over the user's, which is what applies
// once the folder is trusted. The result starts from the user's file and
// takes from merged only what appliesUntrusted allows, so any key not
// listed there stays the user's.
func filterUntrusted(user, project, merged Config) (Config, []Setting) {
	out := cloneConfig(user)
	if project.Model != "" && appliesUntrusted([]string{"model"}, user, project) {
		out.Model = merged.Model
	}
	if project.Storage.Enabled != nil && appliesUntrusted([]string{"storage", "enabled"}, user, project) {
		out.Storage.Enabled = merged.Storage.Enabled
	}
	out.Agent.Effort = merged.Agent.Effort
	out.Agent.Temperature = merged.Agent.Temperature
	out.Agent.MaxSteps = merged.Agent.MaxSteps
	out.Agent.StreamIdleTimeout = merged.Agent.StreamIdleTimeout
	for name, pp := range project.Providers {
		if !knownProvider(name, user) || (len(pp.Models) == 0 && pp.Effort == "" && pp.Temperature == nil) {
			continue
		}
		// Only what the project set is taken, so a provider the person
		// never configured gains nothing but its models and tuning: the
		// endpoint and key stay the built-in ones.
		p := out.Providers[name]
		m := merged.Providers[name]
		p.Models = slices.Clone(m.Models)
		p.Effort, p.Temperature = m.Effort, m.Temperature
		if out.Providers == nil {
			out.Providers = map[string]ProviderConfig{}
		}
		out.Providers[name] = p
	}
	// Lists replace when layered, which for a deny list would let the
	// project drop the person's entries: untrusted, they add up instead.
	out.Tools.Bash.Deny = union(user.Tools.Bash.Deny, project.Tools.Bash.Deny)
	out.Sandbox.DenyRead = union(user.Sandbox.DenyRead, project.Sandbox.DenyRead)
	if !project.Sandbox.NetworkAllowed() {
		off := false
		out.Sandbox.Network = &off
	}
	if project.Sandbox.Mode == SandboxAuto {
		out.Sandbox.Mode = SandboxAuto
	}

	var ignored []Setting
	walkSet(reflect.ValueOf(project), nil, func(path []string, v reflect.Value) {
		if !appliesUntrusted(path, user, project) {
			ignored = append(ignored, Setting{Key: strings.Join(path, "."), Value: displayValue(path, v)})
		}
	})
	return out, ignored
}

// appliesUntrusted reports whether the project's value at path (a leaf the
// project file sets) applies while the folder is untrusted. filterUntrusted
// must take exactly these; the tests hold the two together.
func appliesUntrusted(path []string, user, project Config) bool {
	switch strings.Join(path, ".") {
	case "model":
		provider, _, _ := strings.Cut(project.Model, "/")
		return provider == "offline" || knownProvider(provider, user)
	case "storage.enabled":
		// Off only narrows; on must not override a person who keeps their
		// conversations off the disk.
		return !project.Storage.IsEnabled() || user.Storage.IsEnabled()
	case "agent.effort", "agent.temperature", "agent.max_steps", "agent.stream_idle_timeout":
		return true
	case "tools.bash.deny", "sandbox.deny_read":
		return true
	case "sandbox.network":
		return !project.Sandbox.NetworkAllowed()
	case "sandbox.mode":
		return project.Sandbox.Mode == SandboxAuto
	}
	if len(path) == 3 && path[0] == "providers" && knownProvider(path[1], user) {
		switch path[2] {
		case "models", "effort", "temperature":
			return true
		}
	}
	return false
}

// knownProvider reports whether name is a built-in provider or one the
// person's own config.yaml defines: only those may take models and tuning
// from an untrusted project, since their endpoint and key are the
// person's choice.
func knownProvider(name string, user Config) bool {
	if slices.Contains(builtinProviders, name) {
		return true
	}
	_, ok := user.Providers[name]
	return ok
}

// walkSet calls visit for every leaf v sets, in field order (map keys
// sorted): non-empty scalars, non-nil pointers (a false or 0 written in the
// file counts) and non-empty lists. path is the dotted key's parts.
func walkSet(v reflect.Value, path []string, visit func(path []string, v reflect.Value)) {
	switch v.Kind() {
	case reflect.Pointer:
		switch {
		case v.IsNil():
		case isScalarKind(v.Elem().Kind()):
			visit(slices.Clone(path), v.Elem())
		default:
			walkSet(v.Elem(), path, visit)
		}
	case reflect.Struct:
		t := v.Type()
		names := map[int]string{}
		for name, i := range yamlFields(t) {
			names[i] = name
		}
		for i := range t.NumField() {
			if name, ok := names[i]; ok {
				walkSet(v.Field(i), append(path, name), visit)
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			walkSet(v.MapIndex(k), append(path, k.String()), visit)
		}
	case reflect.Slice:
		if v.Len() > 0 {
			visit(slices.Clone(path), v)
		}
	default:
		if !v.IsZero() {
			visit(slices.Clone(path), v)
		}
	}
}

// displayValue renders a setting's value for a person deciding on trust.
func displayValue(path []string, v reflect.Value) string {
	switch path[len(path)-1] {
	case "api_key":
		return "(a literal key, hidden)"
	case "base_url":
		return showString(redactURL(v.String()))
	}
	switch v.Kind() {
	case reflect.String:
		return showString(v.String())
	case reflect.Slice:
		const most = 20
		items := make([]string, 0, min(v.Len(), most))
		for i := 0; i < v.Len() && i < most; i++ {
			items = append(items, showString(v.Index(i).String()))
		}
		s := "[" + strings.Join(items, ", ")
		if v.Len() > most {
			s += fmt.Sprintf(", … %d more", v.Len()-most)
		}
		return s + "]"
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	}
	if d, ok := v.Interface().(Duration); ok {
		return d.String()
	}
	return fmt.Sprint(v.Interface())
}

// showString quotes s with every control, formatting and non-printable
// character escaped (strconv.Quote), so a hostile file cannot move the
// cursor, recolour or reorder what the person reads; long text is cut
// and what looks like a credential is described instead of shown.
func showString(s string) string {
	if looksLikeSecret(s) {
		return fmt.Sprintf("(a %d-character value that looks like a key or token, hidden)", utf8.RuneCountInString(s))
	}
	const limit = 120
	r := []rune(s)
	if len(r) > limit {
		return strconv.Quote(string(r[:limit])) + fmt.Sprintf("… (%d characters)", len(r))
	}
	return strconv.Quote(s)
}

// redactURL hides the credentials a URL may carry: the user information
// and the values of its query parameters. An unparsable URL is shown only
// by its length: it cannot be told apart from a pasted secret.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Sprintf("(a %d-character value that is not a URL)", utf8.RuneCountInString(raw))
	}
	hadUser := u.User != nil
	u.User = nil
	if u.RawQuery != "" {
		q := u.Query()
		keys := slices.Sorted(maps.Keys(q))
		for i, k := range keys {
			keys[i] = url.QueryEscape(k) + "=•••"
		}
		u.RawQuery = strings.Join(keys, "&")
	}
	s := u.String()
	if hadUser {
		s = strings.Replace(s, "://", "://•••@", 1)
	}
	return s
}

// union is a followed by the entries of b it lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// cloneConfig copies c deeply enough that changing the copy's maps and
// lists leaves c alone.
func cloneConfig(c Config) Config {
	if c.Providers != nil {
		ps := make(map[string]ProviderConfig, len(c.Providers))
		for name, p := range c.Providers {
			p.Models = slices.Clone(p.Models)
			ps[name] = p
		}
		c.Providers = ps
	}
	c.Tools.Bash.Allow = slices.Clone(c.Tools.Bash.Allow)
	c.Tools.Bash.Deny = slices.Clone(c.Tools.Bash.Deny)
	c.Sandbox.Writable = slices.Clone(c.Sandbox.Writable)
	c.Sandbox.DenyRead = slices.Clone(c.Sandbox.DenyRead)
	c.Sandbox.Env = slices.Clone(c.Sandbox.Env)
	c.Network.Allow = slices.Clone(c.Network.Allow)
	if c.MCP.Servers != nil {
		ss := make(map[string]MCPServerConfig, len(c.MCP.Servers))
		for name, s := range c.MCP.Servers {
			s.Args = slices.Clone(s.Args)
			s.Env = maps.Clone(s.Env)
			s.Headers = maps.Clone(s.Headers)
			ss[name] = s
		}
		c.MCP.Servers = ss
	}
	return c
}
