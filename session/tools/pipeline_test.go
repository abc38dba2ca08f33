package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/infer-workspace/infer/internal/leaks"
	"github.com/infer-workspace/infer/internal/reaper"
	"github.com/infer-workspace/infer/session/netproxy"
	"github.com/infer-workspace/infer/session/tools/grants"
)

func TestMain(m *testing.M) {
	// Commands run unconfined start under the reaper, this binary again.
	reaper.Main()
	// The test binary is also the network forwarder confined commands
	// run under, as infer's own binary is.
	netproxy.MaybeForward()
	if mode := os.Getenv(playInferEnv); mode != "" {
		playInfer(mode)
		return
	}
	goleak.VerifyTestMain(m, leaks.Options()...)
}

// scriptedApprover answers with a fixed decision and records requests.
// With block set it waits for ctx instead.
type scriptedApprover struct {
	mu       sync.Mutex
	decision Decision
	err      error
	block    bool
	requests []ApprovalRequest
	// onApprove runs before answering, to change the world mid-approval.
	onApprove func()
}

func (a *scriptedApprover) Approve(ctx context.Context, req ApprovalRequest) (Decision, error) {
	a.mu.Lock()
	a.requests = append(a.requests, req)
	d, err, block, hook := a.decision, a.err, a.block, a.onApprove
	a.mu.Unlock()
	if hook != nil {
		hook()
	}
	if block {
		<-ctx.Done()
		return Decision{}, ctx.Err()
	}
	return d, err
}

func (a *scriptedApprover) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.requests)
}

func (a *scriptedApprover) last() ApprovalRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests[len(a.requests)-1]
}

// fakeJudge answers with a verdict or error; block waits for ctx; panics
// when told to.
type fakeJudge struct {
	mu      sync.Mutex
	verdict Verdict
	err     error
	block   bool
	panics  bool
	calls   int
}

func (j *fakeJudge) Judge(ctx context.Context, call Call, why string) (Verdict, error) {
	j.mu.Lock()
	j.calls++
	v, err, block, panics := j.verdict, j.err, j.block, j.panics
	j.mu.Unlock()
	if panics {
		panic("judge exploded")
	}
	if block {
		<-ctx.Done()
		return Verdict{}, ctx.Err()
	}
	return v, err
}

func (j *fakeJudge) count() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.calls
}

func newTestPipeline(t *testing.T, a Approver, j Judge) (*Pipeline, *Env, *grants.Store) {
	t.Helper()
	env := newEnv(t)
	store, err := grants.Open(filepath.Join(t.TempDir(), "grants.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := NewPipeline(PipelineConfig{Env: env, Grants: store, Approver: a, Judge: j, JudgeTimeout: 100 * time.Millisecond})
	return p, env, store
}

func writeCall(id, path string) Call {
	return Call{ID: id, Name: "Write", Args: fmt.Sprintf(`{"path": %q, "content": "data"}`, path), Origin: OriginAgent}
}

func TestApprovalDenied(t *testing.T) {
	t.Parallel()
	a := &scriptedApprover{decision: Decision{Kind: Deny, Reason: "not that file"}}
	p, env, _ := newTestPipeline(t, a, nil)
	out := p.Run(context.Background(), writeCall("w1", "a.txt"), Standard)
	if !out.Denied || out.Ran || out.Success || out.Output != "The person rejected this call: not that file" || out.DeniedReason != "rejected by the person: not that file" {
		t.Fatalf("outcome %+v", out)
	}
	if out.Error == "" || out.Call.ID != "w1" {
		t.Errorf("error %q id %q", out.Error, out.Call.ID)
	}
	if _, err := os.Stat(filepath.Join(env.Root, "a.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Error("a denied write ran")
	}
	req := a.last()
	if req.Call.ID != "w1" || req.Mode != Standard || !strings.Contains(req.Why, "Write changes files") || len(req.Options) != 1 {
		t.Errorf("request %+v", req)
	}
	a.decision = Decision{Kind: Deny}
	if out := p.Run(context.Background(), writeCall("w2", "a.txt"), Standard); out.Output != "The person rejected this call." {
		t.Errorf("denial without a reason: %q", out.Output)
	}
}

func TestApprovalAllowOnce(t *testing.T) {
	t.Parallel()
	a := &scriptedApprover{decision: Decision{Kind: AllowOnce}}
	p, env, store := newTestPipeline(t, a, nil)
	for i := range 2 {
		out := p.Run(context.Background(), writeCall("w", "a.txt"), Standard)
		if !out.Success || !out.Ran || out.Approval != "approved by the person" {
			t.Fatalf("run %d: %+v", i, out)
		}
	}
	if a.count() != 2 {
		t.Errorf("allow once asked %d times for two calls", a.count())
	}
	if gs, _ := store.List(); len(gs) != 0 {
		t.Errorf("allow once saved %v", gs)
	}
	if data, _ := os.ReadFile(filepath.Join(env.Root, "a.txt")); string(data) != "data" {
		t.Errorf("file %q", data)
	}
}

func TestAllowAlwaysSavesGrant(t *testing.T) {
	t.Parallel()
	a := &scriptedApprover{decision: Decision{Kind: AllowAlways}}
	p, _, store := newTestPipeline(t, a, nil)
	call := Call{ID: "b1", Name: "Bash", Args: `{"command": "git init -q"}`, Origin: OriginAgent}
	out := p.Run(context.Background(), call, Standard)
	if !out.Success || !strings.Contains(out.Approval, "saved permission") || !strings.Contains(out.Approval, "`git init`") {
		t.Fatalf("first run: %+v", out)
	}
	gs, _ := store.List()
	if len(gs) != 1 || gs[0].Kind != grants.KindBash || gs[0].Prefix != "git init" {
		t.Fatalf("grants %+v", gs)
	}
	// The next identical call runs without asking.
	a.decision = Decision{Kind: Deny, Reason: "should not be asked"}
	out = p.Run(context.Background(), call, Standard)
	if !out.Success || a.count() != 1 || !strings.HasPrefix(out.Approval, "saved permission") {
		t.Fatalf("second run asked again or failed: %+v (asked %d times)", out, a.count())
	}
	// A chained command with the same prefix still asks.
	out = p.Run(context.Background(), Call{Name: "Bash", Args: `{"command": "git init -q && rm -rf x"}`}, Standard)
	if !out.Denied || a.count() != 2 {
		t.Errorf("chain rode on the grant: %+v", out)
	}
	// After a revoke it asks again.
	if err := store.Revoke(gs[0].ID); err != nil {
		t.Fatal(err)
	}
	if out := p.Run(context.Background(), call, Standard); !out.Denied || a.count() != 3 {
		t.Errorf("revoked grant still applies: %+v", out)
	}
}

func TestAllowAlwaysPicksOption(t *testing.T) {
	t.Parallel()
	a := &scriptedApprover{decision: Decision{Kind: AllowAlways, Option: 1}}
	p, env, store := newTestPipeline(t, a, nil)
	env.Browser = &fakeBrowser{}
	out := p.Run(context.Background(), Call{Name: "BrowserNavigate", Args: `{"url": "https://github.com/"}`}, Standard)
	if !out.Success {
		t.Fatalf("%+v", out)
	}
	gs, _ := store.List()
	if len(gs) != 1 || gs[0].Kind != grants.KindTool || gs[0].Tool != "BrowserNavigate" {
		t.Fatalf("grants %+v", gs)
	}
	// Any site now runs without asking.
	if out := p.Run(context.Background(), Call{Name: "BrowserNavigate", Args: `{"url": "https://example.org/"}`}, Standard); !out.Success || a.count() != 1 {
		t.Errorf("tool-wide grant not applied: %+v", out)
	}
}

func TestAllowAlwaysWithoutStore(t *testing.T) {
	t.Parallel()
	a := &scriptedApprover{decision: Decision{Kind: AllowAlways}}
	env := newEnv(t)
	p := NewPipeline(PipelineConfig{Env: env, Approver: a})
	out := p.Run(context.Background(), writeCall("w", "a.txt"), Standard)
	if !out.Success || len(a.last().Options) != 0 || out.Warning == "" {
		t.Fatalf("%+v options %v", out, a.last().Options)
	}
	if out := p.Run(context.Background(), writeCall("w", "a.txt"), Standard); !out.Success || a.count() != 2 {
		t.Errorf("without a store every call asks: %+v", out)
	}
}

func TestGrantSaveFailureWarns(t *testing.T) {
	t.Parallel()
	a := &scriptedApprover{decision: Decision{Kind: AllowAlways}}
	p, _, store := newTestPipeline(t, a, nil)
	// The file breaks while the person decides, so saving fails.
	a.onApprove = func() {
		if err := os.WriteFile(store.Path(), []byte("{oops"), 0o600); err != nil {
			t.Error(err)
		}
	}
	out := p.Run(context.Background(), writeCall("w", "a.txt"), Standard)
	if !out.Success || !strings.Contains(out.Warning, "The approval applies to this call only: grants file") {
		t.Errorf("%+v", out)
	}
	// With the file still corrupt, the policy asks without options, and
	// "always" says it could not be saved.
	a.onApprove = nil
	out = p.Run(context.Background(), writeCall("w", "a.txt"), Standard)
	if !out.Success || !strings.Contains(a.last().Why, "saved permissions could not be read") || !strings.Contains(out.Warning, "Nothing can be saved") {
		t.Errorf("%+v", out)
	}
}

func TestCancelDuringApproval(t *testing.T) {
	t.Parallel()
	a := &scriptedApprover{block: true}
	p, env, _ := newTestPipeline(t, a, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Outcome, 1)
	go func() { done <- p.Run(ctx, writeCall("w", "a.txt"), Standard) }()
	for a.count() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	var out Outcome
	select {
	case out = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if !out.Interrupted || !out.Denied || out.Ran || !strings.Contains(out.Output, "interrupted before it was approved") {
		t.Errorf("%+v", out)
	}
	if _, err := os.Stat(filepath.Join(env.Root, "a.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Error("the write ran")
	}
}

func TestNoApproverAndApproverError(t *testing.T) {
	t.Parallel()
	p, _, _ := newTestPipeline(t, nil, nil)
	out := p.Run(context.Background(), writeCall("w", "a.txt"), Standard)
	if !out.Denied || !strings.Contains(out.Output, "no one can approve it here") {
		t.Errorf("no approver: %+v", out)
	}
	a := &scriptedApprover{err: errors.New("front end gone")}
	p, _, _ = newTestPipeline(t, a, nil)
	out = p.Run(context.Background(), writeCall("w", "a.txt"), Standard)
	if !out.Denied || !strings.Contains(out.Output, "front end gone") {
		t.Errorf("approver error: %+v", out)
	}
}

func TestPlanRefusesWithoutAsking(t *testing.T) {
	t.Parallel()
	a := &scriptedApprover{decision: Decision{Kind: AllowOnce}}
	p, _, _ := newTestPipeline(t, a, nil)
	out := p.Run(context.Background(), writeCall("w", "a.txt"), Plan)
	if !out.Denied || out.Ran || a.count() != 0 || !strings.HasPrefix(out.Output, "plan mode: Write is not allowed while planning") {
		t.Errorf("%+v (asked %d)", out, a.count())
	}
	out = p.Run(context.Background(), Call{Name: "Bash", Args: `{"command": "echo planning"}`}, Plan)
	if !out.Success || out.Output != "planning\n" {
		t.Errorf("read-only bash in plan: %+v", out)
	}
}

func TestAutoAsksForDenyList(t *testing.T) {
	t.Parallel()
	a := &scriptedApprover{decision: Decision{Kind: Deny, Reason: "no"}}
	p, _, _ := newTestPipeline(t, a, nil)
	out := p.Run(context.Background(), Call{Name: "Bash", Args: `{"command": "sudo true"}`}, Auto)
	if !out.Denied || a.count() != 1 || !strings.Contains(a.last().Why, "deny list") {
		t.Errorf("%+v", out)
	}
	out = p.Run(context.Background(), Call{Name: "Bash", Args: `{"command": "echo a | cat"}`}, Auto)
	if !out.Success || a.count() != 1 {
		t.Errorf("auto asked about a pipe: %+v", out)
	}
}

func TestJudge(t *testing.T) {
	t.Parallel()
	type result struct {
		ran         bool
		asked       bool
		judgeReason string
		approval    string
	}
	cases := []struct {
		name  string
		judge *fakeJudge
		nilJ  bool
		want  result
	}{
		{"approve", &fakeJudge{verdict: Verdict{Approve: true, Reason: "routine edit"}}, false, result{ran: true, approval: "approved by the judge: routine edit"}},
		{"reject", &fakeJudge{verdict: Verdict{Reason: "touches CI secrets"}}, false, result{asked: true, judgeReason: "the judge did not approve: touches CI secrets"}},
		{"error", &fakeJudge{err: errors.New("unparsable answer \"maybe\"")}, false, result{asked: true, judgeReason: "the judge could not decide: unparsable answer"}},
		{"timeout", &fakeJudge{block: true}, false, result{asked: true, judgeReason: "the judge did not answer within 100ms"}},
		{"panic", &fakeJudge{panics: true}, false, result{asked: true, judgeReason: "the judge failed: judge exploded"}},
		{"nil", nil, true, result{asked: true, judgeReason: "no judge is configured"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := &scriptedApprover{decision: Decision{Kind: Deny, Reason: "person says no"}}
			var j Judge = c.judge
			if c.nilJ {
				j = nil
			}
			p, _, _ := newTestPipeline(t, a, j)
			out := p.Run(context.Background(), writeCall("w", "a.txt"), AutoWithJudge)
			if out.Ran != c.want.ran || (a.count() > 0) != c.want.asked {
				t.Fatalf("ran=%v asked=%v: %+v", out.Ran, a.count() > 0, out)
			}
			if c.want.ran && out.Approval != c.want.approval {
				t.Errorf("approval %q", out.Approval)
			}
			if c.want.asked {
				if !strings.HasPrefix(a.last().JudgeReason, c.want.judgeReason) {
					t.Errorf("judge reason %q, want %q", a.last().JudgeReason, c.want.judgeReason)
				}
				if !out.Denied || out.Output != "The person rejected this call: person says no" {
					t.Errorf("outcome %+v", out)
				}
			}
		})
	}
}

func TestJudgeSkipped(t *testing.T) {
	t.Parallel()
	j := &fakeJudge{verdict: Verdict{Approve: true}}
	a := &scriptedApprover{decision: Decision{Kind: Deny}}
	p, env, _ := newTestPipeline(t, a, j)
	// Allowed calls never reach the judge.
	if out := p.Run(context.Background(), Call{Name: "Bash", Args: `{"command": "git status"}`}, AutoWithJudge); !out.Ran || j.count() != 0 {
		t.Errorf("allowlisted: %+v judge %d", out, j.count())
	}
	// The deny list and outside paths go to the person, never the judge.
	p.Run(context.Background(), Call{Name: "Bash", Args: `{"command": "sudo true"}`}, AutoWithJudge)
	outside := filepath.Join(filepath.Dir(env.Root), "x.txt")
	p.Run(context.Background(), writeCall("w", outside), AutoWithJudge)
	if j.count() != 0 || a.count() != 2 {
		t.Errorf("judge %d person %d", j.count(), a.count())
	}
}

func TestCancelDuringJudge(t *testing.T) {
	t.Parallel()
	j := &fakeJudge{block: true}
	a := &scriptedApprover{decision: Decision{Kind: AllowOnce}}
	env := newEnv(t)
	p := NewPipeline(PipelineConfig{Env: env, Approver: a, Judge: j, JudgeTimeout: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for j.count() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	out := p.Run(ctx, writeCall("w", "a.txt"), AutoWithJudge)
	if !out.Interrupted || out.Ran || a.count() != 0 {
		t.Errorf("%+v", out)
	}
}

func TestValidationAndUnknownOutcomes(t *testing.T) {
	t.Parallel()
	a := &scriptedApprover{decision: Decision{Kind: AllowOnce}}
	p, _, _ := newTestPipeline(t, a, nil)
	out := p.Run(context.Background(), Call{ID: "x", Name: "Read", Args: `{"path": "a", "limit": "ten"}`}, Auto)
	if out.Ran || out.Denied || out.Success || out.Output != `Read: argument "limit" must be an integer ≥ 1, got "ten"` {
		t.Errorf("validation: %+v", out)
	}
	out = p.Run(context.Background(), Call{ID: "y", Name: "Teleport", Args: `{}`}, Auto)
	if out.Ran || out.Success || !strings.HasPrefix(out.Output, `unknown tool "Teleport"`) {
		t.Errorf("unknown: %+v", out)
	}
	if a.count() != 0 {
		t.Error("asked about an invalid call")
	}
}

// panicTool panics when run.
type panicTool struct{ readTool }

func (panicTool) Name() string { return "Panic" }
func (panicTool) Schema() json.RawMessage {
	return json.RawMessage(`{"type": "object", "properties": {}, "additionalProperties": false}`)
}
func (panicTool) Run(context.Context, *Env, json.RawMessage) (Output, error) { panic("boom") }

func TestPanickingToolBecomesOutcome(t *testing.T) {
	t.Parallel()
	reg, err := NewRegistry(panicTool{})
	if err != nil {
		t.Fatal(err)
	}
	p := NewPipeline(PipelineConfig{Registry: reg, Env: newEnv(t)})
	p.now = (&steppingClock{t: time.Unix(1_800_000_000, 0), step: time.Second}).now
	out := p.Run(context.Background(), Call{ID: "p", Name: "Panic", Args: `{}`}, Auto)
	if out.Success || !out.Ran || !strings.Contains(out.Output, "internal error while running Panic: boom") || out.Call.ID != "p" {
		t.Errorf("%+v", out)
	}
	if out.Duration != time.Second {
		t.Errorf("a tool that panicked had run for %v, want its run time", out.Duration)
	}
}

// TestOneOutcomePerCall runs a burst of mixed calls concurrently, as the
// extension does, and checks each gets exactly one matching outcome.
func TestOneOutcomePerCall(t *testing.T) {
	t.Parallel()
	a := &scriptedApprover{decision: Decision{Kind: AllowOnce}}
	p, env, _ := newTestPipeline(t, a, nil)
	env.Browser = &fakeBrowser{content: "page"}
	writeFiles(t, env.Root, map[string]string{"f.txt": "hello\n"})
	calls := []Call{
		{Name: "Read", Args: `{"path": "f.txt"}`},
		{Name: "Bash", Args: `{"command": "echo hi"}`},
		{Name: "Bash", Args: `{"command": "exit 2"}`},
		{Name: "Write", Args: `{"path": "g.txt", "content": "x"}`},
		{Name: "BrowserRead", Args: `{}`},
		{Name: "Nope", Args: `{}`},
		{Name: "Read", Args: `{"path": 1}`},
		{Name: "Grep", Args: `{"pattern": "hello"}`},
	}
	var wg sync.WaitGroup
	results := make(chan Outcome, 10*len(calls))
	for round := range 10 {
		for i, c := range calls {
			c.ID = fmt.Sprintf("%d-%d", round, i)
			wg.Add(1)
			go func() {
				defer wg.Done()
				results <- p.Run(context.Background(), c, Standard)
			}()
		}
	}
	wg.Wait()
	close(results)
	seen := map[string]int{}
	for out := range results {
		seen[out.Call.ID]++
	}
	if len(seen) != 10*len(calls) {
		t.Errorf("%d distinct outcomes for %d calls", len(seen), 10*len(calls))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("call %s: %d outcomes", id, n)
		}
	}
}

// steppingClock advances by step every time it is read, so a run's
// measured duration is exactly step, however long anything else took.
type steppingClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *steppingClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

func (c *steppingClock) skip(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestDurationIsTheRunOnly: the time a call waited for the person is not
// part of how long it took, and a call that never ran took no time.
func TestDurationIsTheRunOnly(t *testing.T) {
	t.Parallel()
	clock := &steppingClock{t: time.Unix(1_800_000_000, 0), step: 5 * time.Millisecond}
	a := &scriptedApprover{decision: Decision{Kind: AllowOnce}, onApprove: func() { clock.skip(time.Minute) }}
	p, _, _ := newTestPipeline(t, a, nil)
	p.now = clock.now

	out := p.Run(context.Background(), writeCall("w1", "a.txt"), Standard)
	if !out.Ran || !out.Success || a.count() != 1 {
		t.Fatalf("approved write: %+v", out)
	}
	if out.Duration != 5*time.Millisecond {
		t.Errorf("approved after a minute, ran for 5ms: Duration %v", out.Duration)
	}

	a.decision = Decision{Kind: Deny}
	if out := p.Run(context.Background(), writeCall("w2", "b.txt"), Standard); out.Ran || out.Duration != 0 {
		t.Errorf("denied call: ran %v, Duration %v", out.Ran, out.Duration)
	}
	if out := p.Run(context.Background(), Call{ID: "r1", Name: "Read", Args: `{"path":"a.txt"}`, Origin: OriginAgent}, Standard); !out.Success || out.Duration != 5*time.Millisecond {
		t.Errorf("read without approval: %+v", out)
	}
	if out := p.Run(context.Background(), Call{ID: "x1", Name: "NoSuchTool", Args: `{}`, Origin: OriginAgent}, Standard); out.Duration != 0 {
		t.Errorf("unknown tool: Duration %v", out.Duration)
	}
}

// TestBrowserToolsWithoutABrowserFailWithoutAsking: with no browser (the
// bridge off), a browser call that would ask fails at once, in every mode,
// with the reason and what to do, and the person is never asked to
// approve a call that cannot work.
func TestBrowserToolsWithoutABrowserFailWithoutAsking(t *testing.T) {
	t.Parallel()
	a := &scriptedApprover{decision: Decision{Kind: AllowOnce}}
	p, env, _ := newTestPipeline(t, a, nil)
	env.BrowserOff = "enabled is false in ~/.infer/browser_use.yaml: set enabled: true and start infer again."
	for _, mode := range []Mode{Standard, Plan, Auto, AutoWithJudge} {
		for _, call := range []Call{
			{ID: "n", Name: "BrowserNavigate", Args: `{"url":"https://example.com"}`},
			{ID: "c", Name: "BrowserClick", Args: `{"selector":"a"}`},
			{ID: "t", Name: "BrowserType", Args: `{"selector":"#q","text":"x"}`},
			{ID: "r", Name: "BrowserRead", Args: `{}`},
		} {
			out := p.Run(context.Background(), call, mode)
			if out.Success || out.Denied || !strings.Contains(out.Output, "Browser use is off") || !strings.Contains(out.Output, "set enabled: true") {
				t.Errorf("%s in %s: %+v", call.Name, mode, out)
			}
		}
	}
	if n := a.count(); n != 0 {
		t.Fatalf("the person was asked %d times to approve calls that cannot work", n)
	}

	// With a browser, the same call asks as before.
	env.Browser = &fakeBrowser{}
	p.Run(context.Background(), Call{ID: "n3", Name: "BrowserNavigate", Args: `{"url":"https://example.com"}`}, Standard)
	if a.count() != 1 {
		t.Errorf("with a browser, navigate asked %d times, want 1", a.count())
	}
}

// A navigation to something that is not a URL fails at once, with what
// to write instead: nobody is asked to approve a call that could only
// fail (the demo model once asked to open "https://the demo shop and take
// a screenshot").
func TestANavigateThatCannotRunIsNotAskedFor(t *testing.T) {
	t.Parallel()
	a := &scriptedApprover{decision: Decision{Kind: AllowOnce}}
	p, _, _ := newTestPipeline(t, a, nil)
	for _, url := range []string{"https://the demo shop and take a screenshot", "javascript:alert(1)", "example.com/page", "file:///etc/passwd"} {
		args, _ := json.Marshal(map[string]string{"url": url})
		out := p.Run(context.Background(), Call{ID: "n", Name: "BrowserNavigate", Args: string(args), Origin: OriginAgent}, Standard)
		if out.Ran || out.Success || !strings.Contains(out.Output, "not an absolute http or https URL") {
			t.Errorf("%q: %+v", url, out)
		}
	}
	if a.count() != 0 {
		t.Fatalf("the person was asked %d times about URLs that cannot be opened", a.count())
	}
}
