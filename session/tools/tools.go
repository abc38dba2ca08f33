// Package tools is the workspace's tool registry and permission pipeline:
// the tools an agent (or the extension's tool_request, or the person) can
// call — Bash, Read, Write, Edit, Grep, Tree and the six browser tools —
// and the one path every call takes: validate the arguments against the
// tool's schema, decide by mode, allowlist and saved grants whether it
// runs, asks or is refused, ask an Approver (and in auto-with-judge mode a
// Judge first) when needed, run with a timeout, and return exactly one
// Outcome.
//
// Each built-in tool is described once, in its own file: its name
// constant, its typed arguments (from which its schema is generated) and
// how its calls show to people (Show), so no front end switches on tool
// names.
//
// The workspace owns approval requests and conversations; this package
// only calls out to the Approver and Judge interfaces, so it has no idea
// how many front ends are watching.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/sandbox"
)

// Env is what tools act on: the project, its artifacts directory and the
// person's browser. One Env is shared by all calls of a workspace.
type Env struct {
	// Root is the project root. Relative paths resolve against it, Bash
	// runs in it, and paths outside it need approval in every mode.
	Root string
	// ArtifactsDir is the project's artifacts directory (screenshots go to
	// its screenshots/ subdirectory); the bridge serves it at /artifacts/.
	ArtifactsDir string
	// ArtifactsMaxBytes caps ArtifactsDir: saving past it deletes the
	// oldest files (storage.artifacts_max_mb). 0 means 100 MB.
	ArtifactsMaxBytes int64
	// Browser drives the person's browser; nil means no browser.
	Browser browser.Driver
	// BrowserOff says why Browser is nil and what the person can do about
	// it, such as "enabled is false in ~/.infer/browser_use.yaml: set
	// enabled: true and start infer again". Set with a nil Browser,
	// browser tools fail at once with it instead of asking for an
	// approval that cannot help; a nil Browser without it (an embedder,
	// a test) keeps the usual approvals and fails with ErrNoBrowser.
	BrowserOff string
	// SecretEnv names environment variables that commands run by Bash do
	// not inherit: provider API keys and the bridge token. infer needs
	// them; a command the model wrote does not, and whatever it prints
	// goes to the model, the conversation and the panel.
	SecretEnv []string
	// Now is the clock for artifact names; nil means time.Now.
	Now func() time.Time
	// Sandbox confines Bash commands, approved or not, unless a person
	// chose to run one outside it. nil runs every command unconfined, for tests and embedders
	// that confine otherwise; front ends set sandbox.Detect() or
	// sandbox.Disabled(). One that cannot confine makes every Bash
	// command ask.
	Sandbox *sandbox.Sandbox
	// Confine is the rest of the sandbox's policy (writable folders,
	// what may not be read, the network); Root and plan mode fill in the
	// rest per call. An empty TempDir gets a private temp folder made on
	// first use and removed by Close.
	Confine sandbox.Policy
	// CurrentURL returns the URL of the controlled tab, for site grants on
	// BrowserClick and BrowserType. The workspace should set it from the
	// bridge, because the person may change the page by hand. When it is
	// nil or returns "", the URL the last browser tool observed is used.
	CurrentURL func() string
	// WebSearch runs a query with the current model's provider's hosted
	// search, for the WebSearch tool; it returns an error wrapping
	// ErrNoWebSearch when that provider has none. nil: no search at all.
	WebSearch func(ctx context.Context, query string) (llm.SearchResult, error)

	// NetAllow is network.allow: hosts confined commands reach through
	// infer's proxy without asking (see HostAllowed).
	NetAllow []string
	// OwnPorts are the loopback ports infer itself serves (the browser
	// bridge). Confined code never reaches them through the proxy, whatever
	// network.allow or a grant says: the proxy is infer's own process, so
	// the bridge would take such a connection for infer's, and only the
	// token would stand between a command and the person's browser. nil:
	// none.
	OwnPorts func() []int

	// hostApprovals is set while a person at infer's terminal can answer
	// network approvals (see SetHostApprovals).
	hostApprovals atomic.Bool

	mu      sync.Mutex
	lastURL string
	// offSite is the URL of a page a site grant's call ended on, off the
	// granted site, while the tab still shows it (see offsite.go).
	offSite string
	tempDir privateTempDir // made by privateTemp, removed by Close
}

// SetHostApprovals says whether a person at infer's own terminal can
// answer "may this command reach this host?". Only the TUI sets it: in
// serve, headless and mcp a host that is neither allowed nor granted is
// refused at once, because the only other answerer, the browser panel,
// is a web page and may not open the network.
func (e *Env) SetHostApprovals(on bool) { e.hostApprovals.Store(on) }

// HostApprovals reports what SetHostApprovals last set.
func (e *Env) HostApprovals() bool { return e.hostApprovals.Load() }

// unaskedBashOK reports whether Bash commands may run without a person at
// all: a sandbox is in force to confine them, the person turned it off,
// or none was set up (nil, see Sandbox).
func (e *Env) unaskedBashOK() bool {
	return e.Sandbox == nil || e.Sandbox.Confines() || e.Sandbox.Kind() == sandbox.Off
}

// privateTemp is the folder confined commands see as /tmp: Confine.TempDir
// or one made for this Env, owner-only, so that what commands leave there
// is kept between calls but out of other users' and processes' sight.
func (e *Env) privateTemp() (string, error) {
	if e.Confine.TempDir != "" {
		return e.Confine.TempDir, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tempDir.path == "" {
		dir, err := makePrivateTemp()
		if err != nil {
			return "", fmt.Errorf("could not make the sandbox's private temp folder: %w", err)
		}
		e.tempDir = dir
	}
	return e.tempDir.path, nil
}

// Close removes the private temp folder privateTemp made, if any.
func (e *Env) Close() error {
	e.mu.Lock()
	dir := e.tempDir
	e.tempDir = privateTempDir{}
	e.mu.Unlock()
	if dir.path == "" {
		return nil
	}
	return dir.remove()
}

func (e *Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// pageURL is the controlled tab's URL as best known, or "".
func (e *Env) pageURL() string {
	if e.CurrentURL != nil {
		if u := e.CurrentURL(); u != "" {
			return u
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lastURL
}

func (e *Env) sawURL(u string) {
	if u == "" {
		return
	}
	e.mu.Lock()
	e.lastURL = u
	e.mu.Unlock()
}

// Tool is one callable tool.
type Tool interface {
	// Name is the name the model calls, e.g. NameBash.
	Name() string
	// Description tells the model what the tool does and how to call it.
	Description() string
	// Schema is the JSON schema of the arguments object.
	Schema() json.RawMessage
	// Timeout bounds one call; the pipeline enforces it.
	Timeout() time.Duration
	// ReadOnly is true when the tool never changes files or pages.
	ReadOnly() bool
	// Run performs a call whose args already passed the schema. An error
	// means the tool could not do its job; its text reaches the model, so
	// it says what to do instead. Run honours ctx.
	Run(ctx context.Context, env *Env, args json.RawMessage) (Output, error)
}

// argChecker is implemented by tools whose arguments can be wrong in ways
// a schema cannot say (a URL that is not one). Validation runs it before
// any permission check, so nobody is asked to approve a call that could
// only fail.
type argChecker interface {
	checkArgs(args json.RawMessage) error
}

// timeoutArg is implemented by tools whose arguments may ask for a
// different timeout (Bash's timeout_ms).
type timeoutArg interface {
	timeoutFor(args json.RawMessage) (time.Duration, bool)
}

// Output is what a tool produced.
type Output struct {
	// Text is what the model reads.
	Text string
	// Success is false when the tool ran but its work failed (a non-zero
	// exit status).
	Success bool
	// ExitCode is Bash's exit status; nil when there is none (other tools,
	// or a command killed by a timeout or interrupt).
	ExitCode *int
	// Interrupted is true when the call stopped because ctx was cancelled.
	Interrupted bool
	// TimedOut is true when the call stopped at its timeout.
	TimedOut bool
	// Images are pictures for the model, e.g. a screenshot.
	Images []llm.Image
	// Artifacts are files saved under Env.ArtifactsDir, as slash-separated
	// paths relative to it (served at /artifacts/<path>).
	Artifacts []string
	// page is the tab's URL the browser reported with the result, for
	// site grants (offsite.go); "" for other tools.
	page string
}

// Registry is a fixed set of tools with compiled schemas. It is immutable
// and safe for concurrent use.
type Registry struct {
	tools   map[string]Tool
	schemas map[string]*schema
	order   []string
}

// NewRegistry builds a registry, rejecting duplicate names and schemas
// outside the supported subset.
func NewRegistry(ts ...Tool) (*Registry, error) {
	r := &Registry{tools: map[string]Tool{}, schemas: map[string]*schema{}}
	for _, t := range ts {
		name := t.Name()
		if name == "" {
			return nil, fmt.Errorf("tools: a tool has no name")
		}
		if _, dup := r.tools[name]; dup {
			return nil, fmt.Errorf("tools: %s is registered twice", name)
		}
		s, err := compileSchema(t.Schema())
		if err != nil {
			return nil, fmt.Errorf("tools: %s: %w", name, err)
		}
		r.tools[name], r.schemas[name] = t, s
		r.order = append(r.order, name)
	}
	return r, nil
}

// DefaultRegistry holds every built-in tool.
func DefaultRegistry() *Registry {
	r, err := NewRegistry(
		bashTool{}, readTool{}, writeTool{}, editTool{}, grepTool{}, treeTool{},
		navigateTool{}, clickTool{}, typeTool{}, readPageTool{}, screenshotTool{}, tabsTool{},
		webSearchTool{},
	)
	if err != nil {
		panic(err) // the built-in schemas are ours; a test covers them
	}
	return r
}

// Lookup finds a tool by name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	t, ok := r.tools[name]
	return t, ok
}

// Names lists the tools in registration order.
func (r *Registry) Names() []string { return append([]string(nil), r.order...) }

// Specs describes the tools for a model request.
func (r *Registry) Specs() []llm.Tool {
	out := make([]llm.Tool, 0, len(r.order))
	for _, name := range r.order {
		t := r.tools[name]
		out = append(out, llm.Tool{Name: name, Description: t.Description(), Parameters: t.Schema()})
	}
	return out
}

// Validate checks raw arguments for the named tool. Errors start with the
// tool's name and say what to fix, e.g. `Read: argument "limit" must be an
// integer ≥ 1, got "ten"`.
func (r *Registry) Validate(name, args string) error {
	s, ok := r.schemas[name]
	if !ok {
		return r.unknown(name)
	}
	if err := validateArgs(s, args); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if c, ok := r.tools[name].(argChecker); ok {
		if err := c.checkArgs(json.RawMessage(args)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func (r *Registry) unknown(name string) error {
	names := append([]string(nil), r.order...)
	sort.Strings(names)
	return fmt.Errorf("unknown tool %q; the available tools are %s", name, strings.Join(names, ", "))
}

// decode unmarshals validated arguments into a tool's argument struct.
func decode(args json.RawMessage, v any) error {
	if len(strings.TrimSpace(string(args))) == 0 {
		return nil
	}
	if err := json.Unmarshal(args, v); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	return nil
}
