package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/infer-workspace/infer/bridge/wire"
	"github.com/infer-workspace/infer/sim"
	"github.com/infer-workspace/infer/sim/fakebrowser"
)

// Options say where and how to run a scenario.
type Options struct {
	// URL and Token reach infer's bridge.
	URL, Token string
	// Browser replaces the scenario's own browser choice (e.g. Chromium);
	// scripted answers still take precedence.
	Browser sim.Browser
	// Faults and Tap are passed to the client.
	Faults *sim.Faults
	Tap    sim.Tap
	// Progress, if set, gets one line per step as it passes.
	Progress io.Writer
	// Logger receives the client's diagnostics.
	Logger *slog.Logger
}

// Failure is an unmet step, with what was expected and what came instead.
type Failure struct {
	File   string
	Step   int
	Line   int
	What   string
	Reason string
	// Detail is the readable diff: the expectation and the closest frames.
	Detail string
}

// Error names the file, step and line, then shows the diff.
func (f *Failure) Error() string {
	s := fmt.Sprintf("%s: step %d (line %d, %s) failed: %s", f.File, f.Step, f.Line, f.What, f.Reason)
	if f.Detail != "" {
		s += "\n" + f.Detail
	}
	return s
}

// Run plays the scenario against infer and returns nil when every step
// passed, a *Failure for the first that did not, or another error when
// the scenario could not start.
func (s *Scenario) Run(ctx context.Context, opts Options) error {
	profile, err := sim.ProfileByName(s.Profile)
	if err != nil {
		return err
	}
	base := opts.Browser
	if base == nil {
		switch s.Browser {
		case "", "fake":
			fb, err := fakebrowser.New(fakebrowser.Options{Profile: profile.Browser})
			if err != nil {
				return err
			}
			defer fb.Close()
			base = fb
		case "minimal":
			base = &sim.Minimal{}
		}
	}
	script := &scripted{base: base}
	client := sim.NewClient(sim.ClientOptions{
		URL: opts.URL, Token: opts.Token, Profile: profile,
		Browser: opts.Faults.Browser(script), Faults: opts.Faults, Tap: opts.Tap,
		Logger: opts.Logger, MinBackoff: 20 * time.Millisecond, MaxBackoff: 500 * time.Millisecond,
	})
	sub := client.Subscribe()
	defer sub.Close()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- client.Run(runCtx) }()
	defer func() {
		stop()
		<-done
	}()

	r := &runner{s: s, opts: opts, client: client, panel: sim.NewPanel(client), sub: sub, script: script}
	wctx, cancel := context.WithTimeout(ctx, s.Timeout)
	err = client.WaitConnected(wctx)
	cancel()
	if err != nil {
		return fmt.Errorf("%s: could not connect to infer at %s within %s: %s", s.File, opts.URL, s.Timeout, sim.ConnectAdvice(client.LastError()))
	}
	for i := range s.Steps {
		if err := r.step(ctx, i); err != nil {
			return err
		}
	}
	if unused := script.unused(); len(unused) > 0 {
		return &Failure{File: s.File, Step: len(s.Steps), Line: s.Steps[len(s.Steps)-1].line, What: "end",
			Reason: "scripted answers were never used: " + strings.Join(unused, "; ")}
	}
	return nil
}

// runner is one run's state.
type runner struct {
	s      *Scenario
	opts   Options
	client *sim.Client
	panel  *sim.Panel
	sub    *sim.Subscription
	script *scripted
}

func (r *runner) fail(i int, reason, detail string) error {
	st := &r.s.Steps[i]
	return &Failure{File: r.s.File, Step: i + 1, Line: st.line, What: st.describe(), Reason: reason, Detail: detail}
}

func (r *runner) step(ctx context.Context, i int) error {
	st := &r.s.Steps[i]
	var err error
	switch {
	case st.Panel != nil:
		err = r.panelStep(ctx, i, st.Panel)
	case st.Send != nil:
		err = r.send(ctx, i, st.Send)
	case st.Expect != nil:
		err = r.expect(ctx, i, st.Expect)
	case st.Answer != nil:
		r.script.add(st.Answer)
	case st.Approve != "":
		err = r.decide(ctx, i, "approve", st.Approve)
	case st.Reject != "":
		err = r.decide(ctx, i, "reject", st.Reject)
	case st.Wait != 0:
		t := time.NewTimer(st.Wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			err = ctx.Err()
		}
	case st.Disconnect:
		r.client.Disconnect()
	case st.Reconnect:
		r.client.Reconnect()
		wctx, cancel := context.WithTimeout(ctx, r.s.Timeout)
		werr := r.client.WaitConnected(wctx)
		cancel()
		if werr != nil {
			err = r.fail(i, fmt.Sprintf("not connected again within %s", r.s.Timeout), fmt.Sprintf("  last connection error: %v", r.client.LastError()))
		}
	}
	if err == nil && r.opts.Progress != nil {
		fmt.Fprintf(r.opts.Progress, "✓ %2d  %s\n", i+1, st.describe())
	}
	return err
}

func (r *runner) panelStep(ctx context.Context, i int, p *PanelStep) error {
	out, err := r.panel.Exec(ctx, p.Command)
	switch {
	case p.Fails != "" && err == nil:
		return r.fail(i, "the command succeeded, but the scenario expects it to fail with "+fmt.Sprintf("%q", p.Fails), out)
	case p.Fails != "" && !strings.Contains(err.Error(), p.Fails):
		return r.fail(i, fmt.Sprintf("it failed with %q, not with %q", err.Error(), p.Fails), "")
	case p.Fails == "" && err != nil:
		return r.fail(i, err.Error(), "")
	}
	return nil
}

func (r *runner) send(ctx context.Context, i int, m map[string]any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return r.fail(i, err.Error(), "")
	}
	f, derr := wire.Decode(b)
	var uerr error
	if _, unknown := f.(wire.Unknown); derr != nil || unknown {
		uerr = r.client.SendRaw(ctx, b) // not a frame this version knows: as is
	} else {
		uerr = r.client.Send(ctx, f)
	}
	if uerr != nil {
		return r.fail(i, uerr.Error(), "")
	}
	return nil
}

// decide approves or rejects, waiting for a request to be pending when the
// step says latest.
func (r *runner) decide(ctx context.Context, i int, action, which string) error {
	if which == "latest" {
		deadline := time.Now().Add(r.s.Timeout)
		for len(r.client.PendingApprovals()) == 0 {
			if time.Now().After(deadline) {
				return r.fail(i, fmt.Sprintf("no approval request arrived within %s", r.s.Timeout), "")
			}
			t := time.NewTimer(10 * time.Millisecond)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			}
		}
	}
	if _, err := r.panel.Exec(ctx, action+" "+which); err != nil {
		return r.fail(i, err.Error(), "")
	}
	return nil
}

// expect consumes frames until one matches, or the wait runs out.
func (r *runner) expect(ctx context.Context, i int, e *Expect) error {
	within := e.Within
	if within == 0 {
		within = r.s.Timeout
	}
	wctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var seen []any
	var text strings.Builder
	for {
		f, err := r.sub.Next(wctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return r.fail(i, fmt.Sprintf("no matching frame within %s", within), explainMiss(e, seen, text.String()))
		}
		v, err := frameValue(f)
		if err != nil {
			continue
		}
		seen = append(seen, v)
		if ce, ok := f.(wire.ChatEvent); ok {
			var ev struct{ Type, Delta string }
			if json.Unmarshal(ce.Event, &ev) == nil && ev.Type == "TEXT_MESSAGE_CONTENT" {
				text.WriteString(ev.Delta)
			}
		}
		if !matches(e.Pattern, v) {
			continue
		}
		if e.TextContains != "" && !strings.Contains(text.String(), e.TextContains) {
			continue
		}
		if e.Contains != "" && !containsString(v, e.Contains) {
			continue
		}
		return nil
	}
}

// frameValue is a frame as decoded JSON.
func frameValue(f wire.Frame) (any, error) {
	b, err := wire.Encode(f)
	if err != nil {
		return nil, err
	}
	var v any
	return v, json.Unmarshal(b, &v)
}

// matches reports whether actual has everything pattern has (see
// Expect.Pattern).
func matches(pattern, actual any) bool {
	return mismatch(pattern, actual, "") == ""
}

// mismatch is the path of the first difference, or "".
func mismatch(pattern, actual any, path string) string {
	at := func(p string) string {
		if p == "" {
			return "(frame)"
		}
		return p
	}
	switch p := pattern.(type) {
	case map[string]any:
		a, ok := actual.(map[string]any)
		if !ok {
			return at(path) + " is not an object"
		}
		keys := make([]string, 0, len(p))
		for k := range p {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if slices.Contains(keys, "type") { // the type first: the most telling difference
			keys = append([]string{"type"}, slices.DeleteFunc(keys, func(k string) bool { return k == "type" })...)
		}
		for _, k := range keys {
			sub := path + "." + k
			if path == "" {
				sub = k
			}
			av, ok := a[k]
			if !ok {
				return sub + " is missing"
			}
			if d := mismatch(p[k], av, sub); d != "" {
				return d
			}
		}
		return ""
	case []any:
		a, ok := actual.([]any)
		if !ok {
			return at(path) + " is not an array"
		}
		if len(p) == 0 {
			if len(a) != 0 {
				return fmt.Sprintf("%s has %d elements, want none", at(path), len(a))
			}
			return ""
		}
		j := 0
		for n, pe := range p {
			for j < len(a) && !matches(pe, a[j]) {
				j++
			}
			if j == len(a) {
				return fmt.Sprintf("%s[%d] %s matches no later element", at(path), n, compact(pe))
			}
			j++
		}
		return ""
	default:
		if pattern != actual {
			return fmt.Sprintf("%s is %s, want %s", at(path), compact(actual), compact(pattern))
		}
		return ""
	}
}

// containsString reports whether some string in v contains s.
func containsString(v any, s string) bool {
	switch v := v.(type) {
	case string:
		return strings.Contains(v, s)
	case map[string]any:
		for _, x := range v {
			if containsString(x, s) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if containsString(x, s) {
				return true
			}
		}
	}
	return false
}

// leaves counts a pattern's leaf values, and score how many of them a
// frame matches, to rank the frames closest to an expectation.
func leaves(p any) int {
	switch p := p.(type) {
	case map[string]any:
		n := 0
		for _, v := range p {
			n += leaves(v)
		}
		return n
	case []any:
		n := 0
		for _, v := range p {
			n += leaves(v)
		}
		return max(n, 1)
	}
	return 1
}

func score(p, a any) int {
	switch p := p.(type) {
	case map[string]any:
		m, ok := a.(map[string]any)
		if !ok {
			return 0
		}
		n := 0
		for k, v := range p {
			if av, ok := m[k]; ok {
				n += score(v, av)
			}
		}
		return n
	case []any:
		if matches(p, a) {
			return leaves(p)
		}
		return 0
	}
	if p == a {
		return 1
	}
	return 0
}

// explainMiss shows the expectation next to the closest frames received.
func explainMiss(e *Expect, seen []any, text string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  expected: %s", compact(e.Pattern))
	if e.TextContains != "" {
		fmt.Fprintf(&b, " after text containing %q", e.TextContains)
	}
	if e.Contains != "" {
		fmt.Fprintf(&b, " containing %q", e.Contains)
	}
	b.WriteString("\n")
	if len(seen) == 0 {
		b.WriteString("  received: no frames at all in that time\n")
	} else {
		type ranked struct {
			i, score int
		}
		rs := make([]ranked, len(seen))
		for i, v := range seen {
			rs[i] = ranked{i, score(e.Pattern, v)}
		}
		sort.SliceStable(rs, func(x, y int) bool { return rs[x].score > rs[y].score })
		fmt.Fprintf(&b, "  closest of the %d frames received:\n", len(seen))
		for _, r := range rs[:min(3, len(rs))] {
			v := seen[r.i]
			why := mismatch(e.Pattern, v, "")
			if why == "" {
				why = "matches the pattern, but not the text condition"
			}
			fmt.Fprintf(&b, "    #%d %s\n       → %s\n", r.i+1, clip(compact(v), 400), why)
		}
	}
	if e.TextContains != "" {
		fmt.Fprintf(&b, "  text streamed meanwhile: %q\n", clip(text, 600))
	}
	return strings.TrimRight(b.String(), "\n")
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// scripted answers browser commands from the scenario's answers first,
// and from the base browser otherwise.
type scripted struct {
	base sim.Browser

	mu      sync.Mutex
	answers []*Answer
	used    []bool
}

func (s *scripted) add(a *Answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers = append(s.answers, a)
	s.used = append(s.used, false)
}

// take claims the first unused answer for cmd.
func (s *scripted) take(cmd wire.BrowserCommand) *Answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, a := range s.answers {
		if s.used[i] || a.Action != string(cmd.Action) ||
			(a.Selector != "" && a.Selector != cmd.Selector) ||
			(a.URL != "" && a.URL != cmd.URL) ||
			(a.Text != "" && a.Text != cmd.Text) {
			continue
		}
		s.used[i] = true
		return a
	}
	return nil
}

func (s *scripted) unused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for i, a := range s.answers {
		if !s.used[i] {
			out = append(out, strings.TrimSpace(a.Action+" "+a.Selector+a.URL))
		}
	}
	return out
}

// Do implements sim.Browser.
func (s *scripted) Do(ctx context.Context, cmd wire.BrowserCommand) wire.BrowserResult {
	if a := s.take(cmd); a != nil {
		if a.Delay > 0 {
			t := time.NewTimer(a.Delay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return wire.BrowserResult{Error: string(cmd.Action) + " timed out: the command's timeout_ms ran out"}
			}
		}
		res := a.result
		if res.Events == nil {
			res.Events = []json.RawMessage{}
		}
		return res
	}
	if s.base == nil {
		return wire.BrowserResult{Error: "the scenario has no browser and no answer for " + string(cmd.Action)}
	}
	return s.base.Do(ctx, cmd)
}
