package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/infer-workspace/infer/session/llm"
	"github.com/infer-workspace/infer/session/sandbox"
	"github.com/infer-workspace/infer/session/tools/bashguard"
	"github.com/infer-workspace/infer/session/tools/grants"
)

// DecisionKind is the person's answer to an approval request. The zero
// value is Deny, so a forgotten field fails safe.
type DecisionKind int

// Decisions. AllowOnce and AllowAlways run a command inside the sandbox
// where there is one; only AllowOutside lifts it, for that one call.
const (
	Deny DecisionKind = iota
	AllowOnce
	AllowAlways
	// AllowOutside runs this one command outside the sandbox, with the
	// person's full permissions. It is its own choice so that approving
	// never means it by default: only a request with Outside set takes
	// it, only from infer itself (never the browser panel), and nothing
	// is saved.
	AllowOutside
)

// Decision is the person's answer.
type Decision struct {
	Kind DecisionKind
	// Reason is the person's note, passed to the model on Deny.
	Reason string
	// Option picks which of the request's Options AllowAlways saves; an
	// index out of range means the first (narrowest).
	Option int
	// Remote is set when the answer came from the browser panel: a web
	// page can drive the extension, so the panel can only allow a call
	// to run in the sandbox; its AllowOutside is a refusal.
	Remote bool
}

// ApprovalRequest asks the person about one call.
type ApprovalRequest struct {
	Call Call
	Mode Mode
	// Why says why approval is needed, e.g. "Bash command is not
	// allowlisted: it uses a pipe (|); pipes are never auto-approved".
	Why string
	// JudgeReason is set in auto-with-judge mode when the judge did not
	// approve: its reason, or why it could not decide.
	JudgeReason string
	// Options are the grants AllowAlways may save, narrowest first. When
	// empty, AllowAlways acts as AllowOnce.
	Options []GrantOption
	// Sandbox is one plain line saying where the call runs if allowed
	// (once or always), for commands: "Runs inside the sandbox: writes
	// only the project, network through infer." or, with no sandbox to
	// run it in, that it runs with the person's full permissions. For a
	// network host it says what allowing lets through.
	Sandbox string
	// Outside is set when the person may choose AllowOutside: a command
	// that would otherwise run in a sandbox. Front ends that cannot
	// offer it (the browser panel) leave it unoffered.
	Outside bool
	// LocalOnly is set when only an answer at infer's terminal counts;
	// the browser panel is not offered the request, and its answer would
	// be a refusal (network hosts).
	LocalOnly bool
}

// Approver puts approval requests to the person. Approve blocks until the
// person answers or ctx is done (then it returns ctx's error). The
// workspace implements it across all its front ends.
type Approver interface {
	Approve(ctx context.Context, req ApprovalRequest) (Decision, error)
}

// Verdict is a judge's answer.
type Verdict struct {
	Approve bool
	Reason  string
}

// Judge reviews a call in auto-with-judge mode before the person sees it.
// Any error, including an answer it could not parse, means "ask the
// person": a judge can only ever let a call through by approving it.
type Judge interface {
	Judge(ctx context.Context, call Call, why string) (Verdict, error)
}

// Outcome is the result of one call, whatever happened to it.
type Outcome struct {
	Call Call
	// Success is true when the tool ran and did its job.
	Success bool
	// Output is the text the model reads, including error text.
	Output string
	// Error is a short failure description (tool_result's error field);
	// empty on success.
	Error    string
	ExitCode *int
	Images   []llm.Image
	// Artifacts are paths relative to the artifacts directory.
	Artifacts []string
	// Denied is true when the call did not run because the policy refused
	// it or the person (or nobody) did not approve it.
	Denied       bool
	DeniedReason string
	// Interrupted is true when ctx was cancelled while the call waited or
	// ran; TimedOut when it hit its timeout.
	Interrupted bool
	TimedOut    bool
	// Approval says why the call was allowed to run, e.g. "read-only
	// tool", "approved by the person", "approved by the judge: …".
	Approval string
	// Warning is a problem the person should see that did not stop the
	// call, e.g. an "always allow" that could not be saved.
	Warning string
	// Duration is how long the tool ran. Time spent waiting for the
	// person or the judge is not in it (a call approved after a minute
	// that ran for 5 ms took 5 ms); 0 when the tool never started.
	Duration time.Duration
	// Ran is true when the tool was started.
	Ran bool
	// page is the tab's URL the browser reported with the result.
	page string
}

// PipelineConfig configures a Pipeline.
type PipelineConfig struct {
	// Registry defaults to DefaultRegistry().
	Registry *Registry
	// Env is shared by every call; nil means an empty Env.
	Env *Env
	// Guard defaults to the built-in Bash lists for Env.Root; build one
	// with bashguard.New to add the configured allow and deny patterns.
	Guard *bashguard.Guard
	// Grants is the project's saved permissions; nil means none, and
	// "always allow" answers act once.
	Grants *grants.Store
	// Approver asks the person; nil means nobody can approve, so calls
	// that ask are denied.
	Approver Approver
	// Judge reviews calls in auto-with-judge mode; nil fails closed (the
	// person is asked).
	Judge Judge
	// JudgeTimeout bounds one judge call (default 60s).
	JudgeTimeout time.Duration
	// Timeouts overrides tools' timeouts by name (e.g. from config.yaml).
	// Bash's timeout_ms argument still wins for its call.
	Timeouts map[string]time.Duration
	// Sources add tools other programs provide (the person's MCP
	// servers); a built-in tool of the same name wins.
	Sources []Source
}

// Pipeline runs calls: validate → permission → approval → run → outcome.
// It is safe for concurrent use; calls run concurrently (the extension
// sends several at once).
type Pipeline struct {
	reg          *Registry
	env          *Env
	policy       *policy
	grants       *grants.Store
	approver     Approver
	judge        Judge
	judgeTimeout time.Duration
	timeouts     map[string]time.Duration
	sources      []Source
	now          func() time.Time // time.Now; tests replace it
}

// NewPipeline builds a Pipeline from cfg.
func NewPipeline(cfg PipelineConfig) *Pipeline {
	p := &Pipeline{
		reg:          cfg.Registry,
		env:          cfg.Env,
		grants:       cfg.Grants,
		approver:     cfg.Approver,
		judge:        cfg.Judge,
		judgeTimeout: cfg.JudgeTimeout,
		timeouts:     map[string]time.Duration{},
		sources:      append([]Source(nil), cfg.Sources...),
		now:          time.Now,
	}
	if p.reg == nil {
		p.reg = DefaultRegistry()
	}
	if p.env == nil {
		p.env = &Env{}
	}
	if p.judgeTimeout <= 0 {
		p.judgeTimeout = time.Minute
	}
	for k, v := range cfg.Timeouts {
		p.timeouts[k] = v
	}
	guard := cfg.Guard
	if guard == nil {
		guard = bashguard.Default(p.env.Root)
	}
	p.policy = &policy{env: p.env, guard: guard, grants: cfg.Grants}
	return p
}

// Registry returns the pipeline's tools.
func (p *Pipeline) Registry() *Registry { return p.reg }

// Specs describes the pipeline's tools for a model request: the built-in
// ones, then those the sources offer now.
func (p *Pipeline) Specs() []llm.Tool {
	out := p.reg.Specs()
	for _, s := range p.sources {
		for _, t := range s.Tools() {
			if _, builtin := p.reg.Lookup(t.Name()); builtin {
				continue
			}
			out = append(out, llm.Tool{Name: t.Name(), Description: t.Description(), Parameters: t.Schema()})
		}
	}
	return out
}

// Check is the pure permission decision for call in mode, without asking
// anyone or running anything: for tests and for UIs that preview what a
// call would do. Unknown tools and invalid arguments are refused with the
// validation error.
func (p *Pipeline) Check(call Call, mode Mode) Permission {
	t, ok := p.lookup(context.Background(), call.Name)
	if !ok {
		return Permission{Kind: Refuse, Why: p.unknown(call.Name).Error()}
	}
	if err := p.validate(t, call.Name, call.Args); err != nil {
		return Permission{Kind: Refuse, Why: err.Error()}
	}
	return p.policy.decide(t, call, json.RawMessage(call.Args), mode)
}

// Run takes call through the whole pipeline and returns exactly one
// Outcome. It never panics: a panicking tool, approver or judge becomes a
// failed Outcome.
func (p *Pipeline) Run(ctx context.Context, call Call, mode Mode) (out Outcome) {
	out.Call = call
	defer func() {
		if r := recover(); r != nil {
			out = Outcome{Call: call, Ran: out.Ran, Duration: out.Duration}
			fail(&out, fmt.Sprintf("internal error while running %s: %v; this is a bug in infer", call.Name, r))
		}
	}()

	t, ok := p.lookup(ctx, call.Name)
	if !ok {
		fail(&out, p.unknown(call.Name).Error())
		return out
	}
	if err := p.validate(t, call.Name, call.Args); err != nil {
		fail(&out, err.Error())
		return out
	}
	args := json.RawMessage(call.Args)
	// Paths are resolved once: the tool opens what the policy (and the
	// person) judged, not whatever the names lead to by then.
	j := resolvePaths(p.env, t, args)
	perm := p.policy.decideOn(j, t, call, args, mode)
	// Whatever lets a call through, it runs in the sandbox; only a
	// person choosing to run this very call outside it lifts it.
	conf := confined
	if mode == Plan {
		conf = confinedReadOnly
	}
	switch perm.Kind {
	case Refuse:
		deny(&out, perm.Why, perm.Why)
		return out
	case Ask:
		var ok bool
		if conf, ok = p.approve(ctx, call, mode, perm, conf, &out); !ok {
			return out
		}
	default:
		out.Approval = perm.Why
	}
	p.execute(withResolved(ctx, j), t, args, conf, mode, &out)
	if _, ok := t.(navigateTool); ok && out.Ran {
		p.env.navigated()
	}
	if perm.Kind == Allow && perm.Site != "" {
		p.keepOnSite(t, perm.Site, &out)
	}
	return out
}

// approve settles an Ask: the judge first when the permission says so,
// then the person. It reports whether the call may run and how: conf
// (in the sandbox) unless the person chose to run it outside, or there
// is no sandbox to run it in. When it may not run, out is already the
// final outcome.
func (p *Pipeline) approve(ctx context.Context, call Call, mode Mode, perm Permission, conf confinement, out *Outcome) (confinement, bool) {
	req := ApprovalRequest{Call: call, Mode: mode, Why: perm.Why, Options: perm.Options,
		Sandbox: p.sandboxNote(call, mode), Outside: p.offersOutside(call, mode)}
	if perm.Judge && mode == AutoWithJudge {
		v, err := p.askJudge(ctx, call, perm.Why)
		switch {
		case ctx.Err() != nil:
			interrupt(out, "interrupted while the judge reviewed it")
			return conf, false
		case err != nil:
			req.JudgeReason = err.Error()
		case v.Approve:
			out.Approval = "approved by the judge"
			if v.Reason != "" {
				out.Approval += ": " + v.Reason
			}
			return conf, true
		default:
			req.JudgeReason = "the judge did not approve"
			if v.Reason != "" {
				req.JudgeReason += ": " + v.Reason
			}
		}
	}
	if p.approver == nil {
		deny(out, "no one is available to approve it ("+perm.Why+")",
			"This call needs the person's approval, but no one can approve it here: "+perm.Why)
		return conf, false
	}
	d, err := p.approver.Approve(ctx, req)
	switch {
	case ctx.Err() != nil:
		interrupt(out, "interrupted while waiting for approval")
		return conf, false
	case err != nil:
		deny(out, "the approval failed: "+err.Error(), "The call was not approved because the approval failed: "+err.Error())
		return conf, false
	}
	switch d.Kind {
	case AllowOnce:
		out.Approval = "approved by the person"
	case AllowAlways:
		out.Approval = "approved by the person"
		p.saveGrant(req, d, out)
	case AllowOutside:
		switch {
		case d.Remote:
			deny(out, "the browser panel cannot run a command outside the sandbox",
				"The call was not run: the browser panel asked to run it outside the sandbox, which only a person at infer's terminal can choose.")
			return conf, false
		case !req.Outside:
			deny(out, "running outside the sandbox was not offered for this call",
				"The call was not run: it was approved to run outside the sandbox, which was not offered for it.")
			return conf, false
		}
		out.Approval = "approved by the person to run outside the sandbox, once"
		return unconfined, true
	default:
		reason, text := "rejected by the person", "The person rejected this call."
		if d.Reason != "" {
			reason += ": " + d.Reason
			text = "The person rejected this call: " + d.Reason
		}
		deny(out, reason, text)
		return conf, false
	}
	if d.Remote && perm.LocalOnly {
		deny(out, "only a person at infer itself can approve this; the browser panel cannot",
			"The call was not run: "+perm.Why+", and the approval came from the browser panel, which cannot approve it. Ask the person to approve it in infer's terminal.")
		return conf, false
	}
	if d.Remote {
		out.Approval += " in the browser panel"
		return conf, true
	}
	if sb := p.env.Sandbox; sb != nil && sb.Kind() != sandbox.Off && !sb.Confines() {
		// No sandbox on this machine: a person at infer lets the command
		// run as they would run it, which the box said.
		return unconfined, true
	}
	return conf, true
}

// askJudge calls the judge with its own timeout, turning a missing judge,
// an error, a timeout or a panic into an error (fail closed).
func (p *Pipeline) askJudge(ctx context.Context, call Call, why string) (v Verdict, err error) {
	if p.judge == nil {
		return Verdict{}, errors.New("no judge is configured")
	}
	jctx, cancel := context.WithTimeout(ctx, p.judgeTimeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			v, err = Verdict{}, fmt.Errorf("the judge failed: %v", r)
		}
	}()
	v, err = p.judge.Judge(jctx, call, why)
	switch {
	case ctx.Err() != nil:
		return Verdict{}, ctx.Err()
	case errors.Is(jctx.Err(), context.DeadlineExceeded):
		return Verdict{}, fmt.Errorf("the judge did not answer within %s", p.judgeTimeout)
	case err != nil:
		return Verdict{}, fmt.Errorf("the judge could not decide: %v", err)
	}
	return v, nil
}

// saveGrant stores the chosen "always allow" option. Failing to save does
// not undo the person's approval of this call; it becomes a warning.
func (p *Pipeline) saveGrant(req ApprovalRequest, d Decision, out *Outcome) {
	if len(req.Options) == 0 {
		out.Warning = "Nothing can be saved for this call, so the approval applies to this call only."
		return
	}
	opt := req.Options[0]
	if d.Option > 0 && d.Option < len(req.Options) {
		opt = req.Options[d.Option]
	}
	g, err := p.grants.Add(opt.Grant)
	if err != nil {
		out.Warning = "The approval applies to this call only: " + err.Error()
		return
	}
	out.Approval += "; saved permission " + g.ID + ": " + g.String()
}

// execute runs the tool under its timeout and fills in the outcome.
// Tools that can be confined run as conf says.
func (p *Pipeline) execute(ctx context.Context, t Tool, args json.RawMessage, conf confinement, mode Mode, out *Outcome) {
	timeout := t.Timeout()
	if d, ok := p.timeouts[t.Name()]; ok && d > 0 {
		timeout = d
	}
	if ta, ok := t.(timeoutArg); ok {
		if d, ok := ta.timeoutFor(args); ok {
			timeout = d
		}
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out.Ran = true
	started := p.now()
	// Deferred, so a tool that panics still reports how long it ran.
	defer func() { out.Duration = p.now().Sub(started) }()
	var (
		res Output
		err error
	)
	if ct, ok := t.(confinable); ok {
		if conf != unconfined {
			rctx = withNetGate(rctx, p.netGate(t, out.Call, mode))
		}
		res, err = ct.runConfined(rctx, p.env, args, conf)
		if note := p.ranNote(conf); note != "" && out.Approval != "" {
			out.Approval += "; " + note
		}
	} else {
		res, err = t.Run(rctx, p.env, args)
	}
	switch {
	case err != nil && ctx.Err() != nil, err == nil && res.Interrupted:
		text := "The call was interrupted and stopped."
		if res.Text != "" {
			text = res.Text
		}
		out.Interrupted = true
		fail(out, text)
		out.Error = "interrupted"
	case err != nil && errors.Is(rctx.Err(), context.DeadlineExceeded), err == nil && res.TimedOut:
		text := fmt.Sprintf("%s did not finish within %s and was stopped.", t.Name(), timeout)
		if res.Text != "" {
			text = res.Text
		}
		out.TimedOut = true
		fail(out, text)
		out.Error = "timed out after " + timeout.String()
	case err != nil:
		fail(out, err.Error())
	default:
		out.Success = res.Success
		out.Output = res.Text
		out.ExitCode = res.ExitCode
		out.Images = res.Images
		out.Artifacts = res.Artifacts
		out.page = res.page
		if !res.Success {
			out.Error = "failed"
			if res.ExitCode != nil {
				out.Error = fmt.Sprintf("exit code %d", *res.ExitCode)
			}
		}
	}
	if out.Interrupted || out.TimedOut {
		out.Images, out.Artifacts = res.Images, res.Artifacts
	}
}

// sandboxNote is ApprovalRequest.Sandbox for call in mode: where the
// command runs if the person allows it, once or always. It is empty for
// tools the sandbox does not apply to, and for an Env with no sandbox set
// up at all (nil: tests, and front ends that confine nothing).
func (p *Pipeline) sandboxNote(call Call, mode Mode) string {
	if !p.confinable(call) {
		return ""
	}
	sb := p.env.Sandbox
	switch {
	case sb == nil:
		return ""
	case sb.Kind() == sandbox.Off:
		return "Runs OUTSIDE the sandbox, with your full permissions: the sandbox is off (sandbox.mode: off)."
	case !sb.Confines():
		return "Runs with your full permissions: there is no sandbox on this machine to run it in."
	case mode == Plan:
		return "Runs inside the sandbox, read-only: it can change nothing (plan mode)."
	}
	net := "network through infer"
	switch {
	case !p.env.Confine.Network:
		net = "no network"
	case sb.Kind() != sandbox.Bubblewrap:
		// Seatbelt has no network namespace to put a proxy in front of.
		net = "network open"
	}
	return "Runs inside the sandbox: writes only the project, " + net + "."
}

// offersOutside reports whether the person may run call outside the
// sandbox (AllowOutside): a command that would otherwise run in one. Plan
// mode offers nothing that could change the machine.
func (p *Pipeline) offersOutside(call Call, mode Mode) bool {
	sb := p.env.Sandbox
	return mode != Plan && p.confinable(call) && sb != nil && sb.Kind() != sandbox.Off && sb.Confines()
}

// confinable reports whether call's tool runs in the sandbox.
func (p *Pipeline) confinable(call Call) bool {
	t, ok := p.reg.Lookup(call.Name)
	if !ok {
		return false
	}
	_, ok = t.(confinable)
	return ok
}

// netGate decides the hosts call's confined command may reach.
func (p *Pipeline) netGate(t Tool, call Call, mode Mode) *netGate {
	who := "The command"
	if isBash(t) {
		var a bashArgs
		if json.Unmarshal([]byte(call.Args), &a) == nil && a.Command != "" {
			who = "The command `" + a.Command + "`"
		}
	}
	return &netGate{env: p.env, grants: p.grants, approver: p.approver, call: call, mode: mode, who: who}
}

// ranNote is added to an Outcome's Approval to say where a command ran.
func (p *Pipeline) ranNote(conf confinement) string {
	sb := p.env.Sandbox
	switch {
	case sb == nil:
		return ""
	case conf == unconfined && sb.Kind() != sandbox.Off && !sb.Confines():
		return "ran without a sandbox (none is available here)"
	case conf == unconfined:
		return "ran outside the sandbox"
	case sb.Kind() == sandbox.Off:
		return "ran unconfined (sandbox.mode: off)"
	case conf == confinedReadOnly:
		return "ran in the sandbox, read-only (" + sb.Kind().String() + ")"
	default:
		return "ran in the sandbox (" + sb.Kind().String() + ")"
	}
}

func fail(out *Outcome, msg string) {
	out.Success = false
	out.Output = msg
	out.Error = msg
}

func deny(out *Outcome, reason, text string) {
	fail(out, text)
	out.Denied = true
	out.DeniedReason = reason
}

func interrupt(out *Outcome, reason string) {
	deny(out, reason, "The call was interrupted before it was approved; it did not run.")
	out.Interrupted = true
}
