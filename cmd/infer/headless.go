package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/infer-workspace/infer/assemble"
	"github.com/infer-workspace/infer/bridge/seat"
	"github.com/infer-workspace/infer/session"
	"github.com/infer-workspace/infer/session/browser"
	"github.com/infer-workspace/infer/session/config"
	"github.com/infer-workspace/infer/session/tools"
	"github.com/infer-workspace/infer/session/transcript"
)

// exitInterrupted is the exit code of a run stopped by SIGINT, SIGTERM or
// SIGHUP, which main turns into the same cancellation: the code shells
// report for a process killed by SIGINT (128 + 2), whichever it was.
const exitInterrupted = 130

// exitError carries an exit code other than the default 1 for runtime
// failures; run prints its message like any other error.
type exitError struct {
	code int
	err  error
}

// Error is the message run prints.
func (e exitError) Error() string { return e.err.Error() }

// Unwrap gives errors.Is and errors.As the cause.
func (e exitError) Unwrap() error { return e.err }

// ExitCode is the process exit code the error asks for.
func (e exitError) ExitCode() int { return e.code }

// maxStdinPrompt bounds a prompt read from stdin: far beyond any real
// prompt, small enough that a mistaken `< big.iso` fails fast.
const maxStdinPrompt = 16 << 20

// headlessFlags are infer headless's command-line options.
type headlessFlags struct {
	output, format string
	model, mode    string
	sessionID      string
	cont           bool
	noBridge       bool
	port           int
	showReasoning  bool
	verbose        bool
}

func newHeadlessCmd() *cobra.Command {
	var f headlessFlags
	cmd := &cobra.Command{
		Use:   "headless [flags] PROMPT",
		Short: "Run one agent turn without the terminal UI and print it as text, JSON lines or AG-UI events",
		Long: `headless sends PROMPT to the agent in the current project, prints the run as it
happens, and exits when the run ends. PROMPT is the arguments joined by spaces;
"-" reads it from stdin instead.

Output (--output, or its alias --format):
  text   the answer as it streams, one line per tool call and result;
         approvals and errors on stderr (default)
  json   one JSON object per line; the schema is in docs/headless.md
  ag-ui  newline-delimited AG-UI events, as the bridge sends them

Tool calls that need approval are announced in the output and answered on
stdin with lines like
  {"type":"approval_response","request_id":"<id>","action":"approve"}
(any other action rejects; in text output "y" or "n" answers the oldest).
End of stdin rejects what is pending. When PROMPT is "-", stdin is the
prompt, so approvals cannot be answered and are rejected; use --mode auto.

A connected browser extension watches the run through the bridge when
browser_use.yaml enables it. When another infer of yours holds the bridge,
the run uses that infer's browser. A browser call made while no extension
is connected waits up to extension.connect_wait (20s) for one.

Exit codes: 0 the run finished, 1 it failed, 2 usage error (including an
unknown --session-id or --model), 3 it finished but a browser call failed
because no browser extension was connected, 130 interrupted (SIGINT,
SIGTERM or SIGHUP, or stopped from the browser panel).`,
		Example: `  infer headless "summarise README.md"
  infer headless --output json --mode auto "run go test ./..."
  echo "open example.com" | infer headless --output ag-ui -
  infer headless --session-id 6f1c… "and now the docs page"
  infer headless -c "and the one after"`,
		// No prompt at all is the empty prompt, which runHeadless explains
		// in one line; cobra's own check printed its usage under it.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHeadless(cmd, args, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.output, "output", "o", outputText, "output format: text, json or ag-ui")
	fl.StringVar(&f.format, "format", "", "alias of --output")
	fl.StringVar(&f.model, "model", "", "model for this run, as provider/model (default: config.yaml's, else the first available)")
	fl.StringVar(&f.mode, "mode", "", "agent mode for this run: standard, plan, auto or auto-with-judge")
	fl.StringVar(&f.sessionID, "session-id", "", "continue this stored conversation (its id, or a unique prefix of 4+ characters) instead of starting a new one")
	fl.BoolVarP(&f.cont, "continue", "c", false, "continue this project's most recent conversation (like --session-id with its id)")
	fl.BoolVar(&f.noBridge, "no-bridge", false, "do not start the browser bridge for this run")
	fl.IntVar(&f.port, "port", 0, "bridge port for this run (default: extension.port from browser_use.yaml; 0 picks a free port)")
	fl.BoolVar(&f.showReasoning, "show-reasoning", false, "text output: show the model's reasoning on stderr")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log details to stderr")
	return cmd
}

// outputFormat resolves --output and its alias --format.
func (f headlessFlags) outputFormat(cmd *cobra.Command) (string, error) {
	out := strings.ToLower(strings.TrimSpace(f.output))
	if cmd.Flags().Changed("format") {
		alias := strings.ToLower(strings.TrimSpace(f.format))
		if cmd.Flags().Changed("output") && alias != out {
			return "", usageError{fmt.Errorf("--output %s and --format %s disagree: --format is an alias of --output, give one", f.output, f.format)}
		}
		out = alias
	}
	switch out {
	case outputText, outputJSON, outputAGUI:
		return out, nil
	}
	return "", usageError{fmt.Errorf("unknown output format %q: use text, json or ag-ui", out)}
}

func runHeadless(cmd *cobra.Command, args []string, f headlessFlags) error {
	ctx := cmd.Context()
	stdout, stderr, stdin := cmd.OutOrStdout(), cmd.ErrOrStderr(), cmd.InOrStdin()
	format, err := f.outputFormat(cmd)
	if err != nil {
		return err
	}
	if f.cont && f.sessionID != "" {
		return usageError{errors.New("--continue and --session-id both name a conversation: give one")}
	}
	if f.mode != "" {
		if _, ok := tools.ParseMode(f.mode); !ok {
			return usageError{fmt.Errorf("unknown mode %q: use standard, plan, auto or auto-with-judge", f.mode)}
		}
	}
	// Checked here, not when the bridge starts: without browser_use.yaml
	// (or with --no-bridge) no bridge starts, and the typo went unnoticed.
	if cmd.Flags().Changed("port") && (f.port < 0 || f.port > 65535) {
		return usageError{fmt.Errorf("--port %d: use a number from 1 to 65535, or 0 for a free port", f.port)}
	}

	prompt := strings.Join(args, " ")
	approvalsIn := stdin
	if len(args) == 1 && args[0] == "-" {
		if prompt, err = readPrompt(ctx, stdin); err != nil {
			return err
		}
		approvalsIn = nil
	}
	switch {
	case strings.TrimSpace(prompt) == "":
		return exitError{exitUsage, errors.New("the prompt is empty: give it as arguments, or - to read it from stdin (`infer headless --help` shows the options)")}
	case session.IsNewSessionCommand(prompt):
		return usageError{fmt.Errorf("%q starts a new conversation and runs nothing; every headless run without --session-id already starts one", strings.TrimSpace(prompt))}
	}

	level := slog.LevelError
	if f.verbose {
		level = slog.LevelDebug
	}
	log, err := newLogger(stderr, "text", level)
	if err != nil {
		return err
	}
	home, wd, err := dirs(cmd.Context())
	if err != nil {
		return err
	}
	a, err := openHeadlessApp(home, wd, f, cmd.Flags().Changed("port"), log, stderr)
	if err != nil {
		return err
	}
	defer a.Close()

	if a.Seat != nil {
		// The bridge gets a context of its own, so SIGINT stops the run,
		// not the connection the extension is watching it on.
		serveCtx, stopServe := context.WithCancel(context.Background())
		served := make(chan struct{})
		go func() {
			defer close(served)
			if err := a.Serve(serveCtx); err != nil {
				log.Error("browser bridge stopped", "err", err)
			}
		}()
		defer func() { stopServe(); <-served }()
		if h, ok := a.Seat.Holder(); ok {
			log.Info("using the browser of another infer", "holder", seat.Describe(h))
		} else if a.Seat.Holding() {
			log.Info("browser bridge listening", "url", a.Seat.URL())
		}
	}

	sub := a.Workspace.Subscribe()
	defer sub.Close()

	if f.cont {
		id, err := latestConversation(a.Store)
		switch {
		case errors.Is(err, errNothingToContinue):
			return exitError{exitUsage, fmt.Errorf("--continue: %w (%s); run without it to start one", err, a.Root)}
		case err != nil:
			return fmt.Errorf("--continue: %w", err)
		}
		f.sessionID = id
	}
	var snap *session.Snapshot
	if f.sessionID != "" {
		// A unique prefix names a conversation here as it does for
		// `infer conversations`. An id nothing starts with goes on to
		// Resume, whose error says it is not stored.
		var none noConversationError
		var usage usageError
		switch id, err := resolveConversation(a.Store, f.sessionID); {
		case err == nil:
			f.sessionID = id
		case errors.As(err, &usage):
			return exitError{exitUsage, fmt.Errorf("--session-id: %w", err)}
		case !errors.As(err, &none):
			return fmt.Errorf("--session-id: %w", err) // the store could not be read
		}
		s, err := a.Workspace.Resume(f.sessionID)
		if errors.Is(err, session.ErrUnknownConversation) {
			return exitError{exitUsage, fmt.Errorf("no stored conversation in %s has the id %q; check the id (the run_started line of --output json carries it)", a.Root, f.sessionID)}
		}
		if err != nil {
			return fmt.Errorf("resuming conversation %s: %w", f.sessionID, err)
		}
		snap = &s
		if s.HeldBy != "" {
			// Another process runs that conversation's turns; the prompt
			// goes to a new conversation rather than nowhere, and the
			// output does not claim to continue the old one.
			fmt.Fprintf(stderr, "infer: conversation %s is open in %s; this run continues in a new conversation\n", f.sessionID, s.HeldBy)
			a.Workspace.NewSession()
			snap = nil
		}
	}

	out := bufio.NewWriter(stdout)
	var r renderer
	switch format {
	case outputText:
		r = newItemRenderer(newTextOutput(out, stderr, f.showReasoning))
	case outputJSON:
		r = newItemRenderer(newJSONOutput(out, a.Workspace.Model(), string(a.Workspace.Mode()), snap != nil))
	default:
		r = newAGUIOutput(out)
	}
	h := &headlessRun{ws: a.Workspace, sub: sub, r: r, out: out, errOut: stderr, prompt: prompt, log: log}
	h.desk = newApprovalDesk(a.Workspace, approvalsIn, format == outputText, stderr, h)
	defer h.desk.close()
	log.Debug("headless run", "project", a.Root, "model", a.Workspace.Model(), "mode", a.Workspace.Mode(), "output", format)
	if snap != nil {
		h.check(r.resumed(*snap))
	}
	if err := h.run(ctx); err != nil {
		return err
	}
	if a.Seat != nil && a.Seat.Misses() > 0 {
		// The run finished, but without what it was asked to do in the
		// browser: a script must not take that for success.
		return exitError{exitNoBrowser, errors.New("a browser call failed because no browser extension was connected; connect the extension (`infer pair` shows the steps) and run again")}
	}
	return nil
}

// exitNoBrowser is the exit code of a run that finished although a
// browser call in it found no browser extension connected, even after
// waiting for one (docs/headless.md).
const exitNoBrowser = 3

// readPrompt reads all of stdin, giving up when ctx ends (Ctrl+C while
// the person is still typing).
func readPrompt(ctx context.Context, in io.Reader) (string, error) {
	type result struct {
		b   []byte
		err error
	}
	got := make(chan result, 1)
	// The reader is stopped only by stdin ending; when ctx ends first it
	// lives until the process exits, which follows at once.
	go func() {
		b, err := io.ReadAll(io.LimitReader(in, maxStdinPrompt+1))
		got <- result{b, err}
	}()
	select {
	case <-ctx.Done():
		return "", exitError{exitInterrupted, errors.New("interrupted while reading the prompt from stdin")}
	case r := <-got:
		if r.err != nil {
			return "", fmt.Errorf("reading the prompt from stdin: %w", r.err)
		}
		if len(r.b) > maxStdinPrompt {
			return "", usageError{fmt.Errorf("the prompt on stdin is larger than %d MiB", maxStdinPrompt>>20)}
		}
		return string(r.b), nil
	}
}

// openHeadlessApp opens the workspace for one run. The browser is there
// when browser_use.yaml exists (openApp then honours its enabled flag):
// this run holds the bridge, or uses the browser of the infer that does.
func openHeadlessApp(home, wd string, f headlessFlags, portSet bool, log *slog.Logger, warn io.Writer) (*assemble.Infer, error) {
	opts := appOptions{Model: f.model, Mode: f.mode, Port: f.port, PortSet: portSet, Log: log, Warn: warn}
	if f.noBridge {
		opts.NoBridgeWhy = "this run was started with --no-bridge; run it without that flag, with infer's extension connected, to use the browser."
	} else {
		// No file means the bridge was never set up: nothing to warn about.
		if _, err := os.Stat(config.BrowserUsePath(home)); err == nil {
			opts.Bridge = true
		}
	}
	opts.Command = "infer headless"
	return openApp(home, wd, opts)
}

// headlessRun follows the workspace's events for one turn: the one started
// by our message. Events of other turns (a connected panel may queue its
// own messages) and other conversations are ignored.
type headlessRun struct {
	ws     *session.Workspace
	sub    *session.Subscription
	r      renderer
	out    *bufio.Writer
	errOut io.Writer
	desk   *approvalDesk
	prompt string
	log    *slog.Logger

	started     bool   // our message entered the conversation
	conv        string // its conversation
	turnBusy    bool   // a turn is running that has not shown whose it is
	notices     []string
	ended       bool // our terminal chat event was seen
	done        bool // our turn is over
	end         runEnd
	beforeStart string // why the turn ended before RUN_STARTED

	interrupted bool // SIGINT (or a failed output) asked the run to stop
	outErr      error

	browserReason string // the last browser status reason shown
}

// check records the first output failure and stops the run: nobody can
// see it any more.
func (h *headlessRun) check(err error) {
	if err == nil || h.outErr != nil {
		return
	}
	h.outErr = err
	h.interrupted = true
	h.ws.Interrupt()
}

func (h *headlessRun) run(ctx context.Context) error {
	if err := h.ws.Send(h.prompt, tools.OriginHeadless); err != nil {
		return fmt.Errorf("sending the prompt: %w", err)
	}
	signalled := false
	stop := ctx.Done()
	for !h.done {
		for _, ev := range h.sub.Drain() {
			h.handle(ev)
			if h.done {
				break
			}
		}
		if err := h.out.Flush(); err != nil {
			h.check(err)
		}
		if h.done {
			break
		}
		select {
		case <-h.sub.Ready():
		case <-stop:
			stop = nil
			signalled, h.interrupted = true, true
			h.ws.Interrupt()
		case l, ok := <-h.desk.lines():
			h.desk.line(l, ok)
		}
	}
	h.check(h.r.end())
	h.check(h.out.Flush())
	h.log.Info("run ended", "conversation", h.conv, "finished", h.end.Finished)

	switch {
	case h.outErr != nil:
		return fmt.Errorf("writing the output: %w", h.outErr)
	case signalled:
		return exitError{exitInterrupted, errors.New("interrupted")}
	case h.beforeStart != "":
		return fmt.Errorf("the run did not start: %s", h.beforeStart)
	case !h.end.seen:
		return errors.New("the end of the run was not seen: the output fell too far behind and events were lost")
	case h.end.Finished:
		return nil
	case h.end.Code == "interrupted":
		return exitError{exitInterrupted, errors.New("the run was interrupted (from the browser panel)")}
	}
	msg := "the run failed: " + h.end.Message
	if h.end.Code != "" {
		msg += " (" + h.end.Code + ")"
	}
	return errors.New(msg)
}

func (h *headlessRun) handle(ev session.Event) {
	switch ev := ev.(type) {
	case session.BusyChanged:
		switch {
		case ev.Busy:
			if !h.started {
				h.turnBusy, h.notices = true, nil
			}
		case h.started:
			h.done = true
		case h.turnBusy && len(h.notices) > 0:
			// A turn that published only notices was ours failing before
			// it could record the message (another front end's message
			// would have shown up as its user message).
			h.beforeStart = strings.Join(h.notices, "; ")
			h.check(h.r.failedBeforeStart(h.beforeStart))
			h.done = true
		default:
			h.turnBusy = false
		}
	case session.OutsideCall:
		if ev.Done { // an MCP client's call through this infer: not the run's output
			h.log.Info("outside call", "line", ev.Line())
		}
	case session.TranscriptChanged:
		h.change(ev.Change)
	case session.UsageReported:
		if h.ours(ev.Conversation) {
			h.check(h.r.usage(ev.Usage))
		}
	case session.ApprovalOpened:
		// Before our turn starts, a request can only be the panel's own.
		if h.started {
			h.desk.opened(ev.Approval)
		}
	case session.ApprovalResolved:
		h.desk.resolved(ev.Approval)
	case session.BrowserStatusChanged:
		// Said while a browser call waits for the extension, once per
		// reason: that it waits, and why there is none yet (whose browser
		// this is, a stranger on the port). A run that never asks for the
		// browser is not told about it.
		if r := ev.Status.Reason; ev.Status.State != browser.Connected && seat.Waiting(r) && r != h.browserReason {
			fmt.Fprintln(h.errOut, "infer: browser:", r)
			h.browserReason = r
		}
	case session.Resync:
		fmt.Fprintln(h.errOut, "infer: warning: the output fell too far behind the run and some events were lost")
		if h.started && !h.ws.Busy() {
			h.done = true
		}
	}
}

// change follows one change of a transcript: our message starts the run
// (the person's message is no part of the output), and every later change
// of its conversation goes to the renderer until the run ends.
func (h *headlessRun) change(c transcript.Change) {
	if it := c.Item; c.Op == transcript.ItemDone && it.Kind == transcript.Notice && c.Run == "" {
		if !h.started && h.turnBusy {
			h.notices = append(h.notices, it.Text)
		}
		h.log.Info("workspace notice", "text", it.Text, "warn", it.Level == transcript.Warn)
		return // the person's notices, not the run's output
	}
	if it := c.Item; c.Op == transcript.ItemDone && it.Kind == transcript.User {
		if !h.started && it.Origin == tools.OriginHeadless && it.Text == h.prompt {
			h.started, h.conv = true, c.Conversation
			if h.interrupted {
				h.ws.Interrupt() // SIGINT came while the message was queued
			}
		}
		return
	}
	if !h.ours(c.Conversation) || h.ended {
		return
	}
	if c.Op == transcript.RunEnded {
		h.ended, h.end = true, runEndOf(c)
	}
	h.check(h.r.change(c))
}

// ours reports whether an event of conversation conv belongs to this run.
func (h *headlessRun) ours(conv string) bool { return h.started && conv == h.conv }

// stdinLine is one line of stdin, or its end.
type stdinLine struct {
	text string
	err  error
}

// approvalDesk answers approval requests from stdin. It reads stdin only
// once a request opens, so a run that needs no approval never touches it
// (an interactive terminal is not left waiting for input nobody asked
// for).
//
// Its reader goroutine ends at the end of stdin, or at its next line after
// close; a read blocked on a terminal can only be ended by the process
// exiting, which follows the run at once.
type approvalDesk struct {
	ws       *session.Workspace
	in       io.Reader // nil when the prompt was read from stdin
	textMode bool
	errOut   io.Writer
	run      *headlessRun

	ch      chan stdinLine // nil until the reader starts, and after EOF
	stop    chan struct{}
	eof     bool
	pending []string // requests stdin may answer, oldest first
	shown   map[string]bool
}

func newApprovalDesk(ws *session.Workspace, in io.Reader, textMode bool, errOut io.Writer, run *headlessRun) *approvalDesk {
	return &approvalDesk{ws: ws, in: in, textMode: textMode, errOut: errOut, run: run, stop: make(chan struct{}), shown: map[string]bool{}}
}

// lines is the channel of stdin lines; nil (never ready) until needed.
func (d *approvalDesk) lines() <-chan stdinLine { return d.ch }

func (d *approvalDesk) close() { close(d.stop) }

func (d *approvalDesk) startReading() {
	if d.ch != nil || d.eof {
		return
	}
	ch := make(chan stdinLine)
	d.ch = ch
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(d.in)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case ch <- stdinLine{text: sc.Text()}:
			case <-d.stop:
				return
			}
		}
		if err := sc.Err(); err != nil {
			select {
			case ch <- stdinLine{err: err}:
			case <-d.stop:
			}
		}
	}()
}

// noStdinReason is what the model and the person read when an approval
// could not be asked for because stdin carried the prompt.
const noStdinReason = "approvals cannot be answered in this run: its prompt was read from stdin (-); pass the prompt as arguments to answer on stdin, or use --mode auto"

func (d *approvalDesk) opened(a session.Approval) {
	// The panel's own tool requests are the panel's to answer.
	ours := a.Call.Origin != tools.OriginPanel
	answerable := ours && d.in != nil && !d.eof
	d.shown[a.ID] = true
	d.run.check(d.run.r.approvalOpened(a, answerable))
	switch {
	case !ours:
	case d.in == nil:
		d.ws.Answer(a.ID, tools.Decision{Kind: tools.Deny, Reason: noStdinReason}, tools.OriginHeadless)
	case d.eof:
		d.ws.Answer(a.ID, tools.Decision{Kind: tools.Deny, Reason: "stdin closed"}, tools.OriginHeadless)
	default:
		d.pending = append(d.pending, a.ID)
		d.startReading()
	}
}

func (d *approvalDesk) resolved(a session.Approval) {
	d.drop(a.ID)
	if d.shown[a.ID] {
		delete(d.shown, a.ID)
		d.run.check(d.run.r.approvalResolved(a))
	}
}

func (d *approvalDesk) drop(id string) {
	for i, p := range d.pending {
		if p == id {
			d.pending = append(d.pending[:i:i], d.pending[i+1:]...)
			return
		}
	}
}

// approvalResponse is the stdin line that answers a request; it is the
// bridge's approval_response frame.
type approvalResponse struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
	Action    string `json:"action"`
}

// line handles one line of stdin; ok false means stdin ended.
func (d *approvalDesk) line(l stdinLine, ok bool) {
	if !ok || l.err != nil {
		if l.err != nil {
			fmt.Fprintf(d.errOut, "infer: reading stdin: %v; treating it as closed\n", l.err)
		}
		d.ch, d.eof = nil, true
		for _, id := range append([]string(nil), d.pending...) {
			d.ws.Answer(id, tools.Decision{Kind: tools.Deny, Reason: "stdin closed"}, tools.OriginHeadless)
		}
		return
	}
	text := strings.TrimSpace(l.text)
	if text == "" {
		return
	}
	if d.textMode && !strings.HasPrefix(text, "{") {
		switch strings.ToLower(text) {
		case "y", "yes":
			d.answerOldest(tools.Decision{Kind: tools.AllowOnce})
			return
		case "n", "no":
			d.answerOldest(tools.Decision{Kind: tools.Deny, Reason: "rejected on stdin"})
			return
		}
	}
	var resp approvalResponse
	if err := json.Unmarshal([]byte(text), &resp); err != nil || resp.Type != "approval_response" {
		hint := `{"type":"approval_response","request_id":"…","action":"approve"}`
		if d.textMode {
			hint = `"y", "n" or ` + hint
		}
		fmt.Fprintf(d.errOut, "infer: ignored a line on stdin that is not an approval answer (expected %s): %s\n", hint, shorten(text, 80))
		return
	}
	decision := tools.Decision{Kind: tools.AllowOnce}
	if resp.Action != "approve" {
		decision = tools.Decision{Kind: tools.Deny, Reason: "rejected on stdin"}
		if resp.Action != "reject" {
			decision.Reason = fmt.Sprintf("rejected on stdin (the action %q is not approve, so it counts as reject)", resp.Action)
		}
	}
	if !d.ws.Answer(resp.RequestID, decision, tools.OriginHeadless) {
		fmt.Fprintf(d.errOut, "infer: no approval request %q is pending (unknown, or already answered); ignored\n", resp.RequestID)
	}
}

func (d *approvalDesk) answerOldest(decision tools.Decision) {
	for _, id := range d.pending {
		if d.ws.Answer(id, decision, tools.OriginHeadless) {
			return
		}
	}
	fmt.Fprintln(d.errOut, "infer: no approval request is pending; ignored the answer")
}
