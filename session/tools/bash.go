package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/infer-workspace/infer/internal/reaper"
	"github.com/infer-workspace/infer/session/netproxy"
	"github.com/infer-workspace/infer/session/sandbox"
)

const (
	bashDefaultTimeout = 2 * time.Minute
	bashMaxTimeout     = 10 * time.Minute
	// bashOutputLimit caps what the model reads of a command's output.
	bashOutputLimit = 30_000
	// killGrace is how long a process group has to exit after SIGTERM
	// before it gets SIGKILL.
	killGrace = 2 * time.Second
	// pipeGrace is how long output is still collected after bash exits
	// while a background process keeps the output pipe open.
	pipeGrace = time.Second
)

// NameBash is the name of the tool that runs shell commands.
const NameBash = "Bash"

type bashTool struct{}

type bashArgs struct {
	Command     string `json:"command" limits:"minLength=1" jsonschema:"The command line to run with bash -c, e.g. \"go test ./...\"."`
	TimeoutMS   int64  `json:"timeout_ms,omitempty" limits:"minimum=1,maximum=600000" jsonschema:"Stop the command after this many milliseconds (default 120000)."`
	Description string `json:"description,omitempty" jsonschema:"A few words saying what the command does, shown to the person."`
}

var bashSchema = schemaOf[bashArgs]()

func (bashTool) Name() string { return NameBash }

func (bashTool) Description() string {
	return `Run a shell command with bash -c in the project root and return its combined stdout and stderr and its exit code.

Use it for builds, tests, git and other command-line tools. Output longer than 30000 bytes keeps its beginning and end with a marker in between. Commands stop after 2 minutes unless timeout_ms says otherwise (at most 600000); a stopped command's whole process group is killed. Standard input is empty, so never run interactive programs.

Examples:
{"command": "go test ./...", "description": "Run the tests"}
{"command": "git log --oneline -5"}
{"command": "npm run build", "timeout_ms": 300000}

Simple read-only commands (ls, cat, grep, git status/log/diff, …) run without asking; pipes, chains (&&, ;), redirections and $(…) always need the person's approval, so prefer one plain command per call.`
}

func (bashTool) Schema() json.RawMessage { return bashSchema() }

// show gives the command as the summary; the approval box shows it so
// nothing in it can hide, with what the model says it does.
func (bashTool) show(args string) Shown {
	return showAs(args, func(a bashArgs) Shown {
		s := Shown{Summary: oneLine(a.Command), Detail: []Part{{Kind: PartCommand, Text: a.Command}}}
		if a.Description != "" {
			s.Detail = append(s.Detail, field("about: ", a.Description))
		}
		return s
	})
}

func (bashTool) Timeout() time.Duration { return bashDefaultTimeout }
func (bashTool) ReadOnly() bool         { return false }

func (bashTool) timeoutFor(raw json.RawMessage) (time.Duration, bool) {
	var a bashArgs
	if decode(raw, &a) != nil || a.TimeoutMS <= 0 {
		return 0, false
	}
	return min(time.Duration(a.TimeoutMS)*time.Millisecond, bashMaxTimeout), true
}

// confinement is how a Bash call runs, which depends on who let it
// through.
type confinement int

const (
	// confined: the sandbox, whoever let the call through (allowlist,
	// grant, auto mode, the judge, or a person allowing it).
	confined confinement = iota
	// confinedReadOnly: plan mode, the sandbox with nothing writable.
	confinedReadOnly
	// unconfined: a person at infer chose to run this very call outside
	// the sandbox (AllowOutside), or allowed it where there is no sandbox,
	// so it runs with their permissions.
	unconfined
)

// confinable tools run in the sandbox unless a person lifts it for a call.
type confinable interface {
	runConfined(ctx context.Context, env *Env, raw json.RawMessage, c confinement) (Output, error)
}

// Run runs the command confined; the pipeline says otherwise through
// runConfined when a person chose to run it outside.
func (t bashTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (Output, error) {
	return t.runConfined(ctx, env, raw, confined)
}

func (t bashTool) runConfined(ctx context.Context, env *Env, raw json.RawMessage, c confinement) (Output, error) {
	var a bashArgs
	if err := decode(raw, &a); err != nil {
		return Output{}, err
	}
	// The pipeline sets the deadline (timeout_ms, a configured timeout or
	// the default); the fallback serves direct callers.
	limit := bashDefaultTimeout
	if d, ok := t.timeoutFor(raw); ok {
		limit = d
	} else if deadline, ok := ctx.Deadline(); ok {
		limit = time.Until(deadline).Round(100 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()

	out := newCapture(bashOutputLimit)
	cmd, inSandbox, closeNet, err := bashCommandFor(ctx, env, a.Command, c)
	if err != nil {
		return Output{}, err
	}
	defer closeNet()
	cmd.Stdout, cmd.Stderr = out, out
	// A process group of its own lets a timeout or interrupt stop
	// everything the command started, not just bash; the parent-death
	// signal stops it when infer itself dies.
	cmd.SysProcAttr = childProcAttr(inSandbox)
	cmd.WaitDelay = pipeGrace
	// Outside the sandbox no pid namespace ends what the command leaves
	// running; a reaper makes the whole tree end with infer.
	var reaped <-chan reaper.Exit
	var watch *reaper.Watch
	if !inSandbox && reaper.Enabled() {
		if watch, err = reaper.Wrap(cmd); err != nil {
			return Output{}, fmt.Errorf("could not start bash: %w", err)
		}
	}
	err = cmd.Start()
	if watch != nil {
		watch.Started()
		reaped = watch.Exited()
	}
	if err != nil {
		return Output{}, fmt.Errorf("could not start bash: %w", err)
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	var waitErr error
	stopped := false
	// bashStatus is bash's end as the reaper reported it; lingering is set
	// when what bash left running keeps the reaper past pipeGrace.
	var bashStatus *syscall.WaitStatus
	lingering := false
	select {
	case waitErr = <-done:
		// The reaper has exited, so its report of bash's status is in
		// its pipe or it never made one; both ends can be ready at once,
		// and select picks either, so the report is read here too.
		// Without it the reaper's own exit (0) stood for bash's.
		if reaped != nil {
			if ex, ok := <-reaped; ok {
				bashStatus = &ex.Status
			}
		}
	case ex, ok := <-reaped:
		if ok {
			bashStatus = &ex.Status
		}
		if !ok || !ex.Left {
			waitErr = <-done // the reaper is exiting
			break
		}
		select {
		case waitErr = <-done:
		case <-time.After(pipeGrace):
			lingering = true
		}
	case <-ctx.Done():
		// A command that finished as ctx ended counts as finished.
		select {
		case waitErr = <-done:
		default:
			stopped = true
			waitErr = stopGroup(pgid, done)
		}
	}

	text := out.String()
	if strings.TrimSpace(text) == "" {
		text = "(no output)"
	}
	res := Output{}
	switch {
	case stopped && errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.TimedOut = true
		res.Text = fmt.Sprintf("%s\n\nThe command timed out after %s and was stopped (its whole process group was killed). Give a larger timeout_ms (up to 600000), or run long jobs in the background with their output redirected to a file.", text, limit)
		return res, nil
	case stopped:
		res.Interrupted = true
		res.Text = text + "\n\nThe command was interrupted and stopped (its whole process group was killed)."
		return res, nil
	}
	var ws syscall.WaitStatus
	switch {
	case bashStatus != nil:
		ws = *bashStatus
	case cmd.ProcessState != nil:
		ws, _ = cmd.ProcessState.Sys().(syscall.WaitStatus)
	default:
		return Output{}, fmt.Errorf("bash did not run: %v", waitErr)
	}
	if ws.Signaled() {
		res.Text = fmt.Sprintf("%s\n\nThe command was killed by signal %s.", text, ws.Signal())
		return res, nil
	}
	code := ws.ExitStatus()
	res.ExitCode = &code
	res.Success = code == 0
	res.Text = text
	switch {
	case errors.Is(waitErr, exec.ErrWaitDelay):
		res.Text += "\n\n[background processes still hold the output and were left running; redirect their output to a file (cmd > log 2>&1 &) to capture it]"
	case lingering:
		res.Text += "\n\n[background processes were left running, and are stopped when infer exits; redirect their output to a file (cmd > log 2>&1 &) to capture it]"
	}
	if code != 0 {
		res.Text += fmt.Sprintf("\n\nExit code: %d", code)
		if inSandbox && sandboxRefusal(text) {
			res.Text += "\n\nThis command ran in infer's sandbox, which lets commands write only the project (not .git or .infer/, so commits need the person), the sandbox's own /tmp and the folders in sandbox.writable, and read no secret stores. If it needs more, ask the person: approving a command still runs it in the sandbox, but at infer's terminal they can choose to run it outside the sandbox, once."
		}
	}
	return res, nil
}

// bashCommandFor builds the command for c: confined in env's sandbox, or
// plain bash when a person lifted the sandbox for the call or none was
// set up.
// inSandbox says which. Either way bash is the system's own, from a fixed
// root-owned path (sandbox.Shell), never whatever PATH finds first.
// closeNet stops the command's network proxy once it has ended (a no-op
// when it has none).
func bashCommandFor(ctx context.Context, env *Env, command string, c confinement) (cmd *exec.Cmd, inSandbox bool, closeNet func(), err error) {
	closeNet = func() {}
	shell, err := sandbox.Shell()
	if err != nil {
		return nil, false, closeNet, fmt.Errorf("refused to run the command: %v", err)
	}
	if c == unconfined || env.Sandbox == nil || env.Sandbox.Kind() == sandbox.Off {
		cmd = exec.Command(shell, "-c", command)
		cmd.Dir = env.Root
		cmd.Env = env.commandEnv()
		return cmd, false, closeNet, nil
	}
	if !env.Sandbox.Confines() {
		// The policy asks for every command where there is no sandbox;
		// reaching here is a bug, and the answer is still no.
		return nil, false, closeNet, fmt.Errorf("refused to run the command: it needs the sandbox, and %s", env.Sandbox)
	}
	p := env.Confine
	p.Root = env.Root
	p.ReadOnly = c == confinedReadOnly
	if p.TempDir, err = env.privateTemp(); err != nil {
		return nil, false, closeNet, err
	}
	if p.NetProxy, closeNet, err = startNetProxy(ctx, env, p); err != nil {
		return nil, false, func() {}, err
	}
	cmd, err = env.Sandbox.Command(p, confinedEnv(env.commandEnv(), p.Env), shell, "-c", command)
	if err != nil {
		closeNet()
		return nil, false, func() {}, err
	}
	return cmd, true, closeNet, nil
}

// startNetProxy starts the proxy that is the only way out for one
// confined command, deciding with the gate the pipeline put in ctx, when
// the network is on and the sandbox can give the command a network of
// its own (bubblewrap). It returns the proxy's socket and how to stop it.
func startNetProxy(ctx context.Context, env *Env, p sandbox.Policy) (string, func(), error) {
	if !p.Network || env.Sandbox.Kind() != sandbox.Bubblewrap {
		return "", func() {}, nil
	}
	px, err := netproxy.Start(netDecider(ctx))
	if err != nil {
		return "", func() {}, fmt.Errorf("refused to run the command: its network proxy could not start: %w", err)
	}
	return px.Socket(), func() { px.Close() }, nil
}

// confinedEnv is the environment of a confined command: env (nil means
// infer's own) cut down to the sandbox's list of what builds and tests
// need plus the names in extra (sandbox.env). Whatever is not listed is
// dropped, whether or not its name looks secret (DATABASE_URL does not),
// and with it what points at services outside the sandbox (the session
// bus, ssh and gpg agents, the display, a Docker daemon). A command a
// person runs outside the sandbox gets all of it.
func confinedEnv(env, extra []string) []string {
	return sandbox.Environ(env, extra)
}

// sandboxRefusal reports whether a failed command's output looks like the
// sandbox stopped it, to tell the model why rather than let it retry.
func sandboxRefusal(output string) bool {
	return strings.Contains(output, "Read-only file system") ||
		strings.Contains(output, "Permission denied") ||
		strings.Contains(output, "Operation not permitted")
}

// stopGroup sends SIGTERM to the process group, then SIGKILL if bash has
// not exited after killGrace, and returns Wait's result. It sweeps the
// group with SIGKILL at the end, because members that ignore SIGTERM can
// outlive bash.
func stopGroup(pgid int, done <-chan error) error {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	timer := time.NewTimer(killGrace)
	defer timer.Stop()
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		err = <-done
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return err
}

// commandEnv is infer's environment without the SecretEnv variables; nil
// (inherit everything) when there are none to hide.
func (e *Env) commandEnv() []string {
	if len(e.SecretEnv) == 0 {
		return nil
	}
	hidden := make(map[string]bool, len(e.SecretEnv))
	for _, name := range e.SecretEnv {
		hidden[name] = true
	}
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !hidden[name] {
			out = append(out, kv)
		}
	}
	return out
}
