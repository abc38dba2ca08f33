package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/infer-workspace/infer/internal/testreq"
	"github.com/infer-workspace/infer/session/sandbox"
	"github.com/infer-workspace/infer/session/tools/grants"
)

// sandboxedEnv is newEnv with the system's sandbox, skipping where there
// is none except under CI, which installs bubblewrap.
func sandboxedEnv(t *testing.T) *Env {
	t.Helper()
	sb := sandbox.Detect()
	testreq.Check(t, testreq.Bubblewrap, sb.Confines(), sb.Problem())
	env := newEnv(t)
	env.Sandbox = sb
	env.Confine = sandbox.Policy{Network: true}
	t.Cleanup(func() { env.Close() })
	return env
}

// confinementTool records how the pipeline ran it.
type confinementTool struct {
	readOnly bool
	mu       sync.Mutex
	got      []confinement
}

func (*confinementTool) Name() string            { return "Rec" }
func (*confinementTool) Description() string     { return "records its confinement" }
func (*confinementTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (*confinementTool) Timeout() time.Duration  { return time.Second }
func (c *confinementTool) ReadOnly() bool        { return c.readOnly }
func (c *confinementTool) Run(ctx context.Context, env *Env, raw json.RawMessage) (Output, error) {
	return c.runConfined(ctx, env, raw, confined)
}
func (c *confinementTool) runConfined(_ context.Context, _ *Env, _ json.RawMessage, conf confinement) (Output, error) {
	c.mu.Lock()
	c.got = append(c.got, conf)
	c.mu.Unlock()
	return Output{Text: "ok", Success: true}, nil
}

func (c *confinementTool) last() confinement {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.got[len(c.got)-1]
}

// TestOnlyChoosingOutsideLiftsTheSandbox: whatever lets a call through
// (the policy, a saved grant, the judge, a person allowing it once or
// always, the browser panel) it runs confined; only a person at infer
// choosing to run this very call outside the sandbox lifts it.
func TestOnlyChoosingOutsideLiftsTheSandbox(t *testing.T) {
	t.Parallel()
	rec := &confinementTool{}
	reg, err := NewRegistry(rec)
	if err != nil {
		t.Fatal(err)
	}
	env := sandboxedEnv(t)
	store, err := grants.Open(filepath.Join(t.TempDir(), "grants.json"))
	if err != nil {
		t.Fatal(err)
	}
	approver := &scriptedApprover{decision: Decision{Kind: AllowOnce}}
	judge := &fakeJudge{verdict: Verdict{Approve: true}}
	p := NewPipeline(PipelineConfig{Registry: reg, Env: env, Approver: approver, Judge: judge, Grants: store})
	call := Call{ID: "1", Name: "Rec", Args: `{}`}
	ctx := context.Background()

	cases := []struct {
		name string
		mode Mode
		want confinement
	}{
		{"auto mode", Auto, confined},
		{"the judge", AutoWithJudge, confined},
		{"a person, once", Standard, confined},
	}
	for _, c := range cases {
		if out := p.Run(ctx, call, c.mode); !out.Success {
			t.Fatalf("%s: %+v", c.name, out)
		}
		if got := rec.last(); got != c.want {
			t.Errorf("%s: confinement %d, want %d", c.name, got, c.want)
		}
	}
	if judge.calls != 1 {
		t.Errorf("judge called %d times", judge.calls)
	}
	if req := approver.last(); !req.Outside {
		t.Errorf("running outside the sandbox was not offered for a command: %+v", req)
	}

	// Allowed from the browser panel, a web page: confined.
	approver.decision = Decision{Kind: AllowOnce, Remote: true}
	if out := p.Run(ctx, call, Standard); !out.Success || rec.last() != confined || !strings.Contains(out.Approval, "browser panel") {
		t.Errorf("a panel approval: confinement %d (%+v)", rec.last(), out)
	}

	// Outside, chosen at infer: this call only, unconfined.
	approver.decision = Decision{Kind: AllowOutside}
	if out := p.Run(ctx, call, Standard); !out.Success || rec.last() != unconfined || !strings.Contains(out.Approval, "outside the sandbox") {
		t.Errorf("the outside choice: confinement %d (%+v)", rec.last(), out)
	}
	// The panel cannot choose it: the call does not run at all.
	approver.decision = Decision{Kind: AllowOutside, Remote: true}
	n := len(rec.got)
	if out := p.Run(ctx, call, Standard); out.Success || out.Ran || !out.Denied || !strings.Contains(out.DeniedReason, "browser panel") || len(rec.got) != n {
		t.Errorf("the panel chose outside: %+v", out)
	}

	// "Always": the call that saves the grant and those it lets through
	// later all run confined.
	approver.decision = Decision{Kind: AllowAlways}
	if out := p.Run(ctx, call, Standard); !out.Success || rec.last() != confined {
		t.Errorf("the call that saved the grant ran with confinement %d (%+v)", rec.last(), out)
	}
	if out := p.Run(ctx, call, Standard); !out.Success || rec.last() != confined {
		t.Errorf("a call let through by a saved grant ran with confinement %d (%+v)", rec.last(), out)
	}

	// Plan mode: read-only and confined, with nothing outside offered.
	rec.readOnly = true
	if out := p.Run(ctx, call, Plan); !out.Success || rec.last() != confinedReadOnly {
		t.Errorf("plan mode: confinement %d (%+v)", rec.last(), out)
	}
}

// TestWithoutASandboxAnApprovalRunsUnconfined: where no sandbox can run
// the command, a person allowing it lets it run as today, the box says
// so, and nothing "outside" is offered, since there is no inside.
func TestWithoutASandboxAnApprovalRunsUnconfined(t *testing.T) {
	t.Parallel()
	rec := &confinementTool{}
	reg, err := NewRegistry(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		sb    *sandbox.Sandbox
		where string
		ran   string
	}{
		{"none on the machine", sandbox.Unavailable(errors.New("bubblewrap is not installed")), "there is no sandbox on this machine", "ran without a sandbox"},
		{"turned off", sandbox.Disabled(), "OUTSIDE the sandbox, with your full permissions: the sandbox is off", "sandbox.mode: off"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := newEnv(t)
			env.Sandbox = c.sb
			approver := &scriptedApprover{decision: Decision{Kind: AllowOnce}}
			p := NewPipeline(PipelineConfig{Registry: reg, Env: env, Approver: approver})
			out := p.Run(context.Background(), Call{ID: "1", Name: "Rec", Args: `{}`}, Standard)
			if !out.Success || !strings.Contains(out.Approval, c.ran) {
				t.Fatalf("approved: %+v", out)
			}
			if c.sb.Kind() != sandbox.Off && rec.last() != unconfined {
				t.Errorf("approved with no sandbox: confinement %d, want unconfined", rec.last())
			}
			req := approver.last()
			if !strings.Contains(req.Sandbox, c.where) || req.Outside {
				t.Errorf("the box: %q, outside offered %v", req.Sandbox, req.Outside)
			}
		})
	}
}

func TestBashRunsInTheSandboxUnlessAPersonApprovedIt(t *testing.T) {
	env := sandboxedEnv(t)
	outside := filepath.Join(filepath.Dir(env.Root), "outside.txt")
	t.Setenv("INFER_TEST_SECRET", "sekrit-value")
	env.SecretEnv = []string{"INFER_TEST_SECRET"}
	script := fmt.Sprintf(`{"command": "echo \"[$INFER_TEST_SECRET]\"; echo x > %s; echo in > inside.txt"}`, outside)
	ctx := context.Background()

	res, err := bashTool{}.runConfined(ctx, env, json.RawMessage(script), confined)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Text, "sekrit") {
		t.Errorf("a hidden variable reached the confined command: %q", res.Text)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatalf("the confined command wrote outside the project: %q", res.Text)
	}
	if b, _ := os.ReadFile(filepath.Join(env.Root, "inside.txt")); string(b) != "in\n" {
		t.Errorf("the confined command could not write inside: %q (%s)", b, res.Text)
	}

	// Plan mode: nothing is written, and the model is told why.
	os.Remove(filepath.Join(env.Root, "inside.txt"))
	res, err = bashTool{}.runConfined(ctx, env, json.RawMessage(`{"command": "echo in > inside.txt"}`), confinedReadOnly)
	if err != nil || res.Success {
		t.Fatalf("a plan-mode write: %+v %v", res, err)
	}
	if !strings.Contains(res.Text, "ran in infer's sandbox") {
		t.Errorf("the refusal does not say the sandbox stopped it: %q", res.Text)
	}

	// Approved by a person: exactly what the box showed, with their
	// permissions.
	res, err = bashTool{}.runConfined(ctx, env, json.RawMessage(script), unconfined)
	if err != nil || !res.Success {
		t.Fatalf("unconfined: %+v %v", res, err)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("the approved command could not write outside: %v (%s)", err, res.Text)
	}
}

// TestConfinedCommandsGetNoSecretsOrServiceAddresses: only the listed
// variables reach a confined command, so neither those that point at
// services outside the sandbox nor secrets whose names do not look secret
// (the DATABASE_URL, STRIPE_SK, SENTRY_DSN…) pass; gh's token
// passes only when sandbox.env names it.
func TestConfinedCommandsGetNoSecretsOrServiceAddresses(t *testing.T) {
	env := sandboxedEnv(t)
	for name, value := range map[string]string{
		"SSH_AUTH_SOCK": "/run/user/0/agent", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/0/bus",
		"DISPLAY": ":0", "HF_TOKEN": "hf-secret", "AWS_SECRET_ACCESS_KEY": "aws-secret",
		"DB_PASSWORD": "db-secret", "GH_TOKEN": "gh-secret", "EDITOR": "vi-kept",
		"DATABASE_URL": "postgres://u:database-secret@h/db", "STRIPE_SK": "stripe-secret",
		"SENTRY_DSN": "https://sentry-secret@o1.example/1", "SLACK_WEBHOOK_URL": "https://hooks.example/slack-secret",
		"NPM_AUTH": "npm-secret", "MY_APP_KEY": "app-secret", "GOFLAGS": "-mod=mod-kept",
	} {
		t.Setenv(name, value)
	}
	script := `{"command": "env"}`
	res, err := bashTool{}.runConfined(context.Background(), env, json.RawMessage(script), confined)
	if err != nil {
		t.Fatal(err)
	}
	for _, hidden := range []string{"agent", "unix:path", "DISPLAY=", "hf-secret", "aws-secret", "db-secret", "gh-secret",
		"database-secret", "stripe-secret", "sentry-secret", "slack-secret", "npm-secret", "app-secret"} {
		if strings.Contains(res.Text, hidden) {
			t.Errorf("%s reached the confined command", hidden)
		}
	}
	for _, kept := range []string{"vi-kept", "mod-kept", "PATH="} {
		if !strings.Contains(res.Text, kept) {
			t.Errorf("%s did not reach the confined command", kept)
		}
	}
	// sandbox.env: [GH_TOKEN, DATABASE_URL] lets those two in, no more.
	env.Confine.Env = []string{"GH_TOKEN", "DATABASE_URL"}
	res, err = bashTool{}.runConfined(context.Background(), env, json.RawMessage(script), confined)
	if err != nil || !strings.Contains(res.Text, "gh-secret") || !strings.Contains(res.Text, "database-secret") || strings.Contains(res.Text, "stripe-secret") {
		t.Errorf("with sandbox.env: %v\n%s", err, res.Text)
	}
	// Approved by a person: their whole environment, as before.
	res, err = bashTool{}.runConfined(context.Background(), env, json.RawMessage(script), unconfined)
	if err != nil || !strings.Contains(res.Text, "db-secret") {
		t.Errorf("unconfined: %v", err)
	}
}

// TestAPlantedBashIsNotUsed: a bash first on PATH (an activated
// virtualenv's bin folder a command can write) runs neither confined nor
// approved commands.
func TestAPlantedBashIsNotUsed(t *testing.T) {
	env := sandboxedEnv(t)
	dir := filepath.Join(env.Root, ".venv", "bin") // seen inside the sandbox too
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(env.Root, "ran")
	if err := os.WriteFile(filepath.Join(dir, "bash"), []byte("#!/bin/sh\necho planted >> "+mark+"\necho planted\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, c := range []confinement{confined, unconfined} {
		res, err := bashTool{}.runConfined(context.Background(), env, json.RawMessage(`{"command": "echo real"}`), c)
		if err != nil || !res.Success || strings.TrimSpace(res.Text) != "real" {
			t.Errorf("confinement %v: %+v %v", c, res, err)
		}
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("the bash planted on PATH ran")
	}
}

// TestThePipelineSaysWhereACommandRan: the outcome and the approval box
// say whether the sandbox applies, the box in one line that names no
// browser panel.
func TestThePipelineSaysWhereACommandRan(t *testing.T) {
	t.Parallel()
	env := sandboxedEnv(t)
	approver := &scriptedApprover{decision: Decision{Kind: AllowOnce}}
	store, err := grants.Open(filepath.Join(t.TempDir(), "grants.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := NewPipeline(PipelineConfig{Env: env, Approver: approver, Grants: store})
	ctx := context.Background()
	out := p.Run(ctx, Call{ID: "1", Name: "Bash", Args: `{"command": "ls"}`}, Standard)
	if !out.Success || !strings.Contains(out.Approval, "ran in the sandbox (bubblewrap)") && !strings.Contains(out.Approval, "ran in the sandbox (seatbelt)") {
		t.Errorf("allowlisted ls: %+v", out)
	}
	out = p.Run(ctx, Call{ID: "2", Name: "Bash", Args: `{"command": "touch made-by-approval"}`}, Standard)
	if !out.Success || !strings.Contains(out.Approval, "ran in the sandbox") {
		t.Errorf("approved touch: %+v", out)
	}
	req := approver.last()
	if req.Sandbox != "Runs inside the sandbox: writes only the project, network through infer." || !req.Outside {
		t.Errorf("the approval box's where-line: %q, outside offered %v", req.Sandbox, req.Outside)
	}
	approver.decision = Decision{Kind: AllowOutside}
	out = p.Run(ctx, Call{ID: "3", Name: "Bash", Args: `{"command": "touch made-outside"}`}, Standard)
	if !out.Success || !strings.Contains(out.Approval, "ran outside the sandbox") {
		t.Errorf("touch run outside: %+v", out)
	}
	env.Confine.Network = false
	p.Run(ctx, Call{ID: "4", Name: "Bash", Args: `{"command": "touch again"}`}, Standard)
	if req := approver.last(); req.Sandbox != "Runs inside the sandbox: writes only the project, no network." {
		t.Errorf("the where-line with the network off: %q", req.Sandbox)
	}
	out = p.Run(ctx, Call{ID: "5", Name: "Bash", Args: `{"command": "ls"}`}, Plan)
	if !out.Success || !strings.Contains(out.Approval, "read-only") {
		t.Errorf("plan-mode ls: %+v", out)
	}
}

// TestAnApprovedCommandRunsInTheSandbox: a command the person allowed,
// once or always, cannot write outside the project or read a denied
// path; only the outside choice gives it the person's permissions.
func TestAnApprovedCommandRunsInTheSandbox(t *testing.T) {
	t.Parallel()
	env := sandboxedEnv(t)
	secretDir := t.TempDir()
	secret := filepath.Join(secretDir, "secret.txt")
	if err := os.WriteFile(secret, []byte("top-secret-words"), 0o600); err != nil {
		t.Fatal(err)
	}
	env.Confine.DenyRead = []string{secretDir}
	outside := filepath.Join(filepath.Dir(env.Root), "outside.txt")
	store, err := grants.Open(filepath.Join(t.TempDir(), "grants.json"))
	if err != nil {
		t.Fatal(err)
	}
	approver := &scriptedApprover{decision: Decision{Kind: AllowOnce}}
	p := NewPipeline(PipelineConfig{Env: env, Approver: approver, Grants: store})
	ctx := context.Background()
	// A redirection always asks, so each of these goes to the person.
	cmd := func(id string) Call {
		return Call{ID: id, Name: "Bash", Args: fmt.Sprintf(`{"command": "cat %s; echo x > %s; echo in > inside-%s.txt"}`, secret, outside, id)}
	}
	check := func(name string, out Outcome, id string) {
		t.Helper()
		if out.Denied || !out.Ran {
			t.Fatalf("%s: did not run: %+v", name, out)
		}
		if strings.Contains(out.Output, "top-secret-words") {
			t.Errorf("%s: read a denied path: %q", name, out.Output)
		}
		if _, err := os.Stat(outside); err == nil {
			t.Fatalf("%s: wrote outside the project: %q", name, out.Output)
		}
		if b, _ := os.ReadFile(filepath.Join(env.Root, "inside-"+id+".txt")); string(b) != "in\n" {
			t.Errorf("%s: could not write inside the project: %q (%s)", name, b, out.Output)
		}
	}
	check("allowed once", p.Run(ctx, cmd("1"), Standard), "1")

	// "Always", for a command that names no path outside (a script in
	// the project does the writing): the call that saves the grant and
	// a later one it lets through stay in the sandbox.
	script := fmt.Sprintf("cat %s; echo x > %s; echo in > inside-always.txt\n", secret, outside)
	if err := os.WriteFile(filepath.Join(env.Root, "escape.sh"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	approver.decision = Decision{Kind: AllowAlways}
	for _, id := range []string{"2", "3"} {
		os.Remove(filepath.Join(env.Root, "inside-always.txt"))
		check("always, call "+id, p.Run(ctx, Call{ID: id, Name: "Bash", Args: `{"command": "sh escape.sh"}`}, Standard), "always")
	}
	if n := approver.count(); n != 2 {
		t.Errorf("the saved grant did not let the later call through: %d requests", n)
	}

	// The browser panel's approval: inside; its outside: not run.
	approver.decision = Decision{Kind: AllowOnce, Remote: true}
	check("allowed in the panel", p.Run(ctx, cmd("4"), Standard), "4")
	approver.decision = Decision{Kind: AllowOutside, Remote: true}
	if out := p.Run(ctx, cmd("5"), Standard); out.Ran || !out.Denied {
		t.Errorf("the panel ran a command outside the sandbox: %+v", out)
	}

	// Outside, chosen at infer's terminal: the person's permissions.
	approver.decision = Decision{Kind: AllowOutside}
	out := p.Run(ctx, cmd("6"), Standard)
	if !out.Success || !strings.Contains(out.Output, "top-secret-words") {
		t.Errorf("run outside: %+v", out)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("run outside, the command could not write outside the project: %v (%s)", err, out.Output)
	}
}

// TestWithoutASandboxEveryBashCommandAsks: fail closed, in every mode,
// with nothing offered that would let later commands through.
func TestWithoutASandboxEveryBashCommandAsks(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Sandbox = sandbox.Unavailable(errors.New("bubblewrap is not installed"))
	store, err := grants.Open(filepath.Join(t.TempDir(), "grants.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Add(grants.Grant{Kind: grants.KindBash, Tool: "Bash", Prefix: "git status"}); err != nil {
		t.Fatal(err)
	}
	p := NewPipeline(PipelineConfig{Env: env, Grants: store})
	for _, mode := range Modes() {
		for _, cmd := range []string{"ls", "git status", "cat README.md"} {
			perm := p.Check(Call{Name: "Bash", Args: fmt.Sprintf(`{"command": %q}`, cmd)}, mode)
			if perm.Kind != Ask || perm.Judge || len(perm.Options) > 0 || !strings.Contains(perm.Why, "no sandbox") {
				t.Errorf("%s in %s: %+v", cmd, mode, perm)
			}
		}
	}
	if perm := p.Check(Call{Name: "Bash", Args: `{"command": "rm -rf build"}`}, Plan); perm.Kind != Refuse {
		t.Errorf("a write in plan mode without a sandbox: %+v", perm)
	}
	// Turned off on purpose: the person runs infer in a container.
	env.Sandbox = sandbox.Disabled()
	if perm := p.Check(Call{Name: "Bash", Args: `{"command": "ls"}`}, Standard); perm.Kind != Allow {
		t.Errorf("ls with the sandbox off: %+v", perm)
	}
}

// TestProtectedPathsAskEveryTime: Write and Edit on git hooks, git config
// and .infer ask in every mode, never reach the judge, never offer
// "always", and a saved Write grant does not cover them.
func TestProtectedPathsAskEveryTime(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	writeFiles(t, env.Root, map[string]string{".git/config": "[core]\n", ".git/hooks/x": "", ".infer/config.yaml": "", "src/a.go": ""})
	if err := os.Symlink(filepath.Join(env.Root, ".git"), filepath.Join(env.Root, "g")); err != nil {
		t.Fatal(err)
	}
	store, err := grants.Open(filepath.Join(t.TempDir(), "grants.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Add(grants.Grant{Kind: grants.KindTool, Tool: "Write"}); err != nil {
		t.Fatal(err)
	}
	p := NewPipeline(PipelineConfig{Env: env, Grants: store})
	for _, path := range []string{".infer/config.yaml", ".infer/skills/new.md", ".git/hooks/pre-commit", ".git/config", "g/hooks/post-checkout", "./src/../.infer/x"} {
		for _, tool := range []string{"Write", "Edit"} {
			args := fmt.Sprintf(`{"path": %q, "content": "x"}`, path)
			if tool == "Edit" {
				args = fmt.Sprintf(`{"path": %q, "old_string": "a", "new_string": "b"}`, path)
			}
			for _, mode := range []Mode{Standard, Auto, AutoWithJudge} {
				perm := p.Check(Call{Name: tool, Args: args}, mode)
				if perm.Kind != Ask || perm.Judge || len(perm.Options) > 0 || !strings.Contains(perm.Why, "protects") {
					t.Errorf("%s %s in %s: %+v", tool, path, mode, perm)
				}
			}
			if perm := p.Check(Call{Name: tool, Args: args}, Plan); perm.Kind != Refuse {
				t.Errorf("%s %s in plan mode: %+v", tool, path, perm)
			}
		}
	}
	// The browser panel cannot approve them: a web page could otherwise
	// plant a git hook through an in-process Write.
	panel := &scriptedApprover{decision: Decision{Kind: AllowOnce, Remote: true}}
	pp := NewPipeline(PipelineConfig{Env: env, Approver: panel})
	out := pp.Run(context.Background(), Call{ID: "w", Name: "Write", Args: `{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\nevil\n"}`}, Auto)
	if out.Success || !out.Denied || !strings.Contains(out.Output, "browser panel") {
		t.Errorf("a panel approval of a hook: %+v", out)
	}
	if b, _ := os.ReadFile(filepath.Join(env.Root, ".git", "hooks", "pre-commit")); len(b) > 0 {
		t.Errorf("the hook was written: %q", b)
	}
	// Nor can it let Read or Write out of the project.
	outside := filepath.Join(filepath.Dir(env.Root), "outside-secret.txt")
	if err := os.WriteFile(outside, []byte("outside secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	out = pp.Run(context.Background(), Call{ID: "r", Name: "Read", Args: fmt.Sprintf(`{"path": %q}`, outside)}, Standard)
	if out.Success || strings.Contains(out.Output, "outside secret") {
		t.Errorf("a panel approval of a Read outside: %+v", out)
	}
	local := NewPipeline(PipelineConfig{Env: env, Approver: &scriptedApprover{decision: Decision{Kind: AllowOnce}}})
	if out := local.Run(context.Background(), Call{ID: "w2", Name: "Write", Args: `{"path": ".infer/config.yaml", "content": "model: x\n"}`}, Auto); !out.Success {
		t.Errorf("a local approval of .infer/config.yaml: %+v", out)
	}

	// Elsewhere the Write grant still applies, and reading is not held up.
	if perm := p.Check(Call{Name: "Write", Args: `{"path": "src/a.go", "content": "x"}`}, Standard); perm.Kind != Allow {
		t.Errorf("Write src/a.go with a grant: %+v", perm)
	}
	if perm := p.Check(Call{Name: "Read", Args: `{"path": ".infer/config.yaml"}`}, Standard); perm.Kind != Allow {
		t.Errorf("Read .infer/config.yaml: %+v", perm)
	}
}

// TestBashChildrenDieWithInfer kills a process running a Bash call with
// SIGKILL, as a crash would, and checks that the command goes too.
func TestBashChildrenDieWithInfer(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	testreq.Program(t, testreq.Procps)
	for _, c := range []struct {
		name, command string
		sandboxed     bool
	}{
		{"approved", "sleep 71", false},
		{"sandboxed pipeline", "sleep 72 | cat; true", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.sandboxed {
				sandboxedEnv(t) // skips where there is no sandbox
			}
			helper := exec.Command(os.Args[0], "-test.run=^TestBashChildHelper$")
			helper.Env = append(os.Environ(), "INFER_BASH_HELPER="+c.command, "INFER_BASH_HELPER_SANDBOX="+fmt.Sprint(c.sandboxed), "INFER_BASH_HELPER_ROOT="+t.TempDir())
			if err := helper.Start(); err != nil {
				t.Fatal(err)
			}
			pattern := "^sleep " + strings.Fields(c.command)[1] + "$"
			waitFor(t, func() bool { return pgrep(pattern) > 0 }, "the command to start")
			helper.Process.Kill()
			helper.Wait()
			waitFor(t, func() bool { return pgrep(pattern) == 0 }, "the command to die with its parent")
		})
	}
}

// TestBashChildHelper runs one Bash call for TestBashChildrenDieWithInfer
// and waits to be killed; it does nothing in a normal test run.
func TestBashChildHelper(t *testing.T) {
	t.Parallel()
	command := os.Getenv("INFER_BASH_HELPER")
	if command == "" {
		t.Skip("a helper process for TestBashChildrenDieWithInfer")
	}
	env := &Env{Root: os.Getenv("INFER_BASH_HELPER_ROOT")}
	conf := unconfined
	if os.Getenv("INFER_BASH_HELPER_SANDBOX") == "true" {
		env.Sandbox, conf = sandbox.Detect(), confined
	}
	bashTool{}.runConfined(context.Background(), env, json.RawMessage(fmt.Sprintf(`{"command": %q}`, command)), conf)
}

func pgrep(pattern string) int {
	out, _ := exec.Command("pgrep", "-fc", pattern).Output()
	var n int
	fmt.Sscan(string(out), &n)
	return n
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
